import { createServer, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { configureApi } from '../../../src/api/client.ts';
import type { IdentityClient, StoredUser } from '../../../src/api/session.ts';
import { setPlatform } from '../../../src/platform/platform.ts';
import { testPlatform } from '../../../src/platform/test.ts';
import { $user, resetAuth, setIdentityClient, startAuth } from '../../../src/stores/auth.ts';
import { MESSENGER_USER_KEY } from '../../../src/stores/messenger-startup.ts';
import { $router } from '../../../src/stores/router.ts';
import { appType, loadEvent } from '../../../src/stores/analytics.ts';

const NOW_S = 1_900_000_000;

/** The gateway's answers to authTg and linkTg, scripted per test; every call is recorded. */
let answer: (path: string, body: Record<string, unknown>) => { status: number; body: unknown } = () => ({ status: 500, body: {} });
const calls: Array<{ path: string; body: Record<string, unknown> }> = [];
let server: Server;

beforeAll(async () => {
  server = createServer((req, res: ServerResponse) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(text || '{}') as Record<string, unknown>;
      const path = (req.url ?? '').replace(/^\/api/, '');
      calls.push({ path, body });
      const out = answer(path, body);
      res.writeHead(out.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out.body));
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

const memory = new Map<string, string>();
Object.assign(globalThis, {
  localStorage: { getItem: (k: string) => memory.get(k) ?? null, setItem: (k: string, v: string) => void memory.set(k, v), removeItem: (k: string) => void memory.delete(k) },
});

function stored(overrides: Partial<StoredUser> = {}): StoredUser {
  return { access_token: 'access-old', id_token: 'id', refresh_token: 'refresh-old', expires_at: NOW_S + 600, profile: { sub: 'user-1' }, ...overrides };
}

const tokenUser = { access_token: 'access-tg', id_token: 'id-tg', refresh_token: 'refresh-tg', token_type: 'Bearer', scope: 'openid', expires_at: NOW_S + 900, profile: { sub: 'user-tg' } };

function fakeIdentity(initial: StoredUser | null, silent: () => Promise<StoredUser | null> = async () => null) {
  let current = initial;
  const seen = { removed: 0, silent: 0, storedUser: 0 };
  const client: IdentityClient = {
    getUser: async () => current,
    removeUser: async () => {
      seen.removed++;
      current = null;
    },
    signinSilent: async () => {
      seen.silent++;
      const renewed = await silent();
      if (renewed) current = renewed;
      return renewed;
    },
    signinRedirect: async () => undefined,
    signinRedirectCallback: async () => stored(),
    signinSilentCallback: async () => undefined,
    revokeRefreshToken: async () => undefined,
    storeUser: async (user) => {
      seen.storedUser++;
      current = user;
      return user;
    },
  };
  return { client, seen, current: () => current };
}

describe('auth store: startup inside the messenger (SPEC §4)', () => {
  let platform: ReturnType<typeof testPlatform>;
  const launch = (linkToken?: string) => ({ initData: 'user=%7B%22id%22%3A42%7D&hash=abc', userId: 42, linkToken });

  beforeEach(() => {
    platform = testPlatform({ kind: 'tg', now: () => NOW_S * 1000, messenger: launch() });
    setPlatform(platform);
    resetAuth();
    $router.open('/tg');
    calls.length = 0;
    memory.clear();
    answer = (path) => (path === '/auth/tg' || path === '/auth/tg/link' ? { status: 200, body: tokenUser } : { status: 404, body: {} });
  });

  it('logs in with the init data when no user is stored, keeps the tokens and lands on Home', async () => {
    const idp = fakeIdentity(null);
    setIdentityClient(idp.client);
    await startAuth(0);
    expect(calls).toEqual([{ path: '/auth/tg', body: { initData: launch().initData } }]);
    expect(idp.seen.storedUser).toBe(1);
    expect($user.get()?.profile.sub).toBe('user-tg');
    expect(memory.get(MESSENGER_USER_KEY)).toBe('42');
    expect($router.get()?.route).toBe('home');
    expect(platform.left).toEqual([]);
  });

  it('exchanges a link_token as a one-time code with the init data', async () => {
    setPlatform({ ...platform, messenger: launch('code-123') });
    setIdentityClient(fakeIdentity(null).client);
    await startAuth(0);
    expect(calls).toEqual([{ path: '/auth/tg/link', body: { oneTimeCode: 'code-123', tgCode: launch().initData } }]);
  });

  it('keeps a valid stored user of the same Telegram account, and renews an expired one silently', async () => {
    memory.set(MESSENGER_USER_KEY, '42');
    setIdentityClient(fakeIdentity(stored()).client);
    await startAuth(0);
    expect(calls).toEqual([]);
    expect($user.get()?.accessToken).toBe('access-old');

    resetAuth();
    const idp = fakeIdentity(stored({ expires_at: NOW_S - 10 }), async () => stored({ access_token: 'access-renewed' }));
    setIdentityClient(idp.client);
    await startAuth(0);
    expect(idp.seen.silent).toBe(1);
    expect(calls).toEqual([]);
    expect($user.get()?.accessToken).toBe('access-renewed');
  });

  it('logs in afresh when the silent renewal fails, when both tokens expired, or for another Telegram account', async () => {
    memory.set(MESSENGER_USER_KEY, '42');
    const failing = fakeIdentity(stored({ expires_at: NOW_S - 10 }), async () => {
      throw new Error('network');
    });
    setIdentityClient(failing.client);
    await startAuth(0);
    expect(calls.map((call) => call.path)).toEqual(['/auth/tg']);

    resetAuth();
    calls.length = 0;
    memory.set(MESSENGER_USER_KEY, '42');
    const expiredRefresh = `x.${Buffer.from(JSON.stringify({ exp: NOW_S - 5 })).toString('base64url')}.y`;
    const both = fakeIdentity(stored({ expires_at: NOW_S - 10, refresh_token: expiredRefresh }));
    setIdentityClient(both.client);
    await startAuth(0);
    expect(both.seen.silent).toBe(0);
    expect(calls.map((call) => call.path)).toEqual(['/auth/tg']);

    resetAuth();
    calls.length = 0;
    memory.set(MESSENGER_USER_KEY, '7');
    setIdentityClient(fakeIdentity(stored()).client);
    await startAuth(0);
    expect(calls.map((call) => call.path)).toEqual(['/auth/tg']);
  });

  it('goes to /error/{code} on a refusal; 0022 also clears the stored user; transport failures are 0027', async () => {
    for (const [status, code, expected] of [
      [401, 'B2C_USM0025', 'B2C_USM0025'],
      [401, 'B2C_USM0023', 'B2C_USM0023'],
      [409, 'B2C_USM0026', 'B2C_USM0026'],
      [400, 'VALIDATION', 'B2C_USM0022'],
      [503, 'INTERNAL', 'B2C_USM0027'],
    ] as const) {
      resetAuth();
      platform.left.length = 0;
      answer = () => ({ status, body: { exceptionCode: code, message: 'no' } });
      const idp = fakeIdentity(stored());
      setIdentityClient(idp.client);
      await startAuth(0);
      expect(platform.left).toEqual([`/error/${expected}`]);
      expect($user.get()).toBeNull();
      expect(idp.seen.removed).toBe(expected === 'B2C_USM0022' ? 1 : 0);
    }
  });
});

describe("the analytics 'load' event's app type (SPEC §3)", () => {
  it("is 'tg' inside the messenger and 'web' elsewhere", () => {
    setPlatform(testPlatform({ kind: 'tg' }));
    expect(appType()).toBe('tg');
    expect(loadEvent('acc-1')).toEqual({ event: 'load', properties: { account: 'acc-1', appType: 'tg' } });
    setPlatform(testPlatform({ kind: 'web' }));
    expect(appType()).toBe('web');
  });
});
