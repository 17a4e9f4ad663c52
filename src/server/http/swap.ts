/**
 * The swap area (SPEC §7 Swap) under /api/{account}: pairs, limits, quotes, orders and their confirmation. Only
 * the account's owner may use it (403 FORBIDDEN otherwise); confirming asks for the passcode when it is on.
 *
 * GET  /{account}/currency-pair                              → [{ sourceCurrency, destinationCurrency }]
 * GET  /{account}/limit/{sourceCurrency}/{destinationCurrency} → { minLimit, maxLimit, currency } (source units)
 * POST /{account}/exchange/pre-calculate { sourceCurrency, destinationCurrency, sourceAmount | destinationAmount } → quote
 * POST /{account}/exchange { quoteId, sourceAmount, idempotencyKey }                                  → order (holds)
 * POST /{account}/exchange/confirm/{id} (header pincode when the passcode is on)                     → order (COMPLETED)
 * POST /{account}/exchange/cancel/{id}                                          → order (CANCELLED, hold released)
 * GET  /{account}/exchange/{id}                                                                       → order
 */
import { Hono } from 'hono';
import type pg from 'pg';
import { z } from 'zod';
import { guardPincode } from '../domain/pincode.ts';
import type { SwapService } from '../domain/swaps/requests.ts';
import type { AccountOwners } from './account-owner.ts';
import type { ApiEnv } from './context.ts';
import { DomainError } from '../domain/errors.ts';
import { amount, currency, idempotencyKey, UUID } from './fields.ts';
import { jsonInput } from './json-input.ts';

const preCalculateBody = z
  .object({ sourceCurrency: currency, destinationCurrency: currency, sourceAmount: amount.optional(), destinationAmount: amount.optional() })
  .refine((body) => (body.sourceAmount === undefined) !== (body.destinationAmount === undefined), 'Give either sourceAmount or destinationAmount');
const orderBody = z.object({
  quoteId: z.string({ error: 'quoteId is required: the quote the order accepts' }).regex(UUID, 'quoteId is a quote id'),
  sourceAmount: amount,
  idempotencyKey,
  sourceCurrency: currency.optional(),
  destinationCurrency: currency.optional(),
});

export function createSwapApi(deps: { pool: pg.Pool; swaps: SwapService; owners: AccountOwners }): Hono<ApiEnv> {
  const { pool, swaps } = deps;
  const app = new Hono<ApiEnv>();
  const account = deps.owners.route;
  const orderId = (id: string | undefined) => {
    if (!id || !UUID.test(id)) throw new DomainError('SWAP_ORDER_NOT_FOUND', 'No such swap order in this account');
    return id;
  };

  app.get('/:account/currency-pair', account, async (c) => c.json(await swaps.pairs()));

  app.get('/:account/limit/:sourceCurrency/:destinationCurrency', account, async (c) => {
    const source = currency.parse(c.req.param('sourceCurrency'));
    const destination = currency.parse(c.req.param('destinationCurrency'));
    return c.json(await swaps.limit(source, destination));
  });

  app.post('/:account/exchange/pre-calculate', account, jsonInput(preCalculateBody), async (c) => {
    return c.json(await swaps.preCalculate(c.req.param('account'), c.req.valid('json')));
  });

  app.post('/:account/exchange', account, jsonInput(orderBody, { idempotencyKey: true }), async (c) => {
    const body = c.req.valid('json');
    const order = await swaps
      .createOrder(c.req.param('account'), { quoteId: body.quoteId, sourceAmount: body.sourceAmount, idempotencyKey: body.idempotencyKey, sourceCurrency: body.sourceCurrency, destinationCurrency: body.destinationCurrency });
    return c.json(order);
  });

  app.post('/:account/exchange/confirm/:id', account, async (c) => {
    const id = orderId(c.req.param('id'));
    // Before anything moves, outside the confirmation's transaction (its tries are counted on their own).
    await guardPincode(pool, c.get('principal').userId, c.req.header('pincode'));
    return c.json(await swaps.confirm(c.req.param('account'), id));
  });

  app.post('/:account/exchange/cancel/:id', account, async (c) => {
    const id = orderId(c.req.param('id'));
    return c.json(await swaps.cancel(c.req.param('account'), id));
  });

  app.get('/:account/exchange/:id', account, async (c) => {
    const id = orderId(c.req.param('id'));
    return c.json(await swaps.order(c.req.param('account'), id));
  });

  return app;
}
