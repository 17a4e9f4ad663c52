/**
 * The one guard of the `/{account}/…` routes: a bearer token whose user owns the account, else 403 FORBIDDEN,
 * whether the account exists or not, so ids cannot be probed. The owner comes from the domain (accounts.ts).
 */
import type { MiddlewareHandler } from 'hono';
import type pg from 'pg';
import { ownerOf } from '../domain/accounts.ts';
import { DomainError } from '../domain/errors.ts';
import { requireAuth, type AccessTokenVerifier } from './auth-middleware.ts';
import type { ApiEnv } from './context.ts';
import { UUID } from './fields.ts';

const CACHE_LIMIT = 50_000;

export type AccountOwners = {
  /** Throws 403 FORBIDDEN unless `userId` owns `account`. */
  ensure: (account: string, userId: string) => Promise<void>;
  /** True when memory already knows `userId` owns `account`; false means "not known here", not "not the owner". */
  known: (account: string, userId: string) => boolean;
  /** The guard of an account route: signed in, and the owner of the path's `:account`. */
  route: MiddlewareHandler<ApiEnv>;
};

export function createAccountOwners(deps: { pool: pg.Pool; auth: AccessTokenVerifier }): AccountOwners {
  // An account never changes owner: a confirmed pair is kept for the process's life.
  const owners = new Map<string, string>();
  const ensure = async (account: string, userId: string) => {
    let known = owners.get(account);
    if (known === undefined && UUID.test(account)) {
      known = await ownerOf(deps.pool, account);
      if (known) {
        if (owners.size >= CACHE_LIMIT) owners.clear();
        owners.set(account, known);
      }
    }
    if (known !== userId) throw new DomainError('FORBIDDEN', 'This account is not yours');
  };
  const auth = requireAuth(deps.auth);
  const route: MiddlewareHandler<ApiEnv> = (c, next) =>
    auth(c, async () => {
      await ensure(c.req.param('account') ?? '', c.get('principal').userId);
      await next();
    });
  return { ensure, known: (account, userId) => owners.get(account) === userId, route };
}
