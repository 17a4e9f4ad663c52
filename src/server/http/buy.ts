/**
 * The buy area (SPEC §7 Buy and sell): /b2c/fiat/availability, /b2c/fiat/method, /b2c/rate, /b2c/order and its
 * confirmation, the older /fiatDeposit/* family on the same desk, and the card provider's signed webhook at
 * /webhooks/card. SPEC §6 makes availability, methods, rate and order public (getAvailability, getGeo,
 * getMethods, getFiatRate, order): they take the account from the request; a bearer token, when sent, must own it.
 * Confirming, which starts a payment and shows it in the history, is for the account's owner only.
 */
import { Hono, type Context } from 'hono';
import type pg from 'pg';
import { z } from 'zod';
import { checkWebhookSignature, SIGNATURE_HEADER } from '../adapters/webhooks/signature.ts';
import type { CardProvider } from '../adapters/card/port.ts';
import type { BuyDesk } from '../domain/buy/desk.ts';
import type { Logger } from '../log.ts';
import { rateLimit } from './rate-limit.ts';
import type { Limit } from '../domain/limits.ts';
import type { TrustProxy } from './client-address.ts';
import { requireAuth, UnauthorizedError, type AccessTokenVerifier } from './auth-middleware.ts';
import type { ApiEnv } from './context.ts';
import { ApiError } from './errors.ts';
import { readJsonBody } from './json-body.ts';
import { jsonNumberAmount } from './json-amount.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const account = z.string({ error: 'account is required' }).regex(UUID, 'account is a wallet account id');
const currency = z.string({ error: 'currency is required' }).trim().min(1).max(32).regex(/^[A-Z0-9_]+$/, 'A currency code is upper-case letters, digits and _');
const amount = (field: string) =>
  z
    .union([z.string(), jsonNumberAmount], { error: `${field} is an amount` })
    .transform((value) => value.trim().replace(',', '.'))
    .pipe(z.string().regex(/^\d{1,12}(?:\.\d{1,18})?$/, `${field} is an amount: digits with an optional decimal part`));

const methodFields = {
  currency,
  geoId: z.string().trim().min(1).max(16).optional(),
  fiatCurrency: z.string().trim().regex(/^[A-Z]{3}$/, 'fiatCurrency is a 3-letter code').optional(),
  cryptoAmount: amount('cryptoAmount').optional(),
  fiatAmount: amount('fiatAmount').optional(),
};
const methodBody = z
  .object({ ...methodFields, account })
  .refine((b) => b.geoId !== undefined || b.fiatCurrency !== undefined, { message: 'geoId (or fiatCurrency) is required', path: ['geoId'] })
  .refine((b) => (b.cryptoAmount === undefined) !== (b.fiatAmount === undefined), { message: 'Give either cryptoAmount or fiatAmount', path: ['fiatAmount'] });
const rateBody = z.object({ currency, fiatCurrency: z.string().trim().regex(/^[A-Z]{3}$/, 'fiatCurrency is a 3-letter code') });
const orderFields = {
  rateId: z.string({ error: 'rateId is required' }).regex(UUID, 'rateId is the fixedRateId of a rate quote'),
  itemId: z.string({ error: 'itemId is required' }).trim().min(1).max(100),
  description: z.string().trim().max(200).default('Crypto purchase'),
  returnUrl: z.string({ error: 'returnUrl is required' }).trim().min(1).max(2000),
  idempotencyKey: z.string().trim().min(8, 'idempotencyKey is at least 8 characters').max(100).optional(),
  fiatAmount: amount('fiatAmount'),
  account,
};
const requestParams = z
  .object({
    email: z.string().trim().max(254).optional(),
    browserLanguage: z.string().trim().max(64).optional(),
    screenHeight: z.coerce.number().int().min(0).max(100_000).optional(),
    screenWidth: z.coerce.number().int().min(0).max(100_000).optional(),
    timeZone: z.string().trim().max(64).optional(),
    userAgent: z.string().max(1000).optional(),
    javascriptEnabled: z.boolean().optional(),
    ip: z.string().max(64).optional(),
  })
  .default({});
const confirmBody = z.object({ id: z.string({ error: 'id is required' }).regex(UUID, 'id is an order id'), account, requestParams });
const webhookBody = z.object({
  eventId: z.string().min(1).max(200),
  paymentId: z.string().min(1).max(100),
  reference: z.string().min(1).max(200),
  status: z.enum(['PENDING', 'REQUIRES_ACTION', 'SUCCEEDED', 'FAILED', 'CANCELLED']),
  amount: z.string().max(40),
  currency: z.string().max(8),
  reason: z.string().max(500).nullish(),
  occurredAt: z.string().max(40),
});

export function createBuyApi(deps: { pool: pg.Pool; desk: BuyDesk; provider: CardProvider | undefined; auth: AccessTokenVerifier; log: Logger; limit: { limit: Limit | undefined; trustProxy: TrustProxy } }): Hono<ApiEnv> {
  const { pool, desk } = deps;
  const app = new Hono<ApiEnv>();
  const auth = requireAuth(deps.auth);
  // Quotes and orders are public (SPEC §6) and each writes a row: one caller may not flood them.
  const limited = rateLimit(deps.limit);

  const ownedBy = async (accountId: string, userId: string) => {
    const found = await pool.query({ name: 'buy_account_owner', text: 'SELECT 1 FROM wallet_accounts WHERE id = $1 AND user_id = $2', values: [accountId, userId] });
    return (found.rowCount ?? 0) > 0;
  };
  /** Owner only: the signed-in caller's account. */
  const requireOwner = async (c: Context<ApiEnv>, accountId: string) => {
    if (!(await ownedBy(accountId, c.get('principal').userId))) throw new ApiError(403, 'FORBIDDEN', 'This account is not yours');
  };
  /** Public calls: no token is fine; a token that is sent must be valid and own the account. */
  const optionalOwner = async (c: Context<ApiEnv>, accountId: string) => {
    const header = c.req.header('authorization');
    if (!header) return;
    const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    let userId: string;
    try {
      if (!token) throw new UnauthorizedError('The authorization header is not a bearer token');
      userId = (await deps.auth.verify(token)).userId;
    } catch (error) {
      if (error instanceof UnauthorizedError) throw new ApiError(401, 'UNAUTHORIZED', error.message);
      throw error;
    }
    if (!(await ownedBy(accountId, userId))) throw new ApiError(403, 'FORBIDDEN', 'This account is not yours');
  };
  const queryAccount = (c: Context<ApiEnv>) => {
    const given = c.req.query('account');
    return given === undefined ? undefined : account.parse(given);
  };

  /** The body as an object: `null`, an array or a bare value is the client's mistake (400), not a crash. */
  const objectBody = async (c: Context<ApiEnv>): Promise<Record<string, unknown>> => {
    const raw = await readJsonBody(c.req.raw, { empty: {} });
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ApiError(400, 'VALIDATION', 'The request body must be a JSON object');
    return raw as Record<string, unknown>;
  };

  const methods = async (c: Context<ApiEnv>, accountId: string | undefined) => {
    const raw = await objectBody(c);
    const body = methodBody.parse({ ...raw, account: accountId ?? raw.account });
    await optionalOwner(c, body.account);
    const fiatCurrency = body.fiatCurrency ?? desk.fiatOfGeo(body.geoId ?? '');
    return c.json(await desk.quote({ account: body.account, currency: body.currency, fiatCurrency, fiatAmount: body.fiatAmount, cryptoAmount: body.cryptoAmount }));
  };

  const order = async (c: Context<ApiEnv>, accountId: string | undefined) => {
    const raw = await objectBody(c);
    const body = z.object(orderFields).parse({ ...raw, account: accountId ?? raw.account });
    const idempotencyKey = body.idempotencyKey ?? c.req.header('idempotency-key');
    if (!idempotencyKey || idempotencyKey.length < 8 || idempotencyKey.length > 100) throw new ApiError(400, 'VALIDATION', 'idempotencyKey is required (8 to 100 characters)');
    await optionalOwner(c, body.account);
    const created = await desk.createOrder({ ...body, idempotencyKey });
    return c.json(created);
  };

  const confirm = async (c: Context<ApiEnv>, accountId: string | undefined) => {
    const raw = await objectBody(c);
    const body = confirmBody.parse({ ...raw, account: accountId ?? raw.account });
    await requireOwner(c, body.account);
    return c.json(await desk.confirmOrder(body.account, body.id, body.requestParams));
  };

  // SPEC §7, b2c family.
  app.get('/b2c/fiat/availability', async (c) => {
    const address = c.req.query('depositAddress');
    if (address !== undefined && (address.length > 200 || !/^[\w:.-]*$/.test(address))) throw new ApiError(400, 'VALIDATION', 'depositAddress is not an address');
    return c.json(desk.availability());
  });
  app.post('/b2c/fiat/method', limited, (c) => methods(c, undefined));
  app.post('/b2c/rate', async (c) => {
    const body = rateBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    return c.json(await desk.rate(body.currency, body.fiatCurrency));
  });
  app.post('/b2c/order', limited, (c) => order(c, undefined));
  app.post('/b2c/order/confirm', auth, (c) => confirm(c, undefined));
  app.get('/b2c/order/:id', auth, async (c) => {
    const accountId = queryAccount(c);
    if (!accountId) throw new ApiError(400, 'VALIDATION', 'account is required');
    await requireOwner(c, accountId);
    const id = c.req.param('id');
    if (!UUID.test(id)) throw new ApiError(404, 'B2C_ORDER_NOT_FOUND', 'No such order in this account');
    return c.json(await desk.findOrder(accountId, id));
  });

  // SPEC §7, the older fiatDeposit family: the account comes as ?account=.
  app.get('/fiatDeposit/geo', (c) => {
    queryAccount(c);
    return c.json(desk.availability());
  });
  app.post('/fiatDeposit/methods', limited, (c) => methods(c, queryAccount(c)));
  app.post('/fiatDeposit/order', limited, (c) => order(c, queryAccount(c)));
  app.post('/fiatDeposit/order/confirm', auth, (c) => confirm(c, queryAccount(c)));

  // The card provider's events: public, but only a body signed with the shared secret within 300 s is believed.
  app.post('/webhooks/card', async (c) => {
    if (!deps.provider) throw new ApiError(404, 'NOT_FOUND', 'No card provider is configured on this wallet');
    const raw = await c.req.text();
    const problem = checkWebhookSignature(deps.provider.webhookSecret, c.req.header(SIGNATURE_HEADER), raw, Math.floor(Date.now() / 1000));
    if (problem) throw new ApiError(401, 'WEBHOOK_SIGNATURE', `The webhook signature is not valid (${problem.toLowerCase()})`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new ApiError(400, 'VALIDATION', 'The request body is not valid JSON');
    }
    const event = webhookBody.parse(parsed);
    const outcome = await desk.applyPaymentEvent(event);
    if (outcome === 'unknown') throw new ApiError(404, 'B2C_ORDER_NOT_FOUND', 'No open order has this reference');
    deps.log.info({ reference: event.reference, status: event.status, eventId: event.eventId, outcome }, 'card payment event');
    return c.json({ received: true, outcome });
  });

  return app;
}
