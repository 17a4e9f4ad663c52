/**
 * The proof of reserves (domain/reserves.ts; README "Proof of reserves"):
 * GET /api/reserves        public, cacheable: the newest published proof as signed; 404 NO_RESERVES_PROOF before the first.
 * GET /api/reserves/mine   signed in: the caller's nonce, leaf, balances and path to the root of that proof (no-store);
 *                          404 NOT_IN_RESERVES_PROOF when they signed up after it.
 */
import { Hono } from 'hono';
import type pg from 'pg';
import { latestReserves, reserveLeafOf } from '../domain/reserves.ts';
import { requireAuth, type AccessTokenVerifier } from './auth-middleware.ts';
import type { ApiEnv } from './context.ts';
import { DomainError } from '../domain/errors.ts';

export function createReservesApi(deps: { pool: pg.Pool; auth: AccessTokenVerifier }): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  app.get('/reserves', async (c) => {
    const proof = await latestReserves(deps.pool);
    if (!proof) throw new DomainError('NO_RESERVES_PROOF', 'No proof of reserves has been published yet');
    c.header('Cache-Control', 'public, max-age=300');
    c.header('Access-Control-Allow-Origin', '*');
    return c.json(proof);
  });
  app.get('/reserves/mine', requireAuth(deps.auth), async (c) => {
    const leaf = await reserveLeafOf(deps.pool, c.get('principal').userId);
    c.header('Cache-Control', 'no-store');
    if (!leaf) throw new DomainError('NOT_IN_RESERVES_PROOF', 'You are not in the latest proof of reserves: it was made before you signed up');
    return c.json(leaf);
  });
  return app;
}
