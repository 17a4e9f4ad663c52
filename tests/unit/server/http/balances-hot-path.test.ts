import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBalancesHotPath } from '../../../../src/server/http/balances-hot-path.ts';

const ALICE = 'a1a1a1a1-0000-4000-8000-000000000001';
const ALICE_ACCOUNT = 'abcdef11-1111-4111-8111-111111111111';
const BOBS_ACCOUNT = '22222222-2222-4222-8222-222222222222';
const UNCACHED_ACCOUNT = '33333333-3333-4333-8333-333333333333';
const LIST = JSON.stringify([{ currency: 'BTC', isCrypto: true, isToken: false, totalAvailable: '0.5', onHold: '0', depositAddress: 'bc1qé' }]);

/**
 * The decisions of the balances poll's way around the gateway, on a real node server: it answers only when the
 * token, the owner and the list are all known from memory, and leaves every other request to the gateway (here a
 * 599 "gateway" answer, so a request it should have left shows).
 */
describe('the balances poll from memory', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const hot = createBalancesHotPath({
      auth: { cached: (token) => (token === 'known-token' ? { userId: ALICE, sub: ALICE } : undefined) },
      owners: { known: (account, userId) => userId === ALICE && account === ALICE_ACCOUNT },
      assets: { cached: (account) => (account === ALICE_ACCOUNT || account === BOBS_ACCOUNT ? LIST : undefined) },
    });
    server = createServer((req, res) => {
      if (hot(req, res)) return;
      res.writeHead(599, { 'content-type': 'text/plain' });
      res.end('gateway');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const get = (path: string, authorization = 'Bearer known-token', method = 'GET') => fetch(base + path, { method, headers: { authorization } });

  it('answers the cached list of an account its token owns, with its exact length', async () => {
    for (const path of [`/api/${ALICE_ACCOUNT}/asset`, `/api/${ALICE_ACCOUNT}/asset?ignored=1`]) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(LIST)));
      expect(await response.text()).toBe(LIST);
    }
    // The scheme's case, as the gateway's guard reads it (RFC 6750).
    expect((await get(`/api/${ALICE_ACCOUNT}/asset`, 'bearer known-token')).status).toBe(200);
  });

  it('leaves to the gateway whatever memory does not settle', async () => {
    const cases: Array<[string, Promise<Response>]> = [
      ['no token', get(`/api/${ALICE_ACCOUNT}/asset`, '')],
      ['another scheme', get(`/api/${ALICE_ACCOUNT}/asset`, 'Basic known-token')],
      ['a token not verified here yet', get(`/api/${ALICE_ACCOUNT}/asset`, 'Bearer other-token')],
      ["another user's account (the gateway answers 403)", get(`/api/${BOBS_ACCOUNT}/asset`)],
      ['a list not cached', get(`/api/${UNCACHED_ACCOUNT}/asset`)],
      ['another method', get(`/api/${ALICE_ACCOUNT}/asset`, 'Bearer known-token', 'POST')],
      ['a HEAD', get(`/api/${ALICE_ACCOUNT}/asset`, 'Bearer known-token', 'HEAD')],
      ['a trailing slash', get(`/api/${ALICE_ACCOUNT}/asset/`)],
      ['a longer path', get(`/api/${ALICE_ACCOUNT}/assets`)],
      ['another route of the account', get(`/api/${ALICE_ACCOUNT}/asset/transaction/x`)],
      ['an id in capitals', get(`/api/${ALICE_ACCOUNT.toUpperCase()}/asset`)],
      ['no id', get('/api/user/asset')],
    ];
    for (const [name, response] of cases) expect((await response).status, name).toBe(599);
  });
});
