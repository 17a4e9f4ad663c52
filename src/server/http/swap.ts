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
import { SwapError, type SwapProblem, type SwapService } from '../domain/swaps.ts';
import type { AccountOwners } from './account-owner.ts';
import type { ApiEnv } from './context.ts';
import { ApiError } from './errors.ts';
import { DomainError } from '../domain/errors.ts';
import { amount, currency, idempotencyKey, UUID } from './fields.ts';
import { jsonInput } from './json-input.ts';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

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

const REFUSALS: Record<SwapProblem, [ContentfulStatusCode, string]> = {
  UNSUPPORTED_PAIR: [400, 'SWAP_UNSUPPORTED_PAIR'],
  AMOUNT_TOO_SMALL: [400, 'SWAP_AMOUNT_TOO_SMALL'],
  MIN_LIMIT: [400, 'SWAP_MIN_LIMIT'],
  MAX_LIMIT: [400, 'SWAP_MAX_LIMIT'],
  NOT_ENOUGH: [400, 'SWAP_NOT_ENOUGH'],
  QUOTE_MISMATCH: [400, 'SWAP_QUOTE_MISMATCH'],
  NO_PRICE: [503, 'SWAP_NO_PRICE'],
  QUOTE_NOT_FOUND: [404, 'SWAP_QUOTE_NOT_FOUND'],
  ORDER_NOT_FOUND: [404, 'SWAP_ORDER_NOT_FOUND'],
  QUOTE_EXPIRED: [410, 'SWAP_QUOTE_EXPIRED'],
  ORDER_EXPIRED: [410, 'SWAP_ORDER_EXPIRED'],
  QUOTE_USED: [409, 'SWAP_QUOTE_USED'],
  ORDER_CANCELLED: [409, 'SWAP_ORDER_CANCELLED'],
  ORDER_CLOSED: [409, 'SWAP_ORDER_CLOSED'],
  KEY_REUSED: [422, 'IDEMPOTENCY_KEY_REUSED'],
};

function refusal(error: unknown): never {
  if (error instanceof SwapError) {
    const [status, code] = REFUSALS[error.problem];
    throw new ApiError(status, code, error.message, { cause: error });
  }
  throw error;
}

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
    return c.json(await swaps.limit(source, destination).catch(refusal));
  });

  app.post('/:account/exchange/pre-calculate', account, jsonInput(preCalculateBody), async (c) => {
    return c.json(await swaps.preCalculate(c.req.param('account'), c.req.valid('json')).catch(refusal));
  });

  app.post('/:account/exchange', account, jsonInput(orderBody, { idempotencyKey: true }), async (c) => {
    const body = c.req.valid('json');
    const order = await swaps
      .createOrder(c.req.param('account'), { quoteId: body.quoteId, sourceAmount: body.sourceAmount, idempotencyKey: body.idempotencyKey, sourceCurrency: body.sourceCurrency, destinationCurrency: body.destinationCurrency })
      .catch(refusal);
    return c.json(order);
  });

  app.post('/:account/exchange/confirm/:id', account, async (c) => {
    const id = orderId(c.req.param('id'));
    // Before anything moves, outside the confirmation's transaction (its tries are counted on their own).
    await guardPincode(pool, c.get('principal').userId, c.req.header('pincode'));
    return c.json(await swaps.confirm(c.req.param('account'), id).catch(refusal));
  });

  app.post('/:account/exchange/cancel/:id', account, async (c) => {
    const id = orderId(c.req.param('id'));
    return c.json(await swaps.cancel(c.req.param('account'), id).catch(refusal));
  });

  app.get('/:account/exchange/:id', account, async (c) => {
    const id = orderId(c.req.param('id'));
    return c.json(await swaps.order(c.req.param('account'), id).catch(refusal));
  });

  return app;
}
