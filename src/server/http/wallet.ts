/**
 * The wallet account area (SPEC §7 Wallet): assets, account currencies and history of `{account}`. Every route
 * needs a bearer token, and only the account's owner may use it: anyone else gets 403 FORBIDDEN, whether the
 * account exists or not, so ids cannot be probed.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import type pg from 'pg';
import { z } from 'zod';
import type { Custody } from '../custody.ts';
import { addAssets, archiveAsset, AssetError } from '../domain/assets.ts';
import { findTransaction, listTransactions, TRANSACTION_TYPES } from '../domain/history.ts';
import { requireAuth, type AccessTokenVerifier } from './auth-middleware.ts';
import type { ApiEnv } from './context.ts';
import { ApiError } from './errors.ts';
import { readJsonBody } from './json-body.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const OWNER_CACHE_LIMIT = 50_000;

const currency = z.string({ error: 'The currency is required' }).trim().min(1).max(32).regex(/^[A-Z0-9_]+$/, 'A currency code is upper-case letters, digits and _');
const addBody = z.object({ currency });
const addListBody = z.object({ currencies: z.array(currency).min(1, 'Name at least one currency').max(50) });
const historyBody = z.object({
  account: z.string().optional(),
  currency: currency.optional(),
  sort: z.enum(['DESC', 'ASC']).default('DESC'),
  properties: z.array(z.literal('createdDate', { error: 'Only createdDate can be sorted by' })).max(1).default(['createdDate']),
  pageSize: z.coerce.number().int().min(1).max(100).default(100),
  pageNumber: z.coerce.number().int().min(1).max(100_000).default(1),
});
const detailQuery = z.object({ type: z.enum(TRANSACTION_TYPES, { error: `type must be one of ${TRANSACTION_TYPES.join(', ')}` }).optional() });

export function createWalletApi(deps: { pool: pg.Pool; custody: Custody; auth: AccessTokenVerifier }): Hono<ApiEnv> {
  const { pool, custody } = deps;
  const { catalogue, seed } = custody;
  const app = new Hono<ApiEnv>();
  // Per route, not app.use('*'): mounted at the root of /api, a wildcard would reach every other area too.
  const auth = requireAuth(deps.auth);

  // An account never changes owner, so a confirmed (account, owner) pair is kept for the process's life.
  const owners = new Map<string, string>();
  const owner: MiddlewareHandler<ApiEnv> = async (c, next) => {
    const account = c.req.param('account') ?? '';
    const { userId } = c.get('principal');
    let known = owners.get(account);
    if (known === undefined && UUID.test(account)) {
      const result = await pool.query<{ user_id: string }>({ name: 'wallet_account_owner', text: 'SELECT user_id FROM wallet_accounts WHERE id = $1', values: [account] });
      known = result.rows[0]?.user_id;
      if (known) {
        if (owners.size >= OWNER_CACHE_LIMIT) owners.clear();
        owners.set(account, known);
      }
    }
    if (known !== userId) throw new ApiError(403, 'FORBIDDEN', 'This account is not yours');
    await next();
  };

  const refusal = (error: unknown): never => {
    if (error instanceof AssetError && error.problem === 'UNKNOWN_CURRENCY') throw new ApiError(400, 'UNKNOWN_CURRENCY', error.message, { cause: error });
    if (error instanceof AssetError && error.problem === 'ASSET_NOT_FOUND') throw new ApiError(404, 'ASSET_NOT_FOUND', error.message, { cause: error });
    throw error;
  };

  const assets = (account: string) => custody.assets.fresh(account);

  app.get('/:account/asset', auth, owner, async (c) => c.body(await custody.assets.json(c.req.param('account')), 200, { 'content-type': 'application/json' }));

  app.post('/:account/account/currency', auth, owner, async (c) => {
    const body = addBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    const account = c.req.param('account');
    await addAssets(pool, account, [body.currency], catalogue, seed).catch(refusal);
    return c.json(await assets(account));
  });

  app.post('/:account/account/currency/list', auth, owner, async (c) => {
    const body = addListBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    const account = c.req.param('account');
    await addAssets(pool, account, [...new Set(body.currencies)], catalogue, seed).catch(refusal);
    return c.json(await assets(account));
  });

  app.delete('/:account/account/currency/:currency', auth, owner, async (c) => {
    const code = currency.parse(c.req.param('currency'));
    const account = c.req.param('account');
    await archiveAsset(pool, account, code).catch(refusal);
    return c.json(await assets(account));
  });

  app.post('/:account/asset/transactions', auth, owner, async (c) => {
    const body = historyBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    const account = c.req.param('account');
    if (body.account !== undefined && body.account !== account) throw new ApiError(400, 'VALIDATION', 'account: differs from the account in the path');
    if (body.currency !== undefined && !catalogue.coins.some((coin) => coin.currency === body.currency)) {
      throw new ApiError(400, 'UNKNOWN_CURRENCY', `${body.currency} is not a currency this wallet offers`);
    }
    const result = await listTransactions(pool, account, body, catalogue);
    return c.json({ result, pageNumber: body.pageNumber, pageSize: body.pageSize });
  });

  app.get('/:account/asset/transaction/:id', auth, owner, async (c) => {
    const { type } = detailQuery.parse(c.req.query());
    const id = c.req.param('id');
    const found = UUID.test(id) ? await findTransaction(pool, c.req.param('account'), id, type, catalogue) : undefined;
    if (!found) throw new ApiError(404, 'TRANSACTION_NOT_FOUND', 'No such transaction in this account');
    return c.json(found);
  });

  return app;
}
