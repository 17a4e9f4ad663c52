import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiCall, configureApi, setApiSession } from '../../../src/api/client.ts';
import { WalletError } from '../../../src/api/errors.ts';
import type { ApiSession } from '../../../src/api/session.ts';
import { errorText } from '../../../src/stores/errors.ts';

type Seen = { method: string; url: string; authorization?: string; pincode?: string; body: string };
type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen) => void;

let server: Server;
let handler: Handler = (_req, res) => res.end();
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const entry: Seen = { method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, pincode: req.headers.pincode as string | undefined, body };
      seen.push(entry);
      handler(req, res, entry);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  configureApi({ baseURL: `http://127.0.0.1:${address && typeof address === 'object' ? address.port : 0}/api`, timeoutMs: 2_000 });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** A session whose tokens the test scripts: what re-authentication yields and whether sign-out happened. */
function fakeSession(token: string | null, renewed: string | null) {
  const state = { reauths: 0, signedOut: 0 };
  const session: ApiSession = {
    accessToken: async () => token,
    reauthenticate: async () => {
      state.reauths++;
      return renewed;
    },
    signOutSilently: () => {
      state.signedOut++;
    },
  };
  return { session, state };
}

async function failure(call: Promise<unknown>): Promise<WalletError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof WalletError) return error;
    throw error;
  }
  throw new Error('the call did not fail');
}

describe('gateway client', () => {
  beforeEach(() => {
    seen.length = 0;
  });
  afterEach(() => setApiSession(null));

  it('sends the bearer token, JSON bodies and the pincode header only when non-empty', async () => {
    setApiSession(fakeSession('token-1', null).session);
    handler = (_req, res) => json(res, 200, { ok: true });
    expect(await apiCall('/user/pinCode/validate', { method: 'POST', body: { a: 1 }, pincode: '1234' })).toEqual({ ok: true });
    await apiCall('/user', { pincode: '' });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/api/user/pinCode/validate', authorization: 'Bearer token-1', pincode: '1234', body: '{"a":1}' });
    expect(seen[1]).toMatchObject({ method: 'GET', url: '/api/user', authorization: 'Bearer token-1' });
    expect(seen[1]?.pincode).toBeUndefined();
  });

  it('public calls carry no token, and their 401 is an answer, not a reason to renew', async () => {
    const { session, state } = fakeSession('token-1', 'token-2');
    setApiSession(session);
    handler = (_req, res) => json(res, 401, { exceptionCode: 'B2C_USM0025', message: 'Invalid token' });
    const error = await failure(apiCall('/auth/tg', { method: 'POST', body: {}, public: true }));
    expect(seen[0]?.authorization).toBeUndefined();
    expect(error).toMatchObject({ code: 'B2C_USM0025', message: 'Invalid token', status: 401, fromServer: true });
    expect(state).toEqual({ reauths: 0, signedOut: 0 });
  });

  it("keeps the gateway's Retry-After on the error (a passcode lockout's wait)", async () => {
    setApiSession(fakeSession('token-1', null).session);
    handler = (_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '30' });
      res.end(JSON.stringify({ exceptionCode: 'B2C_USM0030', message: 'Too many wrong pin codes. Try again in 30 s' }));
    };
    expect(await failure(apiCall('/user/pinCode/validate', { method: 'POST', pincode: '0000' }))).toMatchObject({ code: 'B2C_USM0030', retryAfterSeconds: 30 });
    handler = (_req, res) => json(res, 400, { exceptionCode: 'B2C_USM0031', message: 'Incorrect pin code' });
    expect((await failure(apiCall('/user/pinCode/validate', { method: 'POST', pincode: '0000' }))).retryAfterSeconds).toBeUndefined();
  });

  it('keeps the network a NETWORK_UNAVAILABLE names, and says which in the user\'s words', async () => {
    setApiSession(fakeSession('token-1', null).session);
    handler = (_req, res) => json(res, 503, { exceptionCode: 'NETWORK_UNAVAILABLE', message: 'The LITECOIN network is not answering right now; try again shortly', network: 'LITECOIN' });
    const error = await failure(apiCall('/x/withdrawal/check-address', { method: 'POST', body: { currency: 'LTC', address: 'x' } }));
    expect(error).toMatchObject({ code: 'NETWORK_UNAVAILABLE', status: 503, network: 'LITECOIN' });
    expect(errorText(error, { serverMessage: true })).toBe("The Litecoin network isn't answering right now. Please try again in a few minutes.");
    expect(errorText(error, { serverMessage: 'refusal', fallback: 'sell_unavailable' })).toBe("The Litecoin network isn't answering right now. Please try again in a few minutes.");
  });

  it('a 401 re-authenticates and retries once with the new token', async () => {
    const { session, state } = fakeSession('old', 'new');
    setApiSession(session);
    handler = (req, res) => (req.headers.authorization === 'Bearer new' ? json(res, 200, { email: 'a@b.io' }) : json(res, 401, { exceptionCode: 'UNAUTHORIZED', message: 'expired' }));
    expect(await apiCall('/user')).toEqual({ email: 'a@b.io' });
    expect(seen.map((entry) => entry.authorization)).toEqual(['Bearer old', 'Bearer new']);
    expect(state).toEqual({ reauths: 1, signedOut: 0 });
  });

  it('a second 401 signs out silently, without a third try', async () => {
    const { session, state } = fakeSession('old', 'new');
    setApiSession(session);
    handler = (_req, res) => json(res, 401, { exceptionCode: 'UNAUTHORIZED', message: 'no' });
    const error = await failure(apiCall('/user'));
    expect(error.code).toBe('UNAUTHORIZED');
    expect(seen).toHaveLength(2);
    expect(state).toEqual({ reauths: 1, signedOut: 1 });
  });

  it('a failed re-authentication signs out silently and does not retry', async () => {
    const { session, state } = fakeSession('old', null);
    setApiSession(session);
    handler = (_req, res) => json(res, 401, {});
    const error = await failure(apiCall('/user'));
    expect(error.code).toBe('UNAUTHORIZED');
    expect(seen).toHaveLength(1);
    expect(state).toEqual({ reauths: 1, signedOut: 1 });
  });

  it('keeps the gateway error shape {exceptionCode, message}', async () => {
    handler = (_req, res) => json(res, 400, { exceptionCode: 'B2C_USM0031', message: 'Incorrect pin code' });
    const error = await failure(apiCall('/user/pinCode/validate', { method: 'POST', pincode: '0000' }));
    expect(error).toBeInstanceOf(WalletError);
    expect(error).toMatchObject({ code: 'B2C_USM0031', message: 'Incorrect pin code', status: 400, fromServer: true });
  });

  it('an error without a code is named by its status', async () => {
    handler = (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<h1>Bad gateway</h1>');
    };
    expect(await failure(apiCall('/user'))).toMatchObject({ code: 'HTTP_502', status: 502, fromServer: false });
  });

  it('an answer that is not JSON is a PARSING_ERROR', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><p>not the gateway</p>');
    };
    const error = await failure(apiCall('/user'));
    expect(error.code).toBe('PARSING_ERROR');
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('an empty answer is fine', async () => {
    handler = (_req, res) => {
      res.writeHead(204);
      res.end();
    };
    expect(await apiCall('/user/language/RUS', { method: 'POST' })).toBeUndefined();
  });

  it('no answer in time is a TIMEOUT_ERROR', async () => {
    configureApi({ timeoutMs: 100 });
    handler = (_req, res) => void setTimeout(() => json(res, 200, {}), 1_000);
    try {
      const error = await failure(apiCall('/user'));
      expect(error.code).toBe('TIMEOUT_ERROR');
      expect(error.cause).toBeDefined();
    } finally {
      configureApi({ timeoutMs: 2_000 });
    }
  });

  it('no connection is a FETCH_ERROR', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const address = probe.address();
    await new Promise((resolve) => probe.close(resolve));
    const saved = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`;
    configureApi({ baseURL: `http://127.0.0.1:${address && typeof address === 'object' ? address.port : 1}/api` });
    try {
      expect((await failure(apiCall('/user'))).code).toBe('FETCH_ERROR');
    } finally {
      configureApi({ baseURL: saved });
    }
  });
});

describe('error texts (SPEC §8)', () => {
  it('transport and catalogued codes have their own text', () => {
    expect(errorText(new WalletError('FETCH_ERROR', 'x'))).toBe('No connection. Please check your network.');
    expect(errorText(new WalletError('TIMEOUT_ERROR', 'x'))).toBe('The server did not answer in time. Please try again.');
    expect(errorText(new WalletError('PARSING_ERROR', 'x'))).toBe('The server sent an answer we could not read.');
    expect(errorText(new WalletError('B2C_USM0031', 'server text', { fromServer: true }), { serverMessage: true })).toBe('Incorrect pin code');
  });

  it("shows the gateway's message where the flow asks for it, else the flow's fallback", () => {
    const error = new WalletError('WITHDRAWAL_LIMIT', 'Daily limit reached', { status: 400, fromServer: true });
    expect(errorText(error, { serverMessage: true })).toBe('Daily limit reached');
    expect(errorText(error, { fallback: 'common_something_went_wrong' })).toBe('Something went wrong...');
    expect(errorText(error)).toBe('Something went wrong. Please try again later.');
  });

  it("shows a refusal's own words where only refusals are shown: a missing price says why, a transport failure does not", () => {
    const noPrice = new WalletError('PRICE_UNAVAILABLE', 'There is no current market price for BTC', { status: 503, fromServer: true });
    expect(errorText(noPrice, { serverMessage: 'refusal', fallback: 'sell_unavailable' })).toBe("Prices are unavailable right now, so this can't be quoted. Please try again in a few minutes.");
    expect(errorText(new WalletError('C2F_PAYOUTS_UNAVAILABLE', 'x', { status: 503, fromServer: true }), { serverMessage: 'refusal', fallback: 'sell_unavailable' })).toBe('Payouts are temporarily unavailable. Please try again later.');
    expect(errorText(new WalletError('FETCH_ERROR', 'x'), { serverMessage: 'refusal', fallback: 'sell_unavailable' })).toBe('Payouts are temporarily unavailable. Please try again later.');
  });

  it('turns anything thrown into text', () => {
    expect(errorText(new Error('boom'))).toBe('Something went wrong. Please try again later.');
    expect(errorText('boom', { fallback: 'auth_login_error' })).toBe('Wrong address or password. Please check entered information');
  });
});
