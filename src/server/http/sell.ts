/**
 * The sell area (SPEC §7 Sell): card lookup, saved cards, limits, rate and orders under /api/c2f, and the payout
 * provider's signed webhook at /api/webhooks/payout. Account routes are for the account's owner only. A card number
 * arrives in one body (order/byCard), goes to the provider's tokeniser and is never logged, stored or echoed.
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import type pg from 'pg';
import { z } from 'zod';
import { checkWebhookSignature, SIGNATURE_HEADER } from '../adapters/webhooks/signature.ts';
import type { PayoutProvider } from '../adapters/payout/port.ts';
import type { SellDesk } from '../domain/sell/desk.ts';
import { guardPincode } from '../domain/pincode.ts';
import { requireAuth, type AccessTokenVerifier } from './auth-middleware.ts';
import type { ApiEnv } from './context.ts';
import { ApiError } from './errors.ts';
import { readJsonBody } from './json-body.ts';
import type { Logger } from '../log.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const currency = z.string({ error: 'The currency is required' }).trim().min(1).max(32).regex(/^[A-Z0-9_]+$/, 'A currency code is upper-case letters, digits and _');
const fiatAmount = z
  .union([z.string(), z.number().nonnegative()], { error: 'fiatAmount is required' })
  .transform((value) => String(value).trim())
  .pipe(z.string().regex(/^\d{1,12}(?:\.\d{1,2})?$/, 'fiatAmount is an amount in roubles with at most 2 decimals'));
const idempotencyKey = z.string({ error: 'idempotencyKey is required' }).trim().min(8, 'idempotencyKey is at least 8 characters').max(100);
const orderBase = {
  currency,
  fiatCurrency: currency,
  fixedRateId: z.string({ error: 'fixedRateId is required' }).regex(UUID, 'fixedRateId is a rate id from the rate call'),
  fiatAmount,
  // Or the Idempotency-Key header (ARCHITECTURE.md: the body field or the header), checked by the same rule.
  idempotencyKey: idempotencyKey.optional(),
};
// The card number's own messages never repeat what was sent.
const byCardBody = z.object({
  ...orderBase,
  card: z.string({ error: 'card is required' }).regex(/^\d{16}$/, 'card: a card number has exactly 16 digits'),
  bankCode: z.string().max(32).optional(),
  bankSystem: z.string().max(32).optional(),
  saveCard: z.boolean().default(false),
});
const bySavedCardBody = z.object({ ...orderBase, cardId: z.string({ error: 'cardId is required' }).regex(UUID, 'cardId is a saved card id') });
const webhookBody = z.object({
  payoutId: z.string().min(1).max(100),
  reference: z.string().min(1).max(200),
  status: z.enum(['SUCCEEDED', 'FAILED']),
  reason: z.string().max(500).nullish(),
});

export function createSellApi(deps: { pool: pg.Pool; desk: SellDesk; provider: PayoutProvider | undefined; auth: AccessTokenVerifier; log: Logger }): Hono<ApiEnv> {
  const { pool, desk } = deps;
  const app = new Hono<ApiEnv>();
  const auth = requireAuth(deps.auth);

  const owner: MiddlewareHandler<ApiEnv> = async (c, next) => {
    const account = c.req.param('account') ?? '';
    const { userId } = c.get('principal');
    const found = UUID.test(account)
      ? await pool.query({ name: 'sell_account_owner', text: 'SELECT 1 FROM wallet_accounts WHERE id = $1 AND user_id = $2', values: [account, userId] })
      : undefined;
    if (!found?.rowCount) throw new ApiError(403, 'FORBIDDEN', 'This account is not yours');
    await next();
  };

  app.get('/c2f/bin/:bin', auth, async (c) => {
    const bin = c.req.param('bin');
    if (!/^\d{6}$/.test(bin)) throw new ApiError(400, 'VALIDATION', 'bin: the first 6 digits of a card number');
    return c.json(await desk.lookupBin(bin));
  });

  app.get('/c2f/:account/cards/:fiatCurrency', auth, owner, async (c) => c.json(await desk.savedCards(c.req.param('account'), c.req.param('fiatCurrency'))));

  app.get('/c2f/:account/limit/:fiatCurrency', auth, owner, (c) => c.json(desk.limits(c.req.param('fiatCurrency'))));

  app.post('/c2f/:account/rate/:fiatCurrency/:currency', auth, owner, async (c) =>
    c.json(await desk.quote(c.req.param('account'), c.req.param('fiatCurrency'), c.req.param('currency'))),
  );

  // A sale sends crypto out of the wallet like a withdrawal: with the passcode on, the pincode header must carry it
  // (SPEC §6). Checked before anything moves, outside the order's transaction (its tries are counted on their own).
  const passcode = (c: Context<ApiEnv>) => guardPincode(pool, c.get('principal').userId, c.req.header('pincode') || undefined);
  const keyOf = (c: Context<ApiEnv>, given: string | undefined) => z.object({ idempotencyKey }).parse({ idempotencyKey: given ?? c.req.header('idempotency-key') }).idempotencyKey;

  app.post('/c2f/:account/order/byCard', auth, owner, async (c) => {
    const parsed = byCardBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    const body = { ...parsed, idempotencyKey: keyOf(c, parsed.idempotencyKey) };
    await passcode(c);
    return c.json(await desk.orderByCard(c.req.param('account'), body));
  });

  app.post('/c2f/:account/order/bySavedCard', auth, owner, async (c) => {
    const parsed = bySavedCardBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    const body = { ...parsed, idempotencyKey: keyOf(c, parsed.idempotencyKey) };
    await passcode(c);
    return c.json(await desk.orderBySavedCard(c.req.param('account'), body));
  });

  app.get('/c2f/:account/order/:id', auth, owner, async (c) => {
    const id = c.req.param('id');
    if (!UUID.test(id)) throw new ApiError(404, 'C2F_ORDER_NOT_FOUND', 'No such order in this account');
    return c.json(await desk.findOrder(c.req.param('account'), id));
  });

  // The payout provider's report: public, but only a body signed with the shared secret is believed.
  app.post('/webhooks/payout', async (c) => {
    if (!deps.provider) throw new ApiError(404, 'NOT_FOUND', 'No payout provider is configured on this wallet');
    const raw = await c.req.text();
    const problem = checkWebhookSignature(deps.provider.webhookSecret, c.req.header(SIGNATURE_HEADER), raw, Math.floor(Date.now() / 1000));
    if (problem) throw new ApiError(401, 'WEBHOOK_SIGNATURE', `The webhook signature is not valid (${problem.toLowerCase()})`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new ApiError(400, 'VALIDATION', 'The request body is not valid JSON');
    }
    const report = webhookBody.parse(parsed);
    const outcome = await desk.applyPayoutReport(report);
    if (outcome === 'unknown') throw new ApiError(404, 'C2F_ORDER_NOT_FOUND', 'No order has this reference');
    if (outcome === 'conflict') throw new ApiError(409, 'C2F_PAYOUT_CONFLICT', 'The order already ended the other way');
    deps.log.info({ reference: report.reference, status: report.status, outcome }, 'payout report');
    return c.json({ received: true, outcome });
  });

  return app;
}
