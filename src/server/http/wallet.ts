/**
 * The wallet account area (SPEC §7 Wallet): assets, account currencies and history of `{account}`. Every route
 * needs a bearer token, and only the account's owner may use it: anyone else gets 403 FORBIDDEN, whether the
 * account exists or not, so ids cannot be probed.
 */
import { Hono } from 'hono';
import type pg from 'pg';
import { z } from 'zod';
import type { Custody } from '../custody.ts';
import { addAssets, archiveAsset } from '../domain/assets.ts';
import { DomainError } from '../domain/errors.ts';
import { findTransaction, historyWithBalance, TRANSACTION_TYPES } from '../domain/history.ts';
import { checkExportLink, exportLinkQuery, historyCsv, type ExportQuery } from '../domain/history-export.ts';
import type { SecretsKey } from '../adapters/keys/port.ts';
import type { AccountOwners } from './account-owner.ts';
import { assetListHeaders } from './balances-hot-path.ts';
import type { ApiEnv } from './context.ts';
import { accountInBody, currency, UUID } from './fields.ts';
import { jsonInput } from './json-input.ts';
const addBody = z.object({ currency });
const addListBody = z.object({ currencies: z.array(currency).min(1, 'Name at least one currency').max(50) });
const historyBody = z.object({
  account: accountInBody,
  currency: currency.optional(),
  sort: z.enum(['DESC', 'ASC']).default('DESC'),
  properties: z.array(z.literal('createdDate', { error: 'Only createdDate can be sorted by' })).max(1).default(['createdDate']),
  pageSize: z.coerce.number().int().min(1).max(100).default(100),
  pageNumber: z.coerce.number().int().min(1).max(100_000).default(1),
});
const exportBody = z.object({ currency: currency.optional(), from: z.string().max(10), to: z.string().max(10) });
const exportQuery = z.object({ currency: currency.optional(), from: z.string().max(10), to: z.string().max(10), expires: z.string().max(20).optional(), signature: z.string().max(200).optional() });
const detailQuery = z.object({ type: z.enum(TRANSACTION_TYPES, { error: `type must be one of ${TRANSACTION_TYPES.join(', ')}` }).optional() });

export function createWalletApi(deps: { pool: pg.Pool; custody: Custody; owners: AccountOwners; secrets: Pick<SecretsKey, 'keyedHash'> }): Hono<ApiEnv> {
  const { pool, custody } = deps;
  const { catalogue } = custody;
  const app = new Hono<ApiEnv>();
  const account = deps.owners.route;

  const assets = (account: string) => custody.assets.fresh(account);

  // Answered from memory before this stack when it can be (balances-hot-path.ts), with the same headers.
  app.get('/:account/asset', account, async (c) => {
    const json = await custody.assets.json(c.req.param('account'));
    return c.body(json, 200, assetListHeaders(json));
  });

  app.post('/:account/account/currency', account, jsonInput(addBody), async (c) => {
    const id = c.req.param('account');
    await addAssets(pool, id, [c.req.valid('json').currency], catalogue, custody);
    return c.json(await assets(id));
  });

  app.post('/:account/account/currency/list', account, jsonInput(addListBody), async (c) => {
    const id = c.req.param('account');
    await addAssets(pool, id, [...new Set(c.req.valid('json').currencies)], catalogue, custody);
    return c.json(await assets(id));
  });

  app.delete('/:account/account/currency/:currency', account, async (c) => {
    const code = currency.parse(c.req.param('currency'));
    const id = c.req.param('account');
    await archiveAsset(pool, id, code);
    return c.json(await assets(id));
  });

  app.post('/:account/asset/transactions', account, jsonInput(historyBody, { account: 'path' }), async (c) => {
    const body = c.req.valid('json');
    if (body.currency !== undefined && !catalogue.coins.some((coin) => coin.currency === body.currency)) {
      throw new DomainError('UNKNOWN_CURRENCY', `${body.currency} is not a currency this wallet offers`);
    }
    // With a currency, that currency's balance from the same snapshot comes along (the asset page shows both).
    const { result, balance } = await historyWithBalance(pool, c.req.param('account'), body, catalogue);
    return c.json({ result, pageNumber: body.pageNumber, pageSize: body.pageSize, ...(balance ? { balance } : {}) });
  });

  // The history as CSV (issue 36 item 4): the app asks for a link (owner only), the browser or Telegram opens it.
  app.post('/:account/asset/transactions/export', account, jsonInput(exportBody), async (c) => {
    const body = c.req.valid('json');
    const id = c.req.param('account');
    const query = exportLinkQuery(deps.secrets, { account: id, currency: body.currency, from: body.from, to: body.to });
    return c.json({ url: `/api/${id}/asset/transactions.csv?${query}` });
  });

  // No bearer token here: the link's signature names the account, the asset and the range, and runs out in 5 minutes.
  app.get('/:account/asset/transactions.csv', async (c) => {
    const id = c.req.param('account');
    // Without a link's signature this is no link of ours, whatever else it carries: refused like a forged one (403).
    const raw = c.req.query();
    if (!UUID.test(id) || !raw['signature'] || !raw['expires']) throw new DomainError('EXPORT_LINK_INVALID', 'This export link is not valid');
    const input = exportQuery.parse(raw);
    const query: ExportQuery = { account: id, currency: input.currency, from: input.from, to: input.to };
    checkExportLink(deps.secrets, query, input.expires, input.signature);
    const rows = historyCsv(pool, query);
    // The header line is read before answering, so a bad range is a 400, not a broken download.
    const first = await rows.next();
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (!first.done) controller.enqueue(encoder.encode(first.value));
      },
      async pull(controller) {
        const next = await rows.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      },
      async cancel() {
        await rows.return(undefined);
      },
    });
    const name = `history-${input.currency ?? 'all'}-${input.from}-${input.to}.csv`;
    return new Response(body, { headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${name}"`, 'cache-control': 'no-store' } });
  });

  app.get('/:account/asset/transaction/:id', account, async (c) => {
    const { type } = detailQuery.parse(c.req.query());
    const id = c.req.param('id');
    const found = UUID.test(id) ? await findTransaction(pool, c.req.param('account'), id, type, catalogue) : undefined;
    if (!found) throw new DomainError('TRANSACTION_NOT_FOUND', 'No such transaction in this account');
    return c.json(found);
  });

  return app;
}
