import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { networkInterfaces } from 'node:os';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { launchProductionServer, launchServer, type LaunchedServer } from '../../support/server.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient, type Answer as GatewayAnswer } from '../../support/http.ts';
import { TEST_MNEMONIC, TEST_SECRETS_KEY, waitFor } from '../../support/custody.ts';
import { startMailCatcher, type MailCatcher } from '../../support/smtp.ts';
import { NETWORKS, type CoinMeta } from '../../../src/lib/currencies.ts';

const FAUCET_TARGET = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu';

async function countRows(databaseUrl: string, sql: string, values: unknown[]): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return Number((await client.query<{ count: string }>(sql, values)).rows[0]?.count);
  } finally {
    await client.end();
  }
}

/** Every development stand-in the gateway has: method, path and a body that a mounted stand-in would take. */
const STAND_INS: { method: 'GET' | 'POST'; path: string; body?: unknown }[] = [
  { method: 'POST', path: '/sandbox/devnet/deposit', body: { currency: 'BTC', address: FAUCET_TARGET, amount: '5' } },
  { method: 'POST', path: '/sandbox/devnet/fail', body: { currency: 'BTC', address: FAUCET_TARGET, mode: 'REJECT' } },
  { method: 'GET', path: `/sandbox/devnet/broadcasts/${'ab'.repeat(32)}` },
  { method: 'GET', path: '/sandbox/devnet/heights' },
  { method: 'GET', path: `/sandbox/devnet/tx/${'ab'.repeat(32)}` },
  { method: 'GET', path: '/sandbox/payout/bins' },
  { method: 'GET', path: '/sandbox/payout/payouts' },
  { method: 'GET', path: `/sandbox/card/pay/${randomUUID()}` },
  { method: 'GET', path: '/sandbox/card/payments' },
  { method: 'POST', path: '/sandbox/card/webhooks/flush' },
  { method: 'GET', path: '/sandbox/telegram/sent' },
  { method: 'GET', path: '/sandbox/telegram/start?code=abcdef' },
  { method: 'POST', path: '/sandbox/telegram/bot123:abc/sendMessage', body: { chat_id: 1, text: 'hi' } },
  { method: 'GET', path: '/api/tg/dev/init-data?id=100000001' },
];

type Answer = GatewayAnswer<Record<string, unknown> | undefined>;

/** The server is named per call: this file runs several. */
function call(base: string, method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; user?: SignedInUser } = {}): Promise<Answer> {
  return gatewayClient<Record<string, unknown> | undefined>(base)(options.user, method, path, options.body, options.headers);
}

/** The JSON log lines the start wrote about what it runs. */
type StartLine = { msg: string; on?: string[]; off?: string[] };

/** The start lines printed so far, once there is one: the log is written asynchronously, in batches. */
async function startLines(server: LaunchedServer): Promise<StartLine[]> {
  const printed = () =>
    server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as StartLine)
      .filter((line) => line.msg.startsWith('wallet started'));
  return waitFor('the start line', async () => { const lines = printed(); return lines.length > 0 && lines; }, 5_000);
}

/** A clear refusal: the status asked for, in the gateway's error shape. */
function expectRefusal(answer: Answer, status: number, code: string, what: string): void {
  expect({ what, status: answer.status, code: answer.body?.exceptionCode }).toEqual({ what, status, code });
  expect(typeof answer.body?.message, what).toBe('string');
}

describe('production with no real adapter configured', () => {
  let database: TestDatabase;
  let server: LaunchedServer;
  let user: SignedInUser;
  let smtp: MailCatcher;

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    smtp = await startMailCatcher();
    server = await launchProductionServer({ DATABASE_URL: database.url, APP_ENV: 'production', WALLET_SEED: TEST_MNEMONIC, SECRETS_KEY: TEST_SECRETS_KEY, SMTP_URL: smtp.url, LOG_LEVEL: 'info', WORKER_POLL_MS: '100' });
    user = await signUpAndSignIn(server.url, {
      email: `prod-${Date.now()}@example.com`,
      password: 'a long enough passphrase 42',
      databaseUrl: database.url,
      confirmationLink: (email) => smtp.waitForLink(email, /Confirm your e-mail/),
    });
  }, 120_000);

  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    await smtp?.close();
    await database?.drop();
  });

  it('logs one start line that lists what is on and what is off: every network, buying, selling and the stand-ins off', async () => {
    const started = await startLines(server);
    expect(started).toHaveLength(1);
    const [line] = started;
    expect(line?.msg).toMatch(/^wallet started \(production\): on: .*; off: .*/);
    for (const network of NETWORKS) expect(line?.off).toContainEqual(expect.stringContaining(network));
    expect(line?.off).toContainEqual(expect.stringMatching(/^buying/));
    expect(line?.off).toContainEqual(expect.stringMatching(/^selling/));
    expect(line?.off).toContainEqual(expect.stringMatching(/^stand-ins/));
    expect(line?.on?.join(' ') ?? '').not.toMatch(/devnet|sandbox|stand-in/);
    expect(line?.on).toContain('mail (SMTP_URL)');
  });

  it('quotes at no price without RATES_SOURCES: the start line says so and no fiat value is invented', async () => {
    const [line] = await startLines(server);
    expect(line?.off).toContainEqual(expect.stringMatching(/^prices \(RATES_SOURCES unset/));
    const rates = await call(server.url, 'POST', '/api/rate', { body: { currencies: ['BTC', 'ETH'], fiatCurrencies: ['USD', 'EUR'] } });
    expect(rates).toMatchObject({ status: 200, body: { ratesMap: { BTC: {}, ETH: {} }, asOf: {} } });
    expect(await call(server.url, 'POST', '/api/fiat/rate/invert', { body: { currencies: ['BTC'], fiatCurrencies: ['USD'] } })).toMatchObject({ status: 200, body: { ratesMap: { USD: {} } } });
  });

  it('offers no active coin: the catalogue lists the coins, each inactive', async () => {
    const answer = await call(server.url, 'GET', '/api/b2c-wallet/meta-info/coin');
    expect(answer.status).toBe(200);
    const coins = (answer.body as { crypto: CoinMeta[] }).crypto;
    expect(coins.length).toBeGreaterThan(0);
    expect(coins.filter((coin) => coin.active).map((coin) => coin.currency)).toEqual([]);
  });

  it('tells the browser that buying and selling are off', async () => {
    const answer = await call(server.url, 'GET', '/api/client-config');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ buyEnabled: false, sellEnabled: false });
  });

  it('refuses every buy call clearly (503 B2C_UNAVAILABLE), never with a 500', async () => {
    const account = user.accountId;
    expectRefusal(await call(server.url, 'GET', '/api/b2c/fiat/availability'), 503, 'B2C_UNAVAILABLE', 'availability');
    expectRefusal(await call(server.url, 'GET', `/api/fiatDeposit/geo?account=${account}`), 503, 'B2C_UNAVAILABLE', 'geo');
    expectRefusal(await call(server.url, 'POST', '/api/b2c/fiat/method', { body: { currency: 'USDC_ETH', geoId: 'US', account, fiatAmount: '1000' } }), 503, 'B2C_UNAVAILABLE', 'methods');
    expectRefusal(await call(server.url, 'POST', '/api/b2c/rate', { body: { currency: 'USDC_ETH', fiatCurrency: 'USD' } }), 503, 'B2C_UNAVAILABLE', 'rate');
    const order = { rateId: randomUUID(), itemId: randomUUID(), returnUrl: `${server.url}/home`, idempotencyKey: `prod-${randomUUID()}`, account, fiatAmount: '1000' };
    expectRefusal(await call(server.url, 'POST', '/api/b2c/order', { body: order }), 503, 'B2C_UNAVAILABLE', 'order');
    expectRefusal(await call(server.url, 'POST', '/api/b2c/order/confirm', { body: { id: randomUUID(), account }, user }), 503, 'B2C_UNAVAILABLE', 'confirm');
    expectRefusal(await call(server.url, 'POST', '/api/webhooks/card', { body: {} }), 404, 'NOT_FOUND', 'card webhook');
  });

  it('refuses every sell call clearly (503 C2F_PAYOUTS_UNAVAILABLE), never with a 500', async () => {
    const account = user.accountId;
    expectRefusal(await call(server.url, 'GET', '/api/c2f/bin/427638', { user }), 503, 'C2F_PAYOUTS_UNAVAILABLE', 'bin');
    expectRefusal(await call(server.url, 'GET', `/api/c2f/${account}/cards/RUB`, { user }), 503, 'C2F_PAYOUTS_UNAVAILABLE', 'cards');
    expectRefusal(await call(server.url, 'GET', `/api/c2f/${account}/limit/RUB`, { user }), 503, 'C2F_PAYOUTS_UNAVAILABLE', 'limit');
    expectRefusal(await call(server.url, 'POST', `/api/c2f/${account}/rate/RUB/BTC`, { user }), 503, 'C2F_PAYOUTS_UNAVAILABLE', 'rate');
    const order = { currency: 'BTC', fiatCurrency: 'RUB', fixedRateId: randomUUID(), fiatAmount: '5000', idempotencyKey: `prod-${randomUUID()}` };
    expectRefusal(await call(server.url, 'POST', `/api/c2f/${account}/order/byCard`, { body: { ...order, card: '4276380000000001' }, user }), 503, 'C2F_PAYOUTS_UNAVAILABLE', 'byCard');
    expectRefusal(await call(server.url, 'POST', `/api/c2f/${account}/order/bySavedCard`, { body: { ...order, cardId: randomUUID() }, user }), 503, 'C2F_PAYOUTS_UNAVAILABLE', 'bySavedCard');
    expectRefusal(await call(server.url, 'POST', '/api/webhooks/payout', { body: {} }), 404, 'NOT_FOUND', 'payout webhook');
  });

  it('gives no deposit address, withdrawal or swap on a network that is off', async () => {
    const account = user.accountId;
    expectRefusal(await call(server.url, 'POST', `/api/${account}/account/currency`, { body: { currency: 'BTC' }, user }), 400, 'UNKNOWN_CURRENCY', 'add BTC');
    expectRefusal(await call(server.url, 'POST', `/api/${account}/account/currency/list`, { body: { currencies: ['BTC', 'ETH', 'USDT_TRX'] }, user }), 400, 'UNKNOWN_CURRENCY', 'add common assets');
    const assets = await call(server.url, 'GET', `/api/${account}/asset`, { user });
    expect(assets.status).toBe(200);
    expect((assets.body as unknown as { depositAddress: string | null }[]).filter((a) => a.depositAddress !== null)).toEqual([]);
    expectRefusal(await call(server.url, 'POST', `/api/${account}/withdrawal/check-address`, { body: { currency: 'BTC', address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu' }, user }), 400, 'UNKNOWN_CURRENCY', 'check address');
    const withdrawal = { currency: 'BTC', amount: '0.01', depositAddress: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', idempotencyKey: `prod-${randomUUID()}` };
    expectRefusal(await call(server.url, 'POST', `/api/${account}/withdrawal`, { body: withdrawal, user }), 400, 'UNKNOWN_CURRENCY', 'withdrawal');
    const swap = await call(server.url, 'POST', `/api/${account}/exchange/pre-calculate`, { body: { sourceCurrency: 'BTC', destinationCurrency: 'ETH', sourceAmount: '0.01' }, user });
    expect(swap.status).toBeGreaterThanOrEqual(400);
    expect(swap.status).toBeLessThan(500);
    expect(typeof swap.body?.exceptionCode).toBe('string');
  });

  it('answers 404 on every /sandbox path and the development init data', async () => {
    for (const standIn of STAND_INS) {
      const answer = await call(server.url, standIn.method, standIn.path, { body: standIn.body });
      expect({ path: standIn.path, status: answer.status }).toEqual({ path: standIn.path, status: 404 });
    }
  });
});

describe('development stand-ins', () => {
  let database: TestDatabase;
  let server: LaunchedServer;

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    // No APP_ENV: development, as `npm start` runs it.
    // Analytics as `npm start` has it too (tests turn it off unless they ask): a generated key, the embedded data plane.
    server = await launchServer({ DATABASE_URL: database.url, APP_ENV: '', WALLET_SEED: TEST_MNEMONIC, CARD_SANDBOX_DELAY_MS: '60000', LOG_LEVEL: 'info', ANALYTICS_WRITE_KEY: '' });
  }, 120_000);

  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    await database?.drop();
  });

  it('are listed as on in the start line, loopback only', async () => {
    const [line, ...more] = await startLines(server);
    expect(more).toEqual([]);
    expect(line?.msg).toMatch(/^wallet started \(development\): on: /);
    for (const network of NETWORKS) expect(line?.on).toContain(`${network} (devnet)`);
    expect(line?.on).toContain('buying (card provider sandbox)');
    expect(line?.on).toContain('stand-ins /sandbox/{devnet,card,payout,telegram} (loopback only)');
    // The sell flow takes orders whatever SELL_ENABLED says: the line must not call it off.
    expect(line?.on).toContain('selling (payout provider sandbox; its entry hidden by SELL_ENABLED=off)');
    expect(line?.on).toContain('analytics (embedded data plane /api/analytics)');
    expect(line?.on).toContain('prices (reference table and its random walk: development only)');
    expect(line?.off).toEqual([]);
  });

  it('answer a request straight from loopback', async () => {
    for (const standIn of STAND_INS) {
      const answer = await call(server.url, standIn.method, standIn.path, { body: standIn.body });
      expect({ path: standIn.path, found: answer.status !== 404 || answer.body?.exceptionCode !== 'NOT_FOUND' }).toEqual({ path: standIn.path, found: true });
    }
    expect(await countRows(database.url, `SELECT count(*) FROM devnet_transactions WHERE to_address = $1`, [FAUCET_TARGET])).toBe(1);
  });

  it('answer 404 to a loopback request that carries any forwarding header', async () => {
    const transfers = () => countRows(database.url, `SELECT count(*) FROM devnet_transactions WHERE to_address = $1`, [FAUCET_TARGET]);
    const before = await transfers();
    const forwarded: Record<string, string>[] = [{ 'x-forwarded-for': '203.0.113.7' }, { forwarded: 'for=203.0.113.7;proto=https' }, { 'x-real-ip': '203.0.113.7' }];
    for (const headers of forwarded) {
      for (const standIn of STAND_INS) {
        const answer = await call(server.url, standIn.method, standIn.path, { body: standIn.body, headers });
        expect({ path: standIn.path, headers, status: answer.status, code: answer.body?.exceptionCode }).toEqual({ path: standIn.path, headers, status: 404, code: 'NOT_FOUND' });
      }
    }
    // The faucet sent nothing for them.
    expect(await transfers()).toBe(before);
  });

  // A real non-loopback socket: this machine's own network address, where it has one (the unit test fakes one).
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && !i.internal && i.family === 'IPv4')?.address;
  it.runIf(external !== undefined)('answer 404 to a request from a non-loopback address', async () => {
    const base = server.url.replace('127.0.0.1', external ?? '');
    expect((await call(base, 'GET', '/api/health')).status).toBe(200);
    for (const standIn of STAND_INS) {
      const answer = await call(base, standIn.method, standIn.path, { body: standIn.body });
      expect({ path: standIn.path, status: answer.status }).toEqual({ path: standIn.path, status: 404 });
    }
  });
});
