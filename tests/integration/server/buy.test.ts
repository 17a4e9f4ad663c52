import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';
import { auditFailures, quietLog, TEST_MNEMONIC, waitFor } from '../../support/custody.ts';
import { signWebhook, SIGNATURE_HEADER } from '../../../src/server/adapters/webhooks/port.ts';
import { createWebhookDeliverer, enqueueWebhook } from '../../../src/server/adapters/webhooks/delivery.ts';
import type { AssetItem } from '../../../src/server/domain/assets.ts';
import type { TransactionItem } from '../../../src/server/domain/history.ts';
import type { BuyOrderView } from '../../../src/server/domain/buy/view.ts';
import type { BuyQuote } from '../../../src/server/domain/buy/quotes.ts';
import type { CardPaymentEvent } from '../../../src/server/adapters/card/port.ts';
import { parseDecimal } from '../../../src/lib/amount.ts';

/**
 * Issue 9 through the real server, ledger and PostgreSQL: availability, methods with limits, fixed rates, orders
 * (idempotent), confirmation, the sandbox's hosted page with its three test cards, the signed webhook (refused
 * when forged or stale, applied once however often and in whatever order it comes), expiry, and the outbox's retries.
 */
const SECRET = 'integration-card-webhook-secret';
const ENV = { WALLET_SEED: TEST_MNEMONIC, WORKER_POLL_MS: '100', RATES_WALK_MS: '0', CARD_WEBHOOK_SECRET: SECRET, BUY_FIAT_CURRENCIES: 'USD,EUR', LOG_LEVEL: 'debug' };
const PASSWORD = 'a long enough passphrase 42';
const CARDS = { paid: '4242 4242 4242 4242', declined: '4000 0000 0000 0002', confirm: '4000 0000 0000 3220' };

describe('buy crypto with a card', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let pool: pg.Pool;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let returnUrl: string;

  const call = gatewayClient<Record<string, unknown> | undefined>(() => server.url, { redirect: 'manual' });
  const usdc = async (user: SignedInUser) => ((await call(user, 'GET', `/api/${user.accountId}/asset`)).body as unknown as AssetItem[]).find((a) => a.currency === 'USDC_ETH');
  const quote = async (user: SignedInUser | undefined, account: string, amounts: Record<string, string>) =>
    call(user, 'POST', '/api/b2c/fiat/method', { currency: 'USDC_ETH', geoId: 'US', account, ...amounts });
  const placeOrder = async (user: SignedInUser, fiatAmount = '100', key = randomUUID()) => {
    const quoted = (await quote(undefined, user.accountId, { fiatAmount })).body as unknown as BuyQuote;
    const item = quoted.methods[0];
    const body = { rateId: quoted.fixedRateId, itemId: item?.itemId, description: 'Buy USDC', returnUrl, idempotencyKey: key, account: user.accountId, fiatAmount };
    const created = await call(undefined, 'POST', '/api/b2c/order', body);
    expect(created.status).toBe(200);
    return { order: created.body as unknown as BuyOrderView, body, quoted };
  };
  const confirmOrder = async (user: SignedInUser, id: string) => {
    const confirmed = await call(user, 'POST', '/api/b2c/order/confirm', {
      id,
      account: user.accountId,
      requestParams: { email: 'buyer@example.com', browserLanguage: 'en-US', screenHeight: 844, screenWidth: 390, timeZone: 'Europe/Berlin', userAgent: 'test', javascriptEnabled: true, ip: '' },
    });
    expect(confirmed.status).toBe(200);
    return (confirmed.body as { redirectUrl: string }).redirectUrl;
  };
  const orderOf = async (user: SignedInUser, id: string) => (await call(user, 'GET', `/api/b2c/order/${id}?account=${user.accountId}`)).body as unknown as BuyOrderView;
  const history = async (user: SignedInUser) =>
    ((await call(user, 'POST', `/api/${user.accountId}/asset/transactions`, { currency: 'USDC_ETH' })).body as { result: TransactionItem[] }).result;
  /** Submits a form of the sandbox's page as a browser would. */
  const submit = async (path: string, fields: Record<string, string>) => {
    const response = await fetch(new URL(path, server.url), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    return { status: response.status, location: response.headers.get('location'), text: await response.text() };
  };
  const pagePath = (redirectUrl: string) => new URL(redirectUrl).pathname;
  const signed = (event: CardPaymentEvent, at = Math.floor(Date.now() / 1000), secret = SECRET) => {
    const body = JSON.stringify(event);
    return { body, headers: { [SIGNATURE_HEADER]: signWebhook(secret, body, at), 'content-type': 'application/json' } };
  };
  const deliver = async (event: CardPaymentEvent, at?: number, secret?: string) => {
    const { body, headers } = signed(event, at, secret);
    const response = await fetch(`${server.url}/api/webhooks/card`, { method: 'POST', headers, body });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const eventFor = (order: BuyOrderView, paymentId: string, status: CardPaymentEvent['status'], eventId = randomUUID()): CardPaymentEvent => ({
    eventId,
    paymentId,
    reference: `buy:${order.id}`,
    status,
    amount: order.fiatAmount,
    currency: order.fiatCurrency,
    reason: status === 'FAILED' ? 'Declined in a test' : null,
    occurredAt: new Date().toISOString(),
  });

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    server = await startInProcess({ ...testServerEnv(database.url), ...ENV });
    pool = new pg.Pool({ connectionString: database.url, max: 4 });
    alice = await signUpAndSignIn(server.url, { email: `buy-alice-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
    bob = await signUpAndSignIn(server.url, { email: `buy-bob-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
    // PUBLIC_URL defaults to http://localhost:<port>: the return address must be on it.
    returnUrl = `http://localhost:${server.port}/home/asset/USDC_ETH`;
    expect((await call(alice, 'POST', `/api/${alice.accountId}/account/currency`, { currency: 'USDC_ETH' })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    try {
      if (pool) {
        expect(await auditFailures(pool)).toEqual([]);
        await pool.end();
      }
    } finally {
      await server?.close();
      await database?.drop();
    }
  });

  it('lists fiat availability and regions publicly, in both families', async () => {
    const expected = [
      { fiatCurrency: 'USD', geoId: 'US' },
      { fiatCurrency: 'EUR', geoId: 'EU' },
    ];
    expect(await call(undefined, 'GET', '/api/b2c/fiat/availability?depositAddress=0xabc')).toMatchObject({ status: 200, body: expected });
    expect(await call(undefined, 'GET', `/api/fiatDeposit/geo?account=${alice.accountId}`)).toMatchObject({ status: 200, body: expected });
    expect(await call(undefined, 'GET', '/api/fiatDeposit/geo?account=nope')).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
    expect(await call(undefined, 'GET', `/api/b2c/fiat/availability?depositAddress=${'x'.repeat(300)}`)).toMatchObject({ status: 400 });
  });

  it('quotes every method with its limits under one fixed rate, by either amount, publicly', async () => {
    const byFiat = await quote(undefined, alice.accountId, { fiatAmount: '100' });
    expect(byFiat.status).toBe(200);
    const q = byFiat.body as unknown as BuyQuote;
    expect(q.fixedRateId).toMatch(/^[0-9a-f-]{36}$/);
    expect(q.expiresInSeconds).toBe(300);
    // 1 USDC = 1 USD plus the 1.5% fee: 100 USD buy 98.522167 USDC (rounded down to the token's 6 decimals).
    expect(q.methods).toEqual([
      { paymentMethodCode: 'CARD', paymentMethodName: 'Bank card', fiatAmount: '100', fiatCurrency: 'USD', cryptoAmount: '98.522167', minLimit: '10', maxLimit: '5000', itemId: expect.any(String), rate: '1.015' },
    ]);
    const byCrypto = (await quote(undefined, alice.accountId, { cryptoAmount: '50' })).body as unknown as BuyQuote;
    expect(byCrypto.methods[0]).toMatchObject({ fiatAmount: '50.75', cryptoAmount: '50' });
    // EUR limits are the USD ones at the reference rate (0.92), in whole euros.
    const eur = (await call(undefined, 'POST', '/api/b2c/fiat/method', { currency: 'USDC_ETH', geoId: 'EU', account: alice.accountId, fiatAmount: '100' })).body as unknown as BuyQuote;
    expect(eur.methods[0]).toMatchObject({ fiatCurrency: 'EUR', minLimit: '10', maxLimit: '4600' });
    // The older family takes the account from the query.
    const older = await call(undefined, 'POST', `/api/fiatDeposit/methods?account=${alice.accountId}`, { currency: 'USDC_ETH', geoId: 'US', fiatAmount: '20' });
    expect(older).toMatchObject({ status: 200, body: { methods: [{ fiatAmount: '20', cryptoAmount: '19.704433' }] } });
    expect(await call(undefined, 'POST', '/api/b2c/rate', { currency: 'USDC_ETH', fiatCurrency: 'USD' })).toMatchObject({ status: 200, body: { rate: '1.015' } });

    // Refusals: a code, never a 500.
    expect(await quote(undefined, alice.accountId, { fiatAmount: '100', cryptoAmount: '1' })).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
    expect(await quote(undefined, alice.accountId, {})).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
    expect(await quote(undefined, alice.accountId, { fiatAmount: '1.001' })).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
    expect(await quote(undefined, alice.accountId, { fiatAmount: 'lots' })).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
    expect(await call(undefined, 'POST', '/api/b2c/fiat/method', { currency: 'NOPE', geoId: 'US', account: alice.accountId, fiatAmount: '1' })).toMatchObject({ status: 400, body: { exceptionCode: 'UNKNOWN_CURRENCY' } });
    expect(await call(undefined, 'POST', '/api/b2c/fiat/method', { currency: 'USDC_ETH', geoId: 'KZ', account: alice.accountId, fiatAmount: '1' })).toMatchObject({ status: 400, body: { exceptionCode: 'B2C_FIAT_UNSUPPORTED' } });
    expect(await quote(undefined, randomUUID(), { fiatAmount: '1' })).toMatchObject({ status: 404, body: { exceptionCode: 'ACCOUNT_NOT_FOUND' } });
    expect(await call(undefined, 'POST', '/api/b2c/fiat/method', '{"currency":')).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
    // A token that is sent must own the account.
    expect(await quote(bob, alice.accountId, { fiatAmount: '100' })).toMatchObject({ status: 403, body: { exceptionCode: 'FORBIDDEN' } });
    expect(await quote(alice, alice.accountId, { fiatAmount: '100' })).toMatchObject({ status: 200 });
  });

  it('refuses orders outside the limits, on foreign or expired rates, or returning elsewhere; one key makes one order', async () => {
    const q = (await quote(undefined, alice.accountId, { fiatAmount: '5' })).body as unknown as BuyQuote;
    const base = { rateId: q.fixedRateId, itemId: q.methods[0]?.itemId, description: 'Buy USDC', returnUrl, account: alice.accountId };
    const order = (body: Record<string, unknown>) => call(undefined, 'POST', '/api/b2c/order', body);
    expect(await order({ ...base, fiatAmount: '5', idempotencyKey: randomUUID() })).toMatchObject({ status: 400, body: { exceptionCode: 'B2C_LIMIT', message: 'Min 10 - max 5000 USD' } });
    expect(await order({ ...base, fiatAmount: '5000.01', idempotencyKey: randomUUID() })).toMatchObject({ status: 400, body: { exceptionCode: 'B2C_LIMIT', message: 'Min 10 - max 5000 USD' } });
    expect(await order({ ...base, fiatAmount: '100', returnUrl: 'https://evil.example/phish', idempotencyKey: randomUUID() })).toMatchObject({ status: 400, body: { exceptionCode: 'B2C_RETURN_URL' } });
    expect(await order({ ...base, fiatAmount: '100', itemId: 'nope', idempotencyKey: randomUUID() })).toMatchObject({ status: 400, body: { exceptionCode: 'B2C_METHOD_NOT_FOUND' } });
    expect(await order({ ...base, fiatAmount: '100', account: bob.accountId, idempotencyKey: randomUUID() })).toMatchObject({ status: 400, body: { exceptionCode: 'B2C_RATE_NOT_FOUND' } });
    expect(await order({ ...base, fiatAmount: '100' })).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
    expect(await call(bob, 'POST', '/api/b2c/order', { ...base, fiatAmount: '100', idempotencyKey: randomUUID() })).toMatchObject({ status: 403 });

    // The same request five times at once: one order.
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 5 }, () => order({ ...base, fiatAmount: '100', idempotencyKey: key })));
    for (const answer of answers) expect(answer.status).toBe(200);
    expect(new Set(answers.map((a) => (a.body as unknown as BuyOrderView).id)).size).toBe(1);
    expect(answers[0]?.body).toMatchObject({ state: 'NEW', currency: 'USDC_ETH', cryptoAmount: '98.522167', fiatAmount: '100', fiatCurrency: 'USD', rate: '1.015', redirectUrl: null });
    expect(await pool.query('SELECT 1 FROM buy_orders WHERE idempotency_key = $1', [key])).toMatchObject({ rowCount: 1 });
    expect(await order({ ...base, fiatAmount: '101', idempotencyKey: key })).toMatchObject({ status: 422, body: { exceptionCode: 'IDEMPOTENCY_KEY_REUSED' } });
    // The older family, with the key as a header.
    const older = await call(undefined, 'POST', `/api/fiatDeposit/order?account=${alice.accountId}`, { ...base, account: undefined, fiatAmount: '100' }, { 'idempotency-key': key });
    expect(older).toMatchObject({ status: 200, body: { id: (answers[0]?.body as unknown as BuyOrderView).id } });

    // A rate past its 300 s.
    await pool.query(`UPDATE buy_rate_quotes SET expires_at = now() - interval '1 second' WHERE id = $1`, [q.fixedRateId]);
    expect(await order({ ...base, fiatAmount: '100', idempotencyKey: randomUUID() })).toMatchObject({ status: 400, body: { exceptionCode: 'B2C_RATE_EXPIRED' } });
  });

  it('buys 100 USD of USDC: confirmed to the sandbox page, paid with the paying card, credited once from card settlement', async () => {
    const { order } = await placeOrder(alice);
    expect(await call(undefined, 'POST', '/api/b2c/order/confirm', { id: order.id, account: alice.accountId })).toMatchObject({ status: 401 });
    expect(await call(bob, 'POST', '/api/b2c/order/confirm', { id: order.id, account: alice.accountId })).toMatchObject({ status: 403 });
    expect(await call(bob, 'POST', '/api/b2c/order/confirm', { id: order.id, account: bob.accountId })).toMatchObject({ status: 404, body: { exceptionCode: 'B2C_ORDER_NOT_FOUND' } });
    const redirectUrl = await confirmOrder(alice, order.id);
    expect(redirectUrl).toMatch(new RegExp(`^http://localhost:${server.port}/sandbox/card/pay/[0-9a-f-]{36}$`));
    // Confirming again (a double tap, the older family) answers the same page.
    const again = await call(alice, 'POST', `/api/fiatDeposit/order/confirm?account=${alice.accountId}`, { id: order.id });
    expect(again).toMatchObject({ status: 200, body: { redirectUrl } });

    // Pending in the history before anything is paid; nothing credited yet.
    const pending = await history(alice);
    expect(pending[0]).toMatchObject({ transactionType: 'FIAT_DEPOSIT', direction: 'DEPOSIT', state: 'IN_PROGRESS', currency: 'USDC_ETH', amount: '98.522167', fiatCurrency: 'USD', fiatAmount: '100' });
    expect((await usdc(alice))?.totalAvailable ?? '0').toBe('0');

    // The hosted page: merchant, amount, card form and the test cards.
    const page = await fetch(redirectUrl.replace(`http://localhost:${server.port}`, server.url));
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('Wallet');
    expect(html).toContain('100.00 USD');
    expect(html).toContain('name="card"');
    expect(html).toContain('4242 4242 4242 4242');
    // A card that is not a test card, or a bad expiry, is refused by the form and changes nothing.
    expect((await submit(pagePath(redirectUrl), { card: '4111 1111 1111 1111', expiry: '12/40', cvc: '123' })).status).toBe(400);
    expect((await submit(pagePath(redirectUrl), { card: CARDS.paid, expiry: '13/40', cvc: '123' })).status).toBe(400);
    const paid = await submit(pagePath(redirectUrl), { card: CARDS.paid, expiry: '12/40', cvc: '123' });
    expect(paid).toMatchObject({ status: 303, location: returnUrl });

    const done = await waitFor('the webhook to complete the order', async () => {
      const current = await orderOf(alice, order.id);
      return current.state !== 'PENDING' && current;
    });
    expect(done.state).toBe('COMPLETED');
    expect((await usdc(alice))?.totalAvailable).toBe('98.522167');
    expect((await history(alice))[0]).toMatchObject({ id: pending[0]?.id, state: 'COMPLETED', transactionType: 'FIAT_DEPOSIT' });
    const credit = await pool.query<{ amount: string; code: string }>(
      `SELECT p.amount::text, a.code FROM ledger_entries e JOIN ledger_postings p ON p.entry_id = e.id JOIN ledger_accounts a ON a.id = p.ledger_account_id
        WHERE e.idempotency_key = $1 ORDER BY p.amount`,
      [`buy:credit:${order.id}`],
    );
    expect(credit.rows).toEqual([
      { amount: '-98522167', code: 'CARD_SETTLEMENT' },
      { amount: '98522167', code: `USER:${alice.accountId}` },
    ]);
    // The page now says paid; paying again is refused.
    expect((await submit(pagePath(redirectUrl), { card: CARDS.paid, expiry: '12/40', cvc: '123' })).status).toBe(410);
    const payments = (await call(undefined, 'GET', '/sandbox/card/payments')).body as unknown as { reference: string; status: string; webhooks: { delivered: boolean }[] }[];
    expect(payments.find((p) => p.reference === `buy:${order.id}`)).toMatchObject({ status: 'SUCCEEDED', webhooks: [{ delivered: true }] });
  });

  it('refuses a forged or stale webhook without side effects; the same event twice, or events out of order, credit once', async () => {
    const before = (await usdc(alice))?.totalAvailable ?? '0';
    const { order } = await placeOrder(alice, '50');
    const paymentId = pagePath(await confirmOrder(alice, order.id)).split('/').pop() ?? '';
    const succeeded = eventFor(order, paymentId, 'SUCCEEDED');

    const unchanged = async () => {
      expect((await orderOf(alice, order.id)).state).toBe('PENDING');
      expect((await usdc(alice))?.totalAvailable).toBe(before);
      expect(await pool.query('SELECT 1 FROM card_webhook_events WHERE order_id = $1', [order.id])).toMatchObject({ rowCount: 0 });
    };
    expect(await deliver(succeeded, undefined, 'a-wrong-secret-of-enough-length')).toMatchObject({ status: 401, body: { exceptionCode: 'WEBHOOK_SIGNATURE' } });
    expect(await deliver(succeeded, Math.floor(Date.now() / 1000) - 301)).toMatchObject({ status: 401, body: { exceptionCode: 'WEBHOOK_SIGNATURE', message: expect.stringContaining('stale') } });
    expect(await deliver(succeeded, Math.floor(Date.now() / 1000) + 301)).toMatchObject({ status: 401 });
    const { body, headers } = signed(succeeded);
    // Signed, then altered in transit.
    const tampered = await fetch(`${server.url}/api/webhooks/card`, { method: 'POST', headers, body: body.replace('"50"', '"5000"') });
    expect(tampered.status).toBe(401);
    const unsigned = await fetch(`${server.url}/api/webhooks/card`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(unsigned.status).toBe(401);
    // A correctly signed event that names a different amount is not believed either.
    expect(await deliver({ ...succeeded, eventId: randomUUID(), amount: '5000' })).toMatchObject({ status: 200, body: { outcome: 'ignored' } });
    expect((await orderOf(alice, order.id)).state).toBe('PENDING');
    await pool.query('DELETE FROM card_webhook_events WHERE order_id = $1', [order.id]);
    await unchanged();

    // The provider's in-progress status first is fine; then the success, delivered three times at once.
    expect(await deliver(eventFor(order, paymentId, 'REQUIRES_ACTION'))).toMatchObject({ status: 200, body: { outcome: 'applied' } });
    const outcomes = await Promise.all([deliver(succeeded), deliver(succeeded), deliver(succeeded)]);
    expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200]);
    expect(outcomes.map((o) => o.body.outcome).sort()).toEqual(['applied', 'duplicate', 'duplicate']);
    // Late and out of order: an in-progress status, a second success under another id, a failure.
    expect(await deliver(eventFor(order, paymentId, 'PENDING'))).toMatchObject({ status: 200, body: { outcome: 'ignored' } });
    expect(await deliver(eventFor(order, paymentId, 'SUCCEEDED'))).toMatchObject({ status: 200, body: { outcome: 'duplicate' } });
    expect(await deliver(eventFor(order, paymentId, 'FAILED'))).toMatchObject({ status: 200, body: { outcome: 'ignored' } });
    expect((await orderOf(alice, order.id)).state).toBe('COMPLETED');
    const expected = (BigInt(Math.round(Number(before) * 1e6)) + 49_261_083n).toString();
    expect((await usdc(alice))?.totalAvailable).toBe((Number(expected) / 1e6).toString());
    expect(await pool.query('SELECT 1 FROM ledger_entries WHERE idempotency_key = $1', [`buy:credit:${order.id}`])).toMatchObject({ rowCount: 1 });

    // A failure that comes first ends the order; a success that would follow it is not believed.
    const second = (await placeOrder(alice, '20')).order;
    const secondPayment = pagePath(await confirmOrder(alice, second.id)).split('/').pop() ?? '';
    expect(await deliver(eventFor(second, secondPayment, 'FAILED'))).toMatchObject({ status: 200, body: { outcome: 'applied' } });
    expect(await deliver(eventFor(second, secondPayment, 'REQUIRES_ACTION'))).toMatchObject({ status: 200, body: { outcome: 'ignored' } });
    expect((await orderOf(alice, second.id)).state).toBe('FAILED');
    // An event for an order that does not exist, or was never confirmed: 404, so the provider keeps trying.
    expect(await deliver({ ...succeeded, eventId: randomUUID(), reference: `buy:${randomUUID()}` })).toMatchObject({ status: 404 });
    const unconfirmed = (await placeOrder(alice, '20')).order;
    expect(await deliver(eventFor(unconfirmed, 'whatever', 'SUCCEEDED'))).toMatchObject({ status: 404 });
    expect(await deliver({ nonsense: true } as unknown as CardPaymentEvent)).toMatchObject({ status: 400 });
  });

  it('ends FAILED with nothing credited when the card is declined', async () => {
    const before = (await usdc(alice))?.totalAvailable;
    const { order } = await placeOrder(alice, '30');
    const redirectUrl = await confirmOrder(alice, order.id);
    expect(await submit(pagePath(redirectUrl), { card: CARDS.declined, expiry: '01/39', cvc: '999' })).toMatchObject({ status: 303, location: returnUrl });
    const done = await waitFor('the decline', async () => {
      const current = await orderOf(alice, order.id);
      return current.state !== 'PENDING' && current;
    });
    expect(done).toMatchObject({ state: 'FAILED', failureReason: 'Card declined by the issuing bank' });
    expect((await usdc(alice))?.totalAvailable).toBe(before);
    expect((await history(alice)).find((t) => t.id === done.transactionId)).toMatchObject({ state: 'FAILED', failureReason: 'Card declined by the issuing bank' });
    expect(await pool.query('SELECT 1 FROM ledger_entries WHERE idempotency_key = $1', [`buy:credit:${order.id}`])).toMatchObject({ rowCount: 0 });
  });

  it('asks for the confirmation step with the third test card, then pays', async () => {
    const { order } = await placeOrder(alice, '10');
    const redirectUrl = await confirmOrder(alice, order.id);
    expect(await submit(pagePath(redirectUrl), { card: CARDS.confirm, expiry: '12/40', cvc: '123' })).toMatchObject({ status: 303, location: pagePath(redirectUrl) });
    const step = await (await fetch(`${server.url}${pagePath(redirectUrl)}`)).text();
    expect(step).toContain('Confirm the payment');
    expect((await submit(`${pagePath(redirectUrl)}/confirm`, { code: '0000', action: 'confirm' })).status).toBe(400);
    expect((await orderOf(alice, order.id)).state).toBe('PENDING');
    expect(await submit(`${pagePath(redirectUrl)}/confirm`, { code: '1234', action: 'confirm' })).toMatchObject({ status: 303, location: returnUrl });
    await waitFor('the payment', async () => (await orderOf(alice, order.id)).state === 'COMPLETED');
  });

  it('expires unconfirmed orders, and cancels unpaid ones at the provider before failing them', async () => {
    const { order: fresh } = await placeOrder(alice, '10');
    const { order: unpaid } = await placeOrder(alice, '10');
    const redirectUrl = await confirmOrder(alice, unpaid.id);
    await pool.query(`UPDATE buy_orders SET expires_at = now() - interval '1 second' WHERE id = ANY($1::uuid[])`, [[fresh.id, unpaid.id]]);
    await waitFor('the expiry job', async () => (await orderOf(alice, unpaid.id)).state === 'FAILED');
    expect(await orderOf(alice, fresh.id)).toMatchObject({ state: 'EXPIRED', transactionId: null });
    expect(await orderOf(alice, unpaid.id)).toMatchObject({ state: 'FAILED', failureReason: 'The order was not paid in time' });
    expect(await call(alice, 'POST', '/api/b2c/order/confirm', { id: fresh.id, account: alice.accountId })).toMatchObject({ status: 400, body: { exceptionCode: 'B2C_ORDER_EXPIRED' } });
    // The provider's page no longer takes the payment.
    expect((await submit(pagePath(redirectUrl), { card: CARDS.paid, expiry: '12/40', cvc: '123' })).status).toBe(410);
    expect(await pool.query('SELECT 1 FROM ledger_entries WHERE idempotency_key = ANY($1::text[])', [[`buy:credit:${fresh.id}`, `buy:credit:${unpaid.id}`]])).toMatchObject({ rowCount: 0 });
  });

  it('cancels an order the user gave up (back from the provider) at once: idempotent, owner only, a paid one is kept', async () => {
    const cancel = (user: SignedInUser, id: string, account = user.accountId) => call(user, 'POST', '/api/b2c/order/cancel', { id, account });
    // Confirmed and unpaid: the payment is cancelled at the provider, the purchase fails now, nothing is credited.
    const { order: unpaid } = await placeOrder(alice, '10');
    const redirectUrl = await confirmOrder(alice, unpaid.id);
    expect(await cancel(bob, unpaid.id, alice.accountId)).toMatchObject({ status: 403 });
    const first = await cancel(alice, unpaid.id);
    expect(first).toMatchObject({ status: 200, body: { state: 'FAILED', failureReason: 'The payment was cancelled' } });
    expect(await cancel(alice, unpaid.id)).toMatchObject({ status: 200, body: { state: 'FAILED' } });
    expect((await history(alice)).find((t) => t.id === (first.body as unknown as BuyOrderView).transactionId)).toMatchObject({ state: 'FAILED' });
    expect((await submit(pagePath(redirectUrl), { card: CARDS.paid, expiry: '12/40', cvc: '123' })).status).toBe(410);
    // Never confirmed: it expires, and a confirmation after it is refused.
    const { order: fresh } = await placeOrder(alice, '10');
    expect(await cancel(alice, fresh.id)).toMatchObject({ status: 200, body: { state: 'EXPIRED', transactionId: null } });
    expect(await call(alice, 'POST', '/api/b2c/order/confirm', { id: fresh.id, account: alice.accountId })).toMatchObject({ status: 400, body: { exceptionCode: 'B2C_ORDER_EXPIRED' } });
    // Paid just before the user came back: the cancel keeps the payment and the purchase completes.
    const { order: paid } = await placeOrder(alice, '10');
    const paidUrl = await confirmOrder(alice, paid.id);
    expect((await submit(pagePath(paidUrl), { card: CARDS.paid, expiry: '12/40', cvc: '123' })).status).toBe(303);
    expect((await cancel(alice, paid.id)).body).toMatchObject({ state: 'COMPLETED' });
    // A confirmation and a cancel at once: whichever wins, the order ends once and is never left open.
    const { order: raced } = await placeOrder(alice, '10');
    const confirming = call(alice, 'POST', '/api/b2c/order/confirm', { id: raced.id, account: alice.accountId, requestParams: {} });
    await cancel(alice, raced.id);
    await confirming;
    const settled = (await cancel(alice, raced.id)).body as unknown as BuyOrderView;
    expect(['EXPIRED', 'FAILED']).toContain(settled.state);
    expect(await cancel(alice, randomUUID())).toMatchObject({ status: 404, body: { exceptionCode: 'B2C_ORDER_NOT_FOUND' } });
    expect(await pool.query('SELECT 1 FROM ledger_entries WHERE idempotency_key = ANY($1::text[])', [[`buy:credit:${unpaid.id}`, `buy:credit:${fresh.id}`, `buy:credit:${raced.id}`]])).toMatchObject({ rowCount: 0 });
  });

  it('delivers outbox webhooks until a 2xx, with backoff, each claimed by one process at a time', async () => {
    const attempts = new Map<string, number>();
    const post = async (_url: string, _secret: string, body: string) => {
      const n = (attempts.get(body) ?? 0) + 1;
      attempts.set(body, n);
      await new Promise((resolve) => setTimeout(resolve, 20));
      return n < 3 ? { ok: false, error: 'HTTP 503' } : { ok: true };
    };
    const topic = `test-${randomUUID()}`;
    const a = createWebhookDeliverer({ pool, log: quietLog, topic, secret: SECRET, baseDelayMs: 500, post });
    const b = createWebhookDeliverer({ pool, log: quietLog, topic, secret: SECRET, baseDelayMs: 500, post });
    for (let i = 0; i < 5; i += 1) expect(await enqueueWebhook(pool, { topic, eventKey: `e${i}`, url: 'http://unused.test', body: `{"n":${i}}` })).toBe(true);
    expect(await enqueueWebhook(pool, { topic, eventKey: 'e0', url: 'http://unused.test', body: '{"n":0}' })).toBe(false);
    // Two deliverers at once never post the same event in the same round.
    await Promise.all([a.deliverDue(), b.deliverDue()]);
    expect([...attempts.values()]).toEqual([1, 1, 1, 1, 1]);
    // Not due again before its backoff.
    expect(await a.deliverDue()).toBe(0);
    expect([...attempts.values()]).toEqual([1, 1, 1, 1, 1]);
    await waitFor('every event delivered', async () => {
      await Promise.all([a.deliverDue(), b.deliverDue()]);
      const left = await pool.query('SELECT 1 FROM webhook_deliveries WHERE topic = $1 AND delivered_at IS NULL', [topic]);
      return left.rowCount === 0;
    });
    expect([...attempts.values()]).toEqual([3, 3, 3, 3, 3]);
    const rows = await pool.query<{ attempts: number }>('SELECT attempts FROM webhook_deliveries WHERE topic = $1', [topic]);
    expect(rows.rows.map((r) => r.attempts)).toEqual([3, 3, 3, 3, 3]);
  });
  it('limits each client address on the public endpoints that write rows (PUBLIC_RATE_LIMIT)', async () => {
    const limited = await startInProcess({ ...testServerEnv(database.url), ...ENV, WORKERS: 'off', PUBLIC_RATE_LIMIT: '2' });
    // The count is shared by every instance on the database (the other server's quotes above count too): start from none.
    await pool.query("DELETE FROM rate_limit WHERE key LIKE 'public:%'");
    try {
      const post = (path: string, body: unknown) =>
        fetch(`${limited.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as Record<string, unknown> }));
      const quoteBody = { currency: 'USDC_ETH', geoId: 'US', account: alice.accountId, fiatAmount: '100' };
      expect((await post('/api/b2c/fiat/method', quoteBody)).status).toBe(200);
      expect((await post('/api/fiatDeposit/methods', quoteBody)).status).toBe(200);
      const third = await post('/api/b2c/fiat/method', quoteBody);
      expect(third).toMatchObject({ status: 429, body: { exceptionCode: 'TOO_MANY_REQUESTS' } });
      expect(Number(third.retryAfter)).toBeGreaterThan(0);
      expect((await post('/api/b2c/order', { account: alice.accountId, idempotencyKey: randomUUID() })).status).toBe(429);
      // Reads and the signed-in routes are not counted.
      expect((await fetch(`${limited.url}/api/b2c/fiat/availability`)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  /**
   * Issue 14 item 11 for purchases: a fixed rate is no free option on a rising price, at the order and at its
   * confirmation (the last moment before the card can be charged). USDC's reference price is moved in the database
   * (the walk's own row; the server reads it at most once a second); the slippage is the default 100 bps.
   */
  describe('a buy rate is no free option', () => {
    const setUsdcUsd = async (usd: string) => {
      await pool.query(
        `INSERT INTO app_setting (key, value) VALUES ('rates.walk', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now()`,
        [{ prices: { USDC: parseDecimal(usd, 8).toString() } }],
      );
      await new Promise((resolve) => setTimeout(resolve, 1_100));
    };
    const orderOn = (quoted: BuyQuote, key = randomUUID()) =>
      call(undefined, 'POST', '/api/b2c/order', { rateId: quoted.fixedRateId, itemId: quoted.methods[0]?.itemId, description: 'Buy USDC', returnUrl, idempotencyKey: key, account: alice.accountId, fiatAmount: '100' });
    const confirmAnswer = (id: string) =>
      call(alice, 'POST', '/api/b2c/order/confirm', {
        id,
        account: alice.accountId,
        requestParams: { email: 'buyer@example.com', browserLanguage: 'en-US', screenHeight: 844, screenWidth: 390, timeZone: 'Europe/Berlin', userAgent: 'test', javascriptEnabled: true, ip: '' },
      });
    const fixedAt = async (usd: string) => {
      await setUsdcUsd(usd);
      return (await quote(undefined, alice.accountId, { fiatAmount: '100' })).body as unknown as BuyQuote;
    };

    afterAll(async () => {
      await pool.query(`DELETE FROM app_setting WHERE key = 'rates.walk'`);
    });

    it('refuses an order, and a confirmation, once the coin rose beyond the slippage; nothing is charged', async () => {
      const stale = await fixedAt('1');
      await setUsdcUsd('1.02');
      const key = randomUUID();
      expect(await orderOn(stale, key)).toMatchObject({ status: 400, body: { exceptionCode: 'B2C_RATE_EXPIRED' } });
      expect(await pool.query('SELECT 1 FROM buy_orders WHERE idempotency_key = $1', [key])).toMatchObject({ rowCount: 0 });

      const placed = await orderOn(await fixedAt('1'));
      expect(placed).toMatchObject({ status: 200, body: { state: 'NEW', rate: '1.015' } });
      const id = (placed.body as unknown as BuyOrderView).id;
      await setUsdcUsd('1.02');
      expect(await confirmAnswer(id)).toMatchObject({ status: 400, body: { exceptionCode: 'B2C_ORDER_EXPIRED' } });
      // No payment was asked of the provider: the order waits unconfirmed, with no page to pay on and no history item.
      expect(await orderOf(alice, id)).toMatchObject({ state: 'NEW', redirectUrl: null, transactionId: null });
    });

    it('honours a rate within the slippage, and one the price moved in the user\'s disfavour', async () => {
      const near = await fixedAt('1');
      await setUsdcUsd('1.009');
      expect(await orderOn(near)).toMatchObject({ status: 200, body: { rate: '1.015', cryptoAmount: '98.522167' } });
      const high = await fixedAt('1');
      await setUsdcUsd('0.98');
      const placed = await orderOn(high);
      expect(placed).toMatchObject({ status: 200, body: { rate: '1.015', cryptoAmount: '98.522167' } });
      expect(await confirmAnswer((placed.body as unknown as BuyOrderView).id)).toMatchObject({ status: 200 });
    });
  });
});
