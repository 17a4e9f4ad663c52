/**
 * The one account-owner guard on every /{account} route the gateway registers (walked from the app itself): another
 * user's token, or an account that does not exist, is 403 FORBIDDEN; no token is 401. Sell honours the
 * Idempotency-Key header like the other flows. The balances poll answered from memory is the gateway's answer, byte
 * for byte, and small answers go uncompressed.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { SignedInUser } from '../../support/auth.ts';
import type { InProcessServer } from '../../support/in-process.ts';
import { startWithTwoUsers, type TwoUsers } from '../../support/two-users.ts';

describe('the account-owner guard', () => {
  let world: TwoUsers;
  let server: InProcessServer;
  let alice: SignedInUser;
  let bob: SignedInUser;

  beforeAll(async () => {
    world = await startWithTwoUsers(inject('adminDatabaseUrl'), 'owner');
    ({ server, alice, bob } = world);
  }, 120_000);
  afterAll(async () => {
    await world?.close();
  });

  // Each first poll is the gateway's (the list kept from adding the currencies has run out, after 2 s), and the
  // second is answered from memory (balances-hot-path.ts).
  it('answers the balances poll from memory exactly as the gateway does, and only to the owner', async () => {
    for (const user of [alice, bob]) {
      const added = await fetch(`${server.url}/api/${user.accountId}/account/currency/list`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ currencies: ['BTC', 'ETH', 'TON'] }),
      });
      expect(added.status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const poll = async (user: SignedInUser, account: string, acceptEncoding: string) => {
      const response = await fetch(`${server.url}/api/${account}/asset`, { headers: { authorization: `Bearer ${user.accessToken}`, 'accept-encoding': acceptEncoding } });
      const headers = Object.fromEntries([...response.headers].filter(([name]) => name !== 'date' && name !== 'x-request-id'));
      return { status: response.status, headers, body: await response.text(), requestId: response.headers.get('x-request-id') };
    };
    for (const [user, acceptEncoding] of [[alice, 'identity'], [bob, 'gzip, deflate, br']] as const) {
      const gateway = await poll(user, user.accountId, acceptEncoding);
      const memory = await poll(user, user.accountId, acceptEncoding);
      expect(gateway.status).toBe(200);
      expect(JSON.parse(gateway.body)).toEqual(expect.arrayContaining([expect.objectContaining({ currency: 'BTC', depositAddress: expect.any(String) })]));
      expect({ ...memory, requestId: undefined }).toEqual({ ...gateway, requestId: undefined });
      expect(gateway.headers['content-length']).toBe(String(Buffer.byteLength(gateway.body)));
      expect(gateway.headers['x-content-type-options']).toBe('nosniff');
      expect(memory.requestId).toMatch(/^[\w-]+$/);
      expect(memory.requestId).not.toBe(gateway.requestId);
    }
    // Alice's list is in memory now: Bob's token on it is still the guard's 403, and no token its 401.
    expect((await poll(alice, alice.accountId, 'identity')).status).toBe(200);
    const refused = await poll(bob, alice.accountId, 'identity');
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ exceptionCode: 'FORBIDDEN' });
    expect((await fetch(`${server.url}/api/${alice.accountId}/asset`)).status).toBe(401);
  });

  it('sends any small JSON answer of the gateway to a browser uncompressed, with its length (compress.ts)', async () => {
    const profile = await fetch(`${server.url}/api/user`, { headers: { authorization: `Bearer ${alice.accessToken}`, 'accept-encoding': 'gzip, deflate, br, zstd' } });
    const text = await profile.text();
    expect(profile.status).toBe(200);
    expect(profile.headers.get('content-encoding')).toBeNull();
    expect(profile.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
  });

  const fill = (path: string, account: string) =>
    path.replace(/:(\w+)/g, (_match, name: string) => {
      if (name === 'account') return account;
      if (/currency$/i.test(name)) return name.toLowerCase().includes('fiat') ? 'RUB' : 'BTC';
      return randomUUID();
    });
  const send = async (method: string, path: string, token: string | undefined, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json', ...headers },
      body: method === 'GET' ? undefined : JSON.stringify(body ?? { currency: 'BTC', amount: '0.001', idempotencyKey: randomUUID() }),
    });
    return { status: response.status, body: (await response.json()) as { exceptionCode?: string; message?: string } };
  };
  /** A signed download link is its own credential (a browser or Telegram opens it without a bearer token): it is guarded by its signature. */
  const SIGNED_LINKS = ['/api/:account/asset/transactions.csv'];
  const accountRoutes = () => server.routes.filter((route) => route.path.includes('/:account') && !SIGNED_LINKS.includes(route.path));

  it('guards every account route: a foreign or unknown account is 403 FORBIDDEN, no token 401', async () => {
    const routes = accountRoutes();
    expect(routes.length).toBeGreaterThan(20);
    expect(routes.map((r) => r.path)).toContain('/api/c2f/:account/order/byCard');
    const refused: string[] = [];
    for (const route of routes) {
      const method = route.method === 'ALL' ? 'GET' : route.method;
      for (const [who, token, account, status, code] of [
        ['bob on alice', bob.accessToken, alice.accountId, 403, 'FORBIDDEN'],
        ['alice on nobody', alice.accessToken, randomUUID(), 403, 'FORBIDDEN'],
        ['no token', undefined, alice.accountId, 401, 'UNAUTHORIZED'],
      ] as const) {
        const answer = await send(method, fill(route.path, account), token);
        if (answer.status !== status || answer.body.exceptionCode !== code) refused.push(`${who}: ${method} ${route.path} → ${answer.status} ${JSON.stringify(answer.body)}`);
      }
    }
    expect(refused).toEqual([]);
    for (const path of SIGNED_LINKS) {
      for (const token of [bob.accessToken, alice.accessToken, undefined]) {
        expect(await send('GET', fill(path, alice.accountId), token)).toMatchObject({ status: 403, body: { exceptionCode: 'EXPORT_LINK_INVALID' } });
      }
    }
  }, 120_000);

  it('answers an unknown path under an account as any unknown endpoint: 404 NOT_FOUND in the error shape', async () => {
    for (const token of [alice.accessToken, undefined]) {
      const answer = await send('GET', `/api/${alice.accountId}/no-such-thing`, token);
      expect(answer).toEqual({ status: 404, body: { exceptionCode: 'NOT_FOUND', message: `No such endpoint: GET /api/${alice.accountId}/no-such-thing` } });
    }
  });

  it('lets the owner through the same guard', async () => {
    expect(await send('GET', `/api/${alice.accountId}/asset`, alice.accessToken)).toMatchObject({ status: 200 });
    expect(await send('GET', `/api/c2f/${alice.accountId}/limit/RUB`, alice.accessToken)).toMatchObject({ status: 200 });
  });

  it('takes a token only whole: another token ending as a verified one (its cache key) is verified on its own', async () => {
    const path = `/api/${alice.accountId}/asset`;
    expect(await send('GET', path, alice.accessToken)).toMatchObject({ status: 200 });
    const [, , signature] = alice.accessToken.split('.');
    const [bobHeader, bobPayload] = bob.accessToken.split('.');
    // Bob's claims under Alice's signature, and Alice's token with one character of its claims changed.
    const spliced = `${bobHeader}.${bobPayload}.${signature}`;
    const [head, claims = ''] = alice.accessToken.split('.');
    const middle = Math.floor(claims.length / 2);
    const tampered = `${head}.${claims.slice(0, middle)}${claims[middle] === 'A' ? 'B' : 'A'}${claims.slice(middle + 1)}.${signature}`;
    for (const token of [spliced, tampered]) {
      expect(await send('GET', `/api/${bob.accountId}/asset`, token)).toMatchObject({ status: 401, body: { exceptionCode: 'UNAUTHORIZED' } });
      expect(await send('GET', path, token)).toMatchObject({ status: 401, body: { exceptionCode: 'UNAUTHORIZED' } });
    }
    expect(await send('GET', path, alice.accessToken)).toMatchObject({ status: 200 });
  });

  it('reads the idempotency key of a sale from the Idempotency-Key header when the body has none', async () => {
    const body = { card: '4276380000000001', currency: 'BTC', fiatCurrency: 'RUB', fixedRateId: randomUUID(), fiatAmount: '5000', saveCard: false };
    const withoutKey = await send('POST', `/api/c2f/${alice.accountId}/order/byCard`, alice.accessToken, body);
    expect(withoutKey).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION', message: 'idempotencyKey: give 8 to 100 characters in the body or the Idempotency-Key header' } });
    // With the header the key is taken: the order gets as far as its (unknown) rate.
    const withHeader = await send('POST', `/api/c2f/${alice.accountId}/order/byCard`, alice.accessToken, body, { 'idempotency-key': randomUUID() });
    expect(withHeader).toMatchObject({ status: 400, body: { exceptionCode: 'C2F_RATE_NOT_FOUND' } });
  });
});
