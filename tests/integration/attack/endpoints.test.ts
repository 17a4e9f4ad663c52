/**
 * The attack suite: the malformed-input corpus against every endpoint the gateway registers (walked from the app
 * itself, so a new endpoint cannot escape it), /oidc's endpoints (from its discovery document) and cross-account
 * access. Nothing may answer 5xx; every refusal of the gateway is in the error shape.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { SignedInUser } from '../../support/auth.ts';
import type { InProcessServer } from '../../support/in-process.ts';
import { ANALYTICS_TEST_WRITE_KEY, startWithTwoUsers, TWO_USERS_PASSWORD, type TwoUsers } from '../../support/two-users.ts';

const PASSWORD = TWO_USERS_PASSWORD;
const ADDRESS = 'bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh';

type Probe = { what: string; method: string; path: string; headers?: Record<string, string>; body?: string | Uint8Array<ArrayBuffer> };
type Answer = Probe & { status: number; text: string };

/** Values a path parameter should never get: traversal, NUL, odd encodings, huge, injection, odd numbers. */
const ODD_SEGMENTS = ['..%2F..%2Fetc%2Fpasswd', '..', '%2e%2e%2f%2e%2e%2fetc', '%00', 'a%00b', 'x'.repeat(3000), '%E2%80%AE', "'%20OR%201%3D1--", '-1', '1e309', 'NaN', '%C0%AF', '%FF%FE', '00000000-0000-0000-0000-000000000000'];

/** Odd values put into every field of a body at once. */
const ODD_VALUES: unknown[] = [null, 0, -1, 1e308, true, [], {}, [[[[]]]], '', ' ', 'x'.repeat(20_000), 'a\u0000b', '\u0000', '\u202e\ud800', '../../etc/passwd', 'NaN', '-0', '1e309', "' OR 1=1--", { $ne: null }];

/** Number tokens JSON.parse would not keep as written, put raw into the body text. */
const ODD_NUMBER_TOKENS = ['5e-4', '0.00050000000000000001', '1e309', '-0', '12345678901234567890', '1E2', '0.1e1'];

/** Bodies that are not a usable JSON object at all. */
const ODD_BODIES: Array<[string, string | Uint8Array<ArrayBuffer>]> = [
  ['null', 'null'],
  ['array', '[]'],
  ['string', '"text"'],
  ['number', '7'],
  ['true', 'true'],
  ['empty', ''],
  ['truncated', '{"a":'],
  ['trailing', '{"a":1}}'],
  ['bom', '\ufeff{}'],
  ['raw NUL', '{"email":"a\u0000b"}'],
  ['escaped NUL key', '{"\\u0000":1}'],
  ['invalid UTF-8', new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0x22, 0x7d])],
  ['deep', '['.repeat(5000) + ']'.repeat(5000)],
  ['huge number', '{"amount":' + '9'.repeat(400) + '}'],
];

const CONTENT_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/xml', ''];

describe('attack: malformed input on every endpoint', () => {
  let world: TwoUsers;
  let server: InProcessServer;
  let alice: SignedInUser;
  let bob: SignedInUser;

  beforeAll(async () => {
    world = await startWithTwoUsers(inject('adminDatabaseUrl'), 'attack');
    ({ server, alice, bob } = world);
  }, 120_000);
  afterAll(async () => {
    await world?.close();
  });

  /** A plausible value for every field any endpoint reads, so one odd field at a time reaches past the others. */
  const baseBody = (): Record<string, unknown> => ({
    account: alice.accountId,
    currency: 'BTC',
    currencies: ['BTC'],
    amount: '0.001',
    cryptoAmount: '0.001',
    fiatAmount: '1000',
    fiatCurrency: 'RUB',
    sourceCurrency: 'BTC',
    destinationCurrency: 'ETH',
    sourceAmount: '0.001',
    depositAddress: ADDRESS,
    address: ADDRESS,
    idempotencyKey: randomUUID(),
    email: `attack-${randomUUID()}@example.com`,
    // Empty: a sign-up is refused before hashing (argon2 would make the suite slow), after every other field.
    password: '',
    newEmail: `attack-${randomUUID()}@example.com`,
    confirmationCode: 'AB12',
    accountName: 'Account',
    card: '4276000000000000',
    cardId: randomUUID(),
    quoteId: randomUUID(),
    fixedRateId: randomUUID(),
    id: randomUUID(),
    bankCode: 'SBR',
    bankSystem: 'VISA',
    saveCard: false,
    sort: 'DESC',
    properties: ['createdDate'],
    pageSize: 10,
    pageNumber: 1,
    initData: 'query_id=x&user=%7B%7D&auth_date=1&hash=00',
    name: 'name',
    label: 'label',
    comment: 'comment',
    network: 'BITCOIN',
    reference: 'reference',
    status: 'PAID',
    eventId: randomUUID(),
    language: 'ENG',
    requestParams: { email: 'a@example.com', browserLanguage: 'en', screenHeight: 800, screenWidth: 600, timeZone: 'UTC', userAgent: 'x', javascriptEnabled: true, ip: '127.0.0.1' },
  });
  const TEXT_FIELDS = ['account', 'currency', 'depositAddress', 'address', 'idempotencyKey', 'email', 'newEmail', 'confirmationCode', 'accountName', 'card', 'cardId', 'quoteId', 'fixedRateId', 'id', 'bankCode', 'name', 'label', 'comment', 'reference', 'eventId', 'initData', 'fiatAmount', 'amount'];
  const AMOUNT_FIELDS = ['amount', 'cryptoAmount', 'fiatAmount', 'sourceAmount'];

  /** The path with its parameters filled: the signed-in user's account, a fresh id, a currency, or `odd`. */
  const fill = (path: string, odd?: { name: string; value: string }, account = alice.accountId) =>
    path.replace(/:(\w+)(\{[^}]*\})?\??/g, (_match, name: string) => {
      if (odd && odd.name === name) return odd.value;
      if (name === 'account') return account;
      if (/currency$/i.test(name)) return name.toLowerCase().includes('fiat') ? 'RUB' : 'BTC';
      if (name === 'bin') return '427600';
      if (name === 'language') return 'ENG';
      if (name === 'hash') return 'ab'.repeat(32);
      return randomUUID();
    });
  const paramsOf = (path: string) => [...path.matchAll(/:(\w+)/g)].map((m) => m[1] ?? '');

  const send = async (probe: Probe): Promise<Answer> => {
    const hasBody = probe.body !== undefined && probe.method !== 'GET' && probe.method !== 'HEAD';
    try {
      const response = await fetch(`${server.url}${probe.path}`, {
        method: probe.method,
        // The analytics data plane takes its write key (Basic auth), so the corpus reaches its validation.
        headers: { authorization: probe.path.startsWith('/api/analytics/') ? `Basic ${btoa(`${ANALYTICS_TEST_WRITE_KEY}:`)}` : `Bearer ${alice.accessToken}`, ...(hasBody ? { 'content-type': 'application/json' } : {}), ...probe.headers },
        body: hasBody ? probe.body : undefined,
        signal: AbortSignal.timeout(20_000),
      });
      return { ...probe, status: response.status, text: await response.text() };
    } catch (error) {
      return { ...probe, status: 0, text: `${String(error)} ${String((error as Error).cause)}` };
    }
  };
  /** Sends every probe, a few at a time; returns the answers. */
  const sendAll = async (probes: Probe[], parallel = 6): Promise<Answer[]> => {
    const answers: Answer[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (next < probes.length) {
          const probe = probes[next++];
          if (probe) answers.push(await send(probe));
        }
      }),
    );
    return answers;
  };
  /** 5xx, no answer, or (on the gateway) a refusal outside the error shape: each is a finding. */
  const findings = (answers: Answer[]) =>
    answers
      .filter((a) => {
        if (a.status === 0 || a.status >= 500) return true;
        // The sandboxes stand in for third parties (a card page, the Bot API) and answer in their manner; /api in ours.
        if (a.status < 400 || !a.path.startsWith('/api')) return false;
        try {
          const body = JSON.parse(a.text) as { exceptionCode?: unknown; message?: unknown };
          return typeof body.exceptionCode !== 'string' || typeof body.message !== 'string';
        } catch {
          return true;
        }
      })
      .map((a) => `${a.status} ${a.method} ${a.path.slice(0, 160)} [${a.what}] ${a.text.slice(0, 200)}`);

  it('walks every registered endpoint of the gateway', () => {
    const listed = server.routes.map((r) => `${r.method} ${r.path}`);
    // The walk sees what createApi registered: areas, account routes, webhooks, sandboxes.
    for (const known of ['GET /api/health', 'POST /api/user', 'POST /api/rate', 'POST /api/:account/withdrawal', 'POST /api/:account/exchange', 'POST /api/webhooks/card', 'POST /api/webhooks/payout', 'POST /api/c2f/:account/order/byCard', 'POST /api/b2c/order', 'POST /api/analytics/v1/batch']) {
      expect(listed).toContain(known);
    }
    expect(listed.length).toBeGreaterThan(60);
  });

  it('answers odd path parameters, odd query strings and odd bodies on every endpoint with 4xx, never 5xx', async () => {
    const probes: Probe[] = [];
    for (const route of server.routes) {
      const methods = route.method === 'ALL' ? ['GET', 'POST'] : [route.method];
      for (const method of methods) {
        const withBody = method !== 'GET' && method !== 'HEAD';
        const body = withBody ? JSON.stringify(baseBody()) : undefined;
        for (const name of paramsOf(route.path)) {
          for (const value of ODD_SEGMENTS) probes.push({ what: `:${name}=${value.slice(0, 20)}`, method, path: fill(route.path, { name, value }), body });
        }
        for (const query of ['account=%00', 'account=..%2F..%2Fetc', `account=${'x'.repeat(3000)}`, 'currency=%00&pageSize=1e999', 'a=%ZZ', 'account=1&account=2']) {
          probes.push({ what: `?${query.slice(0, 30)}`, method, path: `${fill(route.path)}?${query}`, body });
        }
        if (!withBody) continue;
        const path = fill(route.path);
        for (const [what, raw] of ODD_BODIES) probes.push({ what: `body ${what}`, method, path, body: raw });
        for (const type of CONTENT_TYPES) probes.push({ what: `content-type ${type}`, method, path, body: JSON.stringify(baseBody()), headers: { 'content-type': type } });
        for (const value of ODD_VALUES) {
          const all = Object.fromEntries(Object.keys(baseBody()).map((key) => [key, value]));
          probes.push({ what: `every field ${JSON.stringify(value).slice(0, 20)}`, method, path, body: JSON.stringify(all) });
        }
        for (const field of TEXT_FIELDS) {
          for (const value of ['a\u0000b', 'x'.repeat(5_000), 7, { a: 1 }]) probes.push({ what: `${field}=${JSON.stringify(value).slice(0, 12)}`, method, path, body: JSON.stringify({ ...baseBody(), [field]: value }) });
        }
        for (const field of AMOUNT_FIELDS) {
          for (const token of ODD_NUMBER_TOKENS) probes.push({ what: `${field}=${token}`, method, path, body: JSON.stringify({ ...baseBody(), [field]: 'RAW' }).replace('"RAW"', token) });
        }
      }
    }
    const answers = await sendAll(probes);
    expect(answers.length).toBe(probes.length);
    expect(findings(answers)).toEqual([]);
    expect(server.logs.filter((line) => line.level >= 50).map((line) => `${line.msg} ${line.err?.message ?? ''}`)).toEqual([]);
  }, 180_000);

  it("refuses one user's token on another user's account routes with 403, on every account route", async () => {
    const probes: Probe[] = server.routes
      .filter((route) => route.path.includes(':account'))
      .map((route) => ({ what: 'bob on alice', method: route.method === 'ALL' ? 'GET' : route.method, path: fill(route.path), body: JSON.stringify(baseBody()), headers: { authorization: `Bearer ${bob.accessToken}` } }));
    // The older purchase family names the account in the query.
    for (const path of ['/api/fiatDeposit/order/confirm']) probes.push({ what: 'bob on alice (query)', method: 'POST', path: `${path}?account=${alice.accountId}`, body: JSON.stringify(baseBody()), headers: { authorization: `Bearer ${bob.accessToken}` } });
    expect(probes.length).toBeGreaterThan(20);
    const answers = await sendAll(probes);
    expect(answers.filter((a) => a.status !== 403).map((a) => `${a.status} ${a.method} ${a.path} ${a.text.slice(0, 120)}`)).toEqual([]);
  }, 60_000);

  it('refuses a NUL character inside an otherwise valid text with 400, where it would reach PostgreSQL', async () => {
    const probes: Probe[] = [
      { what: 'sign-up e-mail', method: 'POST', path: '/api/user', body: JSON.stringify({ email: 'a\u0000b@example.com', password: PASSWORD }) },
      { what: 'sign-up name', method: 'POST', path: '/api/user', body: JSON.stringify({ email: `nul-${randomUUID()}@example.com`, password: PASSWORD, accountName: 'A\u0000' }) },
      { what: 'password reset', method: 'POST', path: '/api/password-reset', body: JSON.stringify({ email: 'x\u0000@example.com' }) },
      { what: 'withdrawal key', method: 'POST', path: `/api/${alice.accountId}/withdrawal`, body: JSON.stringify({ currency: 'BTC', amount: '0.001', depositAddress: ADDRESS, idempotencyKey: `key-\u0000-${randomUUID()}` }) },
      { what: 'address check', method: 'POST', path: `/api/${alice.accountId}/withdrawal/check-address`, body: JSON.stringify({ currency: 'BTC', address: `${ADDRESS}\u0000` }) },
      { what: 'history', method: 'POST', path: `/api/${alice.accountId}/asset/transactions`, body: JSON.stringify({ currency: 'BTC\u0000', sort: 'DESC', properties: ['createdDate'], pageSize: 10, pageNumber: 1 }) },
      { what: 'path', method: 'GET', path: `/api/${alice.accountId}/withdrawal/a%00b` },
    ];
    for (const answer of await sendAll(probes, 1)) {
      expect(answer.status, `${answer.what}: ${answer.text}`).toBeGreaterThanOrEqual(400);
      expect(answer.status, `${answer.what}: ${answer.text}`).toBeLessThan(500);
    }
    const body = await sendAll(probes.slice(0, 5), 1);
    for (const answer of body) expect(JSON.parse(answer.text), answer.what).toMatchObject({ exceptionCode: 'VALIDATION' });
  });

  it('refuses amounts sent as JSON numbers with an exponent or more digits than a double keeps, on withdrawal, swap, buy and sell', async () => {
    const amountBodies = (token: string): Probe[] => [
      { what: 'withdrawal fee', method: 'POST', path: `/api/${alice.accountId}/withdrawal/preliminary/fee`, body: `{"currency":"BTC","amount":${token}}` },
      { what: 'withdrawal', method: 'POST', path: `/api/${alice.accountId}/withdrawal`, body: `{"currency":"BTC","amount":${token},"depositAddress":"${ADDRESS}","idempotencyKey":"${randomUUID()}"}` },
      { what: 'swap quote', method: 'POST', path: `/api/${alice.accountId}/exchange/pre-calculate`, body: `{"sourceCurrency":"BTC","destinationCurrency":"ETH","sourceAmount":${token}}` },
      { what: 'swap order', method: 'POST', path: `/api/${alice.accountId}/exchange`, body: `{"quoteId":"${randomUUID()}","sourceAmount":${token},"idempotencyKey":"${randomUUID()}"}` },
      { what: 'buy methods', method: 'POST', path: '/api/b2c/fiat/method', body: `{"account":"${alice.accountId}","currency":"BTC","fiatCurrency":"USD","cryptoAmount":${token}}` },
      { what: 'buy order', method: 'POST', path: '/api/b2c/order', body: `{"account":"${alice.accountId}","currency":"BTC","fiatCurrency":"USD","cryptoAmount":${token},"paymentMethod":"CARD"}` },
      { what: 'sell order', method: 'POST', path: `/api/c2f/${alice.accountId}/order/byCard`, body: `{"currency":"BTC","fiatCurrency":"RUB","fixedRateId":"${randomUUID()}","fiatAmount":${token},"card":"4276000000000000","idempotencyKey":"${randomUUID()}"}` },
    ];
    for (const token of ['5e-4', '0.00050000000000000001', '5E-4', '0.5e-3']) {
      for (const answer of await sendAll(amountBodies(token), 1)) {
        expect({ what: `${answer.what} ${token}`, status: answer.status, body: JSON.parse(answer.text) as unknown }).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
      }
    }
    // The same amount written exactly still counts.
    const exact = await send({ what: 'withdrawal fee', method: 'POST', path: `/api/${alice.accountId}/withdrawal/preliminary/fee`, body: '{"currency":"BTC","amount":0.0005}' });
    expect({ status: exact.status, body: JSON.parse(exact.text) as unknown }).toMatchObject({ status: 200, body: { amount: '0.0005' } });
  });

  it('sends the corpus to every endpoint of the identity provider too', async () => {
    const discovery = (await (await fetch(`${server.url}/oidc/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    const endpoints = Object.entries(discovery)
      .filter(([key, value]) => key.endsWith('_endpoint') && typeof value === 'string')
      .map(([, value]) => new URL(String(value)).pathname);
    expect(endpoints).toContain('/oidc/token');
    const probes: Probe[] = [];
    for (const path of [...endpoints, '/oidc/interaction/x/login', '/oidc/interaction/%00', '/oidc/..%2F..%2Fetc%2Fpasswd']) {
      for (const [what, raw] of ODD_BODIES) {
        probes.push({ what: `form ${what}`, method: 'POST', path, body: raw, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
        probes.push({ what: `json ${what}`, method: 'POST', path, body: raw });
      }
      for (const query of ['client_id=%00', `client_id=${'x'.repeat(3000)}`, 'a=%ZZ', 'grant_type=refresh_token&refresh_token=%00']) probes.push({ what: `?${query.slice(0, 20)}`, method: 'GET', path: `${path}?${query}` });
      for (const form of ['grant_type=refresh_token&client_id=wallet-web&refresh_token=a%00b', 'grant_type=authorization_code&client_id=%00&code=%00', 'client_id=a%00b&token=%00']) {
        probes.push({ what: `form ${form.slice(0, 30)}`, method: 'POST', path, body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      }
    }
    expect(findings(await sendAll(probes))).toEqual([]);
  }, 60_000);
});
