/**
 * The buy area (SPEC §7 Buy and sell): /b2c/fiat/availability, /b2c/fiat/method, /b2c/rate, /b2c/order and its
 * confirmation, the older /fiatDeposit/* family on the same desk, /b2c/currencies (what a card buys here), and the
 * providers' signed webhooks: the card sandbox's at /webhooks/card, MoonPay's at /webhooks/moonpay. SPEC §6 makes availability, methods, rate and order public (getAvailability, getGeo,
 * getMethods, getFiatRate, order): they take the account from the request; a bearer token, when sent, must own it.
 * Confirming, which starts a payment and shows it in the history, and cancelling are for the account's owner only.
 */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { CardProvider } from '../adapters/card/port.ts';
import type { OnRampProvider } from '../adapters/onramp/port.ts';
import type { BuyDesk } from '../domain/buy/desk.ts';
import type { Logger } from '../log.ts';
import { rateLimit, requestAddress } from './rate-limit.ts';
import type { Limit } from '../domain/limits.ts';
import type { TrustProxy } from '../net/client-address.ts';
import { requireAuth, UnauthorizedError, type AccessTokenVerifier } from './auth-middleware.ts';
import type { AccountOwners } from './account-owner.ts';
import type { ApiEnv } from './context.ts';
import { DomainError } from '../domain/errors.ts';
import { decimalAmount, idempotencyKey, UUID } from './fields.ts';
import { jsonInput } from './json-input.ts';
import { signedWebhookBody } from './signed-webhook.ts';

const account = z.string({ error: 'account is required' }).regex(UUID, 'account is a wallet account id');
const currency = z.string({ error: 'currency is required' }).trim().min(1).max(32).regex(/^[A-Z0-9_]+$/, 'A currency code is upper-case letters, digits and _');
const amount = (field: string) => decimalAmount(`${field} is an amount`, /^\d{1,12}(?:\.\d{1,18})?$/, `${field} is an amount: digits with an optional decimal part`);

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
const orderBody = z.object({
  rateId: z.string({ error: 'rateId is required' }).regex(UUID, 'rateId is the fixedRateId of a rate quote'),
  itemId: z.string({ error: 'itemId is required' }).trim().min(1).max(100),
  description: z.string().trim().max(200).default('Crypto purchase'),
  returnUrl: z.string({ error: 'returnUrl is required' }).trim().min(1).max(2000),
  idempotencyKey,
  fiatAmount: amount('fiatAmount'),
  account,
});
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
const cancelBody = z.object({ id: z.string({ error: 'id is required' }).regex(UUID, 'id is an order id'), account });
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

export function createBuyApi(deps: {
  desk: BuyDesk;
  owners: AccountOwners;
  provider: CardProvider | undefined;
  onRamp?: OnRampProvider | undefined;
  auth: AccessTokenVerifier;
  log: Logger;
  limit: { limit: Limit | undefined; trustProxy: TrustProxy };
}): Hono<ApiEnv> {
  const { desk, owners } = deps;
  const app = new Hono<ApiEnv>();
  const auth = requireAuth(deps.auth);
  // Quotes and orders are public (SPEC §6) and each writes a row: one caller may not flood them.
  const limited = rateLimit(deps.limit);
  // An on-ramp's IP check is a request to it: counted per client like the quotes, so nobody floods it through us.
  const asksProvider = rateLimit({ ...deps.limit, limit: deps.onRamp ? deps.limit.limit : undefined });

  /** Owner only: the signed-in caller's account. */
  const requireOwner = (c: Context<ApiEnv>, accountId: string) => owners.ensure(accountId, c.get('principal').userId);
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
      if (error instanceof UnauthorizedError) throw new DomainError('UNAUTHORIZED', error.message);
      throw error;
    }
    await owners.ensure(accountId, userId);
  };
  const queryAccount = (c: Context<ApiEnv>) => {
    const given = c.req.query('account');
    return given === undefined ? undefined : account.parse(given);
  };

  // The older family names the account in the query; the b2c family in the body.
  const inQuery = { account: queryAccount };
  /** The caller's address for an on-ramp's IP check; none when the request did not come over a socket (tests). */
  const clientOf = (c: Context<ApiEnv>) => {
    const address = requestAddress(c, deps.limit.trustProxy);
    return address === 'unknown' ? undefined : address;
  };

  const methods = async (c: Context<ApiEnv>, body: z.output<typeof methodBody>) => {
    await optionalOwner(c, body.account);
    const fiatCurrency = body.fiatCurrency ?? desk.fiatOfGeo(body.geoId ?? '');
    return c.json(await desk.quote({ account: body.account, currency: body.currency, fiatCurrency, fiatAmount: body.fiatAmount, cryptoAmount: body.cryptoAmount }));
  };

  const order = async (c: Context<ApiEnv>, body: z.output<typeof orderBody>) => {
    await optionalOwner(c, body.account);
    return c.json(await desk.createOrder(body));
  };

  const confirm = async (c: Context<ApiEnv>, body: z.output<typeof confirmBody>) => {
    await requireOwner(c, body.account);
    return c.json(await desk.confirmOrder(body.account, body.id, body.requestParams));
  };

  // SPEC §7, b2c family.
  app.get('/b2c/fiat/availability', asksProvider, async (c) => {
    const address = c.req.query('depositAddress');
    if (address !== undefined && (address.length > 200 || !/^[\w:.-]*$/.test(address))) throw new DomainError('VALIDATION', 'depositAddress is not an address');
    // An on-ramp places the buyer by the address the request came from (its IP check).
    return c.json(await desk.availability(clientOf(c)));
  });
  // What /buy/get offers: the coins the provider sells on our networks (public, like the methods).
  app.get('/b2c/currencies', asksProvider, async (c) => c.json(await desk.currencies(clientOf(c))));
  app.post('/b2c/fiat/method', limited, jsonInput(methodBody), (c) => methods(c, c.req.valid('json')));
  app.post('/b2c/rate', jsonInput(rateBody), async (c) => {
    const body = c.req.valid('json');
    return c.json(await desk.rate(body.currency, body.fiatCurrency));
  });
  app.post('/b2c/order', limited, jsonInput(orderBody, { idempotencyKey: true }), (c) => order(c, c.req.valid('json')));
  app.post('/b2c/order/confirm', auth, jsonInput(confirmBody), (c) => confirm(c, c.req.valid('json')));
  // Back from the provider's page without paying (issue 19 item 15): the order ends now, not 30 minutes later.
  app.post('/b2c/order/cancel', auth, jsonInput(cancelBody), async (c) => {
    const body = c.req.valid('json');
    await requireOwner(c, body.account);
    return c.json(await desk.cancelOrder(body.account, body.id));
  });
  app.get('/b2c/order/:id', auth, async (c) => {
    const accountId = queryAccount(c);
    if (!accountId) throw new DomainError('VALIDATION', 'account is required');
    await requireOwner(c, accountId);
    const id = c.req.param('id');
    if (!UUID.test(id)) throw new DomainError('B2C_ORDER_NOT_FOUND', 'No such order in this account');
    return c.json(await desk.findOrder(accountId, id));
  });

  // SPEC §7, the older fiatDeposit family: the account comes as ?account=.
  app.get('/fiatDeposit/geo', asksProvider, async (c) => {
    queryAccount(c);
    return c.json(await desk.availability(clientOf(c)));
  });
  app.post('/fiatDeposit/methods', limited, jsonInput(methodBody, inQuery), (c) => methods(c, c.req.valid('json')));
  app.post('/fiatDeposit/order', limited, jsonInput(orderBody, { idempotencyKey: true, ...inQuery }), (c) => order(c, c.req.valid('json')));
  app.post('/fiatDeposit/order/confirm', auth, jsonInput(confirmBody, inQuery), (c) => confirm(c, c.req.valid('json')));

  // The card provider's events: public, but only a body signed with the shared secret within 300 s is believed.
  app.post('/webhooks/card', async (c) => {
    const event = await signedWebhookBody(c, deps.provider, 'card', webhookBody);
    const outcome = await desk.applyPaymentEvent(event);
    if (outcome === 'unknown') throw new DomainError('B2C_ORDER_NOT_FOUND', 'No open order has this reference');
    deps.log.info({ reference: event.reference, status: event.status, eventId: event.eventId, outcome }, 'card payment event');
    return c.json({ received: true, outcome });
  });

  // MoonPay's transaction events: public, believed only when Moonpay-Signature-V2 signs the raw body with the webhook key within 300 s.
  app.post('/webhooks/moonpay', async (c) => {
    const onRamp = deps.onRamp;
    if (!onRamp) throw new DomainError('NOT_FOUND', 'No MoonPay provider is configured on this wallet');
    const raw = await c.req.text();
    const read = onRamp.readWebhook(c.req.header(onRamp.signatureHeader), raw, Math.floor(Date.now() / 1000));
    if (!read.ok && read.problem === 'BODY') throw new DomainError('VALIDATION', 'The body is not a MoonPay transaction event');
    if (!read.ok) throw new DomainError('WEBHOOK_SIGNATURE', `The webhook signature is not valid (${read.problem.toLowerCase()})`);
    const outcome = await desk.applyOnRampEvent(read.event, raw);
    const { transaction } = read.event;
    deps.log.info({ type: read.event.type, transaction: transaction.id, reference: transaction.reference, status: transaction.status, outcome }, 'on-ramp transaction event');
    return c.json({ received: true, outcome });
  });

  return app;
}
