/**
 * The sell area (SPEC §7 Sell): card lookup, saved cards, limits, rate and orders under /api/c2f, and the payout
 * provider's signed webhook at /api/webhooks/payout. Account routes are for the account's owner only. A card number
 * arrives in one body (order/byCard), goes to the provider's tokeniser and is never logged, stored or echoed.
 */
import { Hono, type Context } from 'hono';
import type pg from 'pg';
import { z } from 'zod';
import type { PayoutProvider } from '../adapters/payout/port.ts';
import type { SellDesk } from '../domain/sell/desk.ts';
import { guardPincode } from '../domain/pincode.ts';
import { requireAuth, type AccessTokenVerifier } from './auth-middleware.ts';
import type { AccountOwners } from './account-owner.ts';
import type { ApiEnv } from './context.ts';
import { DomainError } from '../domain/errors.ts';
import { currency, decimalAmount, idempotencyKey, UUID } from './fields.ts';
import { jsonInput } from './json-input.ts';
import { signedWebhookBody } from './signed-webhook.ts';
import type { Logger } from '../log.ts';

const fiatAmount = decimalAmount('fiatAmount is required', /^\d{1,12}(?:\.\d{1,2})?$/, 'fiatAmount is an amount in roubles with at most 2 decimals');
const orderBase = {
  currency,
  fiatCurrency: currency,
  fixedRateId: z.string({ error: 'fixedRateId is required' }).regex(UUID, 'fixedRateId is a rate id from the rate call'),
  fiatAmount,
  idempotencyKey,
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

export function createSellApi(deps: { pool: pg.Pool; desk: SellDesk; provider: PayoutProvider | undefined; auth: AccessTokenVerifier; owners: AccountOwners; log: Logger }): Hono<ApiEnv> {
  const { pool, desk } = deps;
  const app = new Hono<ApiEnv>();
  const auth = requireAuth(deps.auth);
  const account = deps.owners.route;

  app.get('/c2f/bin/:bin', auth, async (c) => {
    const bin = c.req.param('bin');
    if (!/^\d{6}$/.test(bin)) throw new DomainError('VALIDATION', 'bin: the first 6 digits of a card number');
    return c.json(await desk.lookupBin(bin));
  });

  app.get('/c2f/:account/cards/:fiatCurrency', account, async (c) => c.json(await desk.savedCards(c.req.param('account'), c.req.param('fiatCurrency'))));

  app.get('/c2f/:account/limit/:fiatCurrency', account, (c) => c.json(desk.limits(c.req.param('fiatCurrency'))));

  app.post('/c2f/:account/rate/:fiatCurrency/:currency', account, async (c) =>
    c.json(await desk.quote(c.req.param('account'), c.req.param('fiatCurrency'), c.req.param('currency'))),
  );

  // A sale sends crypto out of the wallet like a withdrawal: with the passcode on, the pincode header must carry it
  // (SPEC §6). Checked before anything moves, outside the order's transaction (its tries are counted on their own).
  const passcode = (c: Context<ApiEnv>) => guardPincode(pool, c.get('principal').userId, c.req.header('pincode') || undefined);

  app.post('/c2f/:account/order/byCard', account, jsonInput(byCardBody, { idempotencyKey: true }), async (c) => {
    await passcode(c);
    return c.json(await desk.orderByCard(c.req.param('account'), c.req.valid('json')));
  });

  app.post('/c2f/:account/order/bySavedCard', account, jsonInput(bySavedCardBody, { idempotencyKey: true }), async (c) => {
    await passcode(c);
    return c.json(await desk.orderBySavedCard(c.req.param('account'), c.req.valid('json')));
  });

  app.get('/c2f/:account/order/:id', account, async (c) => {
    const id = c.req.param('id');
    if (!UUID.test(id)) throw new DomainError('C2F_ORDER_NOT_FOUND', 'No such order in this account');
    return c.json(await desk.findOrder(c.req.param('account'), id));
  });

  // The payout provider's report: public, but only a body signed with the shared secret is believed.
  app.post('/webhooks/payout', async (c) => {
    const report = await signedWebhookBody(c, deps.provider, 'payout', webhookBody);
    const outcome = await desk.applyPayoutReport(report);
    if (outcome === 'unknown') throw new DomainError('C2F_ORDER_NOT_FOUND', 'No order has this reference');
    if (outcome === 'conflict') throw new DomainError('C2F_PAYOUT_CONFLICT', 'The order already ended the other way');
    deps.log.info({ reference: report.reference, status: report.status, outcome }, 'payout report');
    return c.json({ received: true, outcome });
  });

  return app;
}
