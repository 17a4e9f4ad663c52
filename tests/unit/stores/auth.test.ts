import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { IdentityClient, StoredUser } from '../../../src/api/session.ts';
import { setPlatform } from '../../../src/platform/platform.ts';
import { testPlatform } from '../../../src/platform/test.ts';
import {
  $authState,
  $routesReady,
  $user,
  AUTH_HOLD_MS,
  ANONYMOUS_ERRORS,
  authSession,
  completeSignIn,
  resetAuth,
  setIdentityClient,
  signIn,
  signOut,
  signOutSilently,
  startAuth,
} from '../../../src/stores/auth.ts';
import { $router } from '../../../src/stores/router.ts';

const NOW_S = 1_900_000_000;

function jwt(claims: Record<string, unknown>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none' })}.${part(claims)}.sig`;
}

function user(overrides: Partial<StoredUser> = {}): StoredUser {
  return { access_token: 'access-1', id_token: 'id-1', refresh_token: 'refresh-1', expires_at: NOW_S + 600, profile: { sub: 'user-1', email: 'a@b.io' }, ...overrides };
}

/** A stand-in for oidc-client-ts' UserManager: a stored user and a scripted silent sign-in. */
function fakeIdentity(initial: StoredUser | null) {
  let stored = initial;
  const calls = { silent: 0, removed: 0, revoked: 0, redirect: 0 };
  let silent: () => Promise<StoredUser | null> = async () => user({ access_token: 'access-2', refresh_token: 'refresh-2', expires_at: NOW_S + 600 });
  const client: IdentityClient = {
    getUser: async () => stored,
    removeUser: async () => {
      calls.removed++;
      stored = null;
    },
    signinSilent: async () => {
      calls.silent++;
      const renewed = await silent();
      if (renewed) stored = renewed;
      return renewed;
    },
    signinRedirect: async () => {
      calls.redirect++;
    },
    signinRedirectCallback: async () => {
      stored = user();
      return stored;
    },
    signinSilentCallback: async () => undefined,
    revokeRefreshToken: async () => {
      calls.revoked++;
    },
  };
  return {
    client,
    calls,
    stored: () => stored,
    onSilent: (next: () => Promise<StoredUser | null>) => {
      silent = next;
    },
  };
}

describe('auth store: startup (SPEC §4, browser)', () => {
  let platform: ReturnType<typeof testPlatform>;
  beforeEach(() => {
    platform = testPlatform({ now: () => NOW_S * 1000 });
    setPlatform(platform);
    resetAuth();
    $router.open('/');
  });
  afterEach(() => {
    vi.useRealTimers();
    setIdentityClient(null);
  });

  it('without a stored user is anonymous at once and goes to sign-in only after the hold', async () => {
    vi.useFakeTimers();
    setIdentityClient(fakeIdentity(null).client);
    expect($authState.get()).toBe('loading');
    const done = startAuth();
    await vi.advanceTimersByTimeAsync(0);
    expect($authState.get()).toBe('anonymous');
    expect(platform.left).toEqual([]);
    await vi.advanceTimersByTimeAsync(AUTH_HOLD_MS - 1);
    expect(platform.left).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await done;
    expect(platform.left).toEqual(['/auth/login']);
    expect($routesReady.get()).toBe(false);
  });

  it('with a valid stored user is signed in without asking the provider, and an unknown path goes home', async () => {
    vi.useFakeTimers();
    const idp = fakeIdentity(user());
    setIdentityClient(idp.client);
    const done = startAuth();
    await vi.advanceTimersByTimeAsync(0);
    expect($authState.get()).toBe('authenticated');
    expect($routesReady.get()).toBe(false);
    await vi.advanceTimersByTimeAsync(AUTH_HOLD_MS);
    await done;
    expect($routesReady.get()).toBe(true);
    expect($router.get()?.route).toBe('home');
    expect($user.get()).toMatchObject({ accessToken: 'access-1', idToken: 'id-1', refreshToken: 'refresh-1', profile: { sub: 'user-1' } });
    expect(idp.calls.silent).toBe(0);
    expect(platform.left).toEqual([]);
  });

  it('a known path stays where it is', async () => {
    setIdentityClient(fakeIdentity(user()).client);
    $router.open('/settings/select-currency');
    await startAuth(0);
    expect($router.get()?.route).toBe('selectCurrency');
  });

  it('an expired access token with a usable refresh token signs in silently', async () => {
    const idp = fakeIdentity(user({ expires_at: NOW_S - 10 }));
    setIdentityClient(idp.client);
    await startAuth(0);
    expect(idp.calls.silent).toBe(1);
    expect($authState.get()).toBe('authenticated');
    expect($user.get()?.accessToken).toBe('access-2');
    expect($routesReady.get()).toBe(true);
  });

  it('an access token about to expire counts as expired', async () => {
    const idp = fakeIdentity(user({ expires_at: NOW_S + 2 }));
    setIdentityClient(idp.client);
    await startAuth(0);
    expect(idp.calls.silent).toBe(1);
  });

  it('both tokens expired: the stored user is removed and the visitor is anonymous', async () => {
    const idp = fakeIdentity(user({ expires_at: NOW_S - 10, refresh_token: jwt({ exp: NOW_S - 1 }) }));
    setIdentityClient(idp.client);
    await startAuth(0);
    expect(idp.calls.silent).toBe(0);
    expect(idp.calls.removed).toBe(1);
    expect(idp.stored()).toBeNull();
    expect($authState.get()).toBe('anonymous');
    expect(platform.left).toEqual(['/auth/login']);
  });

  it('an expired access token without a refresh token is removed', async () => {
    const idp = fakeIdentity(user({ expires_at: NOW_S - 10, refresh_token: undefined }));
    setIdentityClient(idp.client);
    await startAuth(0);
    expect(idp.calls.removed).toBe(1);
    expect($authState.get()).toBe('anonymous');
  });

  it('a JWT refresh token that is still valid is used', async () => {
    const idp = fakeIdentity(user({ expires_at: NOW_S - 10, refresh_token: jwt({ exp: NOW_S + 60 }) }));
    setIdentityClient(idp.client);
    await startAuth(0);
    expect(idp.calls.silent).toBe(1);
    expect($authState.get()).toBe('authenticated');
  });

  it.each(ANONYMOUS_ERRORS)('silent sign-in error %s means anonymous, and the stored user goes', async (code) => {
    const idp = fakeIdentity(user({ expires_at: NOW_S - 10 }));
    idp.onSilent(async () => {
      throw Object.assign(new Error(code), { error: code });
    });
    setIdentityClient(idp.client);
    await startAuth(0);
    expect($authState.get()).toBe('anonymous');
    expect(idp.calls.removed).toBe(1);
    expect(platform.left).toEqual(['/auth/login']);
  });

  it('a renewal that returns another subject counts as login_required', async () => {
    const idp = fakeIdentity(user({ expires_at: NOW_S - 10 }));
    idp.onSilent(async () => user({ access_token: 'other', profile: { sub: 'user-2' } }));
    setIdentityClient(idp.client);
    await startAuth(0);
    expect($authState.get()).toBe('anonymous');
    expect($user.get()).toBeNull();
    expect(idp.calls.removed).toBe(1);
  });

  it("oidc-client-ts' own subject check counts as login_required too", async () => {
    const idp = fakeIdentity(user({ expires_at: NOW_S - 10 }));
    idp.onSilent(async () => {
      throw new Error('sub in id_token does not match current sub');
    });
    setIdentityClient(idp.client);
    await startAuth(0);
    expect($authState.get()).toBe('anonymous');
    expect(idp.calls.removed).toBe(1);
  });

  it('a network failure during renewal stops the loading as anonymous but keeps the stored user', async () => {
    const idp = fakeIdentity(user({ expires_at: NOW_S - 10 }));
    idp.onSilent(async () => {
      throw new TypeError('Failed to fetch');
    });
    setIdentityClient(idp.client);
    await startAuth(0);
    expect($authState.get()).toBe('anonymous');
    expect(idp.calls.removed).toBe(0);
    expect(platform.left).toEqual(['/auth/login']);
  });

  it('a provider that cannot be configured stops the loading as anonymous', async () => {
    setIdentityClient(async () => {
      throw new Error('client-config unreachable');
    });
    await startAuth(0);
    expect($authState.get()).toBe('anonymous');
    expect(platform.left).toEqual(['/auth/login']);
  });
});

describe('auth store: the session the gateway client uses', () => {
  let platform: ReturnType<typeof testPlatform>;
  beforeEach(() => {
    platform = testPlatform({ now: () => NOW_S * 1000 });
    setPlatform(platform);
    resetAuth();
  });
  afterEach(() => setIdentityClient(null));

  it('hands out the current token while it is valid', async () => {
    const idp = fakeIdentity(user());
    setIdentityClient(idp.client);
    await startAuth(0);
    expect(await authSession.accessToken()).toBe('access-1');
    expect(idp.calls.silent).toBe(0);
  });

  it('renews an expired token before a call', async () => {
    const idp = fakeIdentity(user());
    setIdentityClient(idp.client);
    await startAuth(0);
    $user.set({ ...$user.get()!, expiresAt: NOW_S - 1 });
    expect(await authSession.accessToken()).toBe('access-2');
    expect($user.get()?.accessToken).toBe('access-2');
  });

  it('renews once for many callers at the same time (refresh tokens rotate)', async () => {
    const idp = fakeIdentity(user());
    let release: (value: StoredUser) => void = () => undefined;
    idp.onSilent(() => new Promise<StoredUser>((resolve) => (release = resolve)));
    setIdentityClient(idp.client);
    await startAuth(0);
    const all = Promise.all([authSession.reauthenticate(), authSession.reauthenticate(), authSession.reauthenticate()]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    release(user({ access_token: 'access-3' }));
    expect(await all).toEqual(['access-3', 'access-3', 'access-3']);
    expect(idp.calls.silent).toBe(1);
  });

  it('takes a token another tab already renewed instead of spending the refresh token again', async () => {
    const idp = fakeIdentity(user());
    setIdentityClient(idp.client);
    await startAuth(0);
    // Another tab renewed: the shared storage holds a newer token than this tab.
    await idp.client.signinSilent();
    idp.calls.silent = 0;
    expect(await authSession.reauthenticate()).toBe('access-2');
    expect(idp.calls.silent).toBe(0);
  });

  it('re-authentication that the provider refuses yields no token', async () => {
    const idp = fakeIdentity(user());
    idp.onSilent(async () => {
      throw Object.assign(new Error('grant revoked'), { error: 'invalid_grant' });
    });
    setIdentityClient(idp.client);
    await startAuth(0);
    expect(await authSession.reauthenticate()).toBeNull();
    expect(idp.calls.removed).toBe(1);
  });

  it('silent sign-out forgets the user and goes to sign-in without a word', async () => {
    const idp = fakeIdentity(user());
    setIdentityClient(idp.client);
    await startAuth(0);
    signOutSilently();
    await vi.waitFor(() => expect(platform.left).toEqual(['/auth/login']));
    expect(idp.calls.removed).toBe(1);
    expect(idp.calls.revoked).toBe(0);
    expect($authState.get()).toBe('anonymous');
  });
});

describe('auth store: sign-in and logout', () => {
  let platform: ReturnType<typeof testPlatform>;
  beforeEach(() => {
    platform = testPlatform({ now: () => NOW_S * 1000 });
    setPlatform(platform);
    resetAuth();
  });
  afterEach(() => setIdentityClient(null));

  it('logout revokes the refresh token, forgets the user and opens the entry page', async () => {
    const idp = fakeIdentity(user());
    setIdentityClient(idp.client);
    await startAuth(0);
    await signOut();
    expect(idp.calls.revoked).toBe(1);
    expect(idp.calls.removed).toBe(1);
    expect($user.get()).toBeNull();
    expect($authState.get()).toBe('anonymous');
    expect(platform.left).toEqual(['/auth']);
  });

  it('logout still signs out on this device when the revocation fails', async () => {
    const idp = fakeIdentity(user());
    idp.client.revokeRefreshToken = async () => {
      throw new TypeError('offline');
    };
    setIdentityClient(idp.client);
    await startAuth(0);
    await signOut();
    expect(idp.calls.removed).toBe(1);
    expect(platform.left).toEqual(['/auth']);
  });

  it('the e-mail button hands over to the provider', async () => {
    const idp = fakeIdentity(null);
    setIdentityClient(idp.client);
    await signIn();
    expect(idp.calls.redirect).toBe(1);
  });

  it('the callback stores the user and opens the wallet; a failed one returns to login with the reason', async () => {
    const idp = fakeIdentity(null);
    setIdentityClient(idp.client);
    await completeSignIn('http://x/auth/callback?code=1&state=2');
    expect($user.get()?.profile.sub).toBe('user-1');
    expect(platform.left).toEqual(['/home']);
    idp.client.signinRedirectCallback = async () => {
      throw new Error('No matching state found in storage');
    };
    await completeSignIn('http://x/auth/callback?code=1&state=3');
    expect(platform.left).toEqual(['/home', '/auth/login?error=signin']);
  });
});
