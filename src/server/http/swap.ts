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
import { Hono, type MiddlewareHandler } from 'hono';
import type pg from 'pg';
import { z } from 'zod';
import { guardPincode } from '../domain/pincode.ts';
import type { SwapService } from '../domain/swaps/requests.ts';
import { requireAuth, type AccessTokenVerifier } from './auth-middleware.ts';
import type { ApiEnv } from './context.ts';
import { ApiError } from './errors.ts';
import { readJsonBody } from './json-body.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const currency = z.string({ error: 'The currency is required' }).trim().min(1).max(32).regex(/^[A-Z0-9_]+$/, 'A currency code is upper-case letters, digits and _');
/** SPEC §5: digits with an optional decimal part, comma as the point, at most 8 digits either side. */
const amount = z
  .string({ error: 'The amount is a decimal string' })
  .trim()
  .regex(/^\d{1,8}(?:[.,]\d{1,8})?$/, 'An amount has up to 8 digits before and 8 after the point')
  .transform((value) => value.replace(',', '.'));

const preCalculateBody = z
  .object({ sourceCurrency: currency, destinationCurrency: currency, sourceAmount: amount.optional(), destinationAmount: amount.optional() })
  .refine((body) => (body.sourceAmount === undefined) !== (body.destinationAmount === undefined), 'Give either sourceAmount or destinationAmount');
const orderBody = z.object({
  quoteId: z.string({ error: 'quoteId is required: the quote the order accepts' }).regex(UUID, 'quoteId is a quote id'),
  sourceAmount: amount,
  idempotencyKey: z.string().trim().min(8, 'idempotencyKey has 8 to 100 characters').max(100).optional(),
  sourceCurrency: currency.optional(),
  destinationCurrency: currency.optional(),
});

export function createSwapApi(deps: { pool: pg.Pool; swaps: SwapService; auth: AccessTokenVerifier }): Hono<ApiEnv> {
  const { pool, swaps } = deps;
  const app = new Hono<ApiEnv>();
  const auth = requireAuth(deps.auth);

  // An account never changes owner: a confirmed pair is kept for the process's life.
  const owners = new Map<string, string>();
  const owner: MiddlewareHandler<ApiEnv> = async (c, next) => {
    const account = c.req.param('account') ?? '';
    const { userId } = c.get('principal');
    let known = owners.get(account);
    if (known === undefined && UUID.test(account)) {
      const result = await pool.query<{ user_id: string }>({ name: 'wallet_account_owner', text: 'SELECT user_id FROM wallet_accounts WHERE id = $1', values: [account] });
      known = result.rows[0]?.user_id;
      if (known) {
        if (owners.size >= 50_000) owners.clear();
        owners.set(account, known);
      }
    }
    if (known !== userId) throw new ApiError(403, 'FORBIDDEN', 'This account is not yours');
    await next();
  };
  const orderId = (id: string | undefined) => {
    if (!id || !UUID.test(id)) throw new ApiError(404, 'SWAP_ORDER_NOT_FOUND', 'No such swap order in this account');
    return id;
  };

  app.get('/:account/currency-pair', auth, owner, async (c) => c.json(await swaps.pairs()));

  app.get('/:account/limit/:sourceCurrency/:destinationCurrency', auth, owner, async (c) => {
    const source = currency.parse(c.req.param('sourceCurrency'));
    const destination = currency.parse(c.req.param('destinationCurrency'));
    return c.json(await swaps.limit(source, destination));
  });

  app.post('/:account/exchange/pre-calculate', auth, owner, async (c) => {
    const body = preCalculateBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    return c.json(await swaps.preCalculate(c.req.param('account'), body));
  });

  app.post('/:account/exchange', auth, owner, async (c) => {
    const body = orderBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    const idempotencyKey = body.idempotencyKey ?? c.req.header('idempotency-key');
    if (!idempotencyKey || idempotencyKey.length < 8 || idempotencyKey.length > 100) {
      throw new ApiError(400, 'VALIDATION', 'idempotencyKey: give 8 to 100 characters in the body or the Idempotency-Key header');
    }
    const account = c.req.param('account');
    const order = await swaps.createOrder(account, { quoteId: body.quoteId, sourceAmount: body.sourceAmount, idempotencyKey, sourceCurrency: body.sourceCurrency, destinationCurrency: body.destinationCurrency });
    return c.json(order);
  });

  app.post('/:account/exchange/confirm/:id', auth, owner, async (c) => {
    const id = orderId(c.req.param('id'));
    const account = c.req.param('account');
    // Before anything moves, outside the confirmation's transaction (its tries are counted on their own).
    await guardPincode(pool, c.get('principal').userId, c.req.header('pincode'));
    return c.json(await swaps.confirm(account, id));
  });

  app.post('/:account/exchange/cancel/:id', auth, owner, async (c) => {
    const id = orderId(c.req.param('id'));
    return c.json(await swaps.cancel(c.req.param('account'), id));
  });

  app.get('/:account/exchange/:id', auth, owner, async (c) => {
    const id = orderId(c.req.param('id'));
    return c.json(await swaps.order(c.req.param('account'), id));
  });

  return app;
}
