import { errorPagePath, PAGES, ROUTES, signedInCookie } from '../lib/routes.ts';
import { atom } from 'nanostores';
import { redirectPage } from '@nanostores/router';
import { platform } from '../platform/platform.ts';
import type { ApiSession, IdentityClient, StoredUser } from '../api/session.ts';
import { $router } from './router.ts';
import { accessExpired, refreshUsable } from './token-expiry.ts';

/** SPEC §2: the authentication state is held for 1 second before the route set switches. */
export const AUTH_HOLD_MS = 1_000;
export const SIGN_IN_PATH = PAGES.signIn;
export const SIGNED_OUT_PATH = PAGES.auth;
export const HOME_PATH = ROUTES.home;
/** Where a failed sign-in lands: the login page shows 'Sign-in failed' (SPEC §8). */
export const SIGN_IN_FAILED_PATH = `${PAGES.signIn}?error=signin`;
/** SPEC §8: silent sign-in errors that mean 'nobody is signed in'; invalid_grant is a spent or expired refresh token. */
export const ANONYMOUS_ERRORS = ['login_required', 'consent_required', 'interaction_required', 'account_selection_required', 'invalid_grant'] as const;

export type SignedInUser = {
  accessToken: string;
  idToken?: string;
  refreshToken?: string;
  expiresAt?: number;
  profile: { sub: string; email?: string };
};

export type AuthState = 'loading' | 'authenticated' | 'anonymous';

export const $authState = atom<AuthState>('loading');
export const $user = atom<SignedInUser | null>(null);
/** False while the full-screen spinner shows: until authentication resolves and the hold has passed. */
export const $routesReady = atom(false);

type ClientFactory = () => Promise<IdentityClient>;

const lazyClient: ClientFactory = () => import('../api/identity.ts').then((module) => module.createIdentityClient());
let factory: ClientFactory = lazyClient;
let client: Promise<IdentityClient> | undefined;

/** Replaces the identity provider's client (tests pass a fake UserManager); null restores the real one. */
export function setIdentityClient(next: IdentityClient | ClientFactory | null): void {
  factory = next === null ? lazyClient : typeof next === 'function' ? next : async () => next;
  client = undefined;
  renewing = undefined;
}

function identity(): Promise<IdentityClient> {
  client ??= factory().catch((error: unknown) => {
    client = undefined; // a failed config fetch is retried by the next caller
    throw error;
  });
  return client;
}

/** Whether a sign-in error means an anonymous session rather than a failure (SPEC §8, §5 'Sign-in return'). */
export function isAnonymousError(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  if ('error' in error && typeof error.error === 'string' && (ANONYMOUS_ERRORS as readonly string[]).includes(error.error)) return true;
  // oidc-client-ts refuses a refresh whose ID token names another subject with a plain Error.
  return error instanceof Error && /does not match current sub/.test(error.message);
}

/** The provider returned another subject than the current user's: an OIDC login_required, as the provider says it. */
function subjectChanged(message: string): Error {
  return Object.assign(new Error(message), { error: 'login_required' });
}

function signedIn(user: StoredUser): SignedInUser {
  return {
    accessToken: user.access_token,
    idToken: user.id_token,
    refreshToken: user.refresh_token,
    expiresAt: user.expires_at,
    profile: { sub: user.profile.sub, email: user.profile.email },
  };
}

function setUser(user: StoredUser | null): void {
  $user.set(user ? signedIn(user) : null);
  $authState.set(user ? 'authenticated' : 'anonymous');
  // Before any way out to the sign-in area, so the entry pages never send a signed-out user back home.
  platform().setCookie(signedInCookie(user !== null));
}

let renewing: Promise<StoredUser | null> | undefined;

/**
 * Renews the session with the refresh token: one renewal at a time in this tab and, through a Web Lock,
 * across tabs, because the provider rotates refresh tokens and revokes the grant when one is reused.
 * Resolves with the renewed user, or null when nobody is signed in any more (the stored user is removed).
 */
export function renewSession(): Promise<StoredUser | null> {
  renewing ??= withLock('wallet-session-renew', renewOnce).finally(() => {
    renewing = undefined;
  });
  return renewing;
}

async function renewOnce(): Promise<StoredUser | null> {
  const idp = await identity();
  const stored = await idp.getUser();
  if (!stored) return null;
  // Another tab may have renewed while this one waited for the lock: its tokens are in the shared storage.
  const held = $user.get();
  if (held && stored.profile.sub === held.profile.sub && stored.access_token !== held.accessToken && !accessExpired(stored)) return stored;
  const subject = held?.profile.sub ?? stored.profile.sub;
  try {
    const renewed = await idp.signinSilent();
    if (!renewed) throw subjectChanged('the provider returned no user');
    if (renewed.profile.sub !== subject) throw subjectChanged('the provider signed in another subject');
    return renewed;
  } catch (error) {
    if (!isAnonymousError(error)) throw error;
    await idp.removeUser();
    return null;
  }
}

async function withLock<T>(name: string, task: () => Promise<T>): Promise<T> {
  const locks = typeof navigator === 'undefined' ? undefined : navigator.locks;
  return locks ? locks.request(name, task) : task();
}

/** SPEC §4, the browser branch: what the stored user allows; never throws (errors stop the loading). */
async function resolveStartupUser(): Promise<StoredUser | null> {
  try {
    const idp = await identity();
    const stored = await idp.getUser();
    if (!stored) return null;
    if (!accessExpired(stored)) return stored;
    if (!refreshUsable(stored)) {
      await idp.removeUser();
      return null;
    }
    return await renewSession();
  } catch {
    return null; // the provider or the network failed: anonymous, but the stored user stays for the next start
  }
}

/** The mini app's entry: where a signed-out session inside the messenger starts over (a fresh messenger login). */
export const MINI_APP_PATH = PAGES.miniApp;

/** Startup: resolve the user, hold, then send the anonymous to sign-in and the signed-in from unknown paths home. */
export async function startAuth(holdMs = AUTH_HOLD_MS): Promise<void> {
  $authState.set('loading');
  $routesReady.set(false);
  const launch = platform().messenger;
  if (launch) {
    // The messenger branch loads with the mini app only: the auth shells' script stays small.
    const messenger = await import('./messenger-startup.ts');
    try {
      setUser(await messenger.resolveMessengerUser(launch, { identity, renewSession }));
    } catch (error) {
      setUser(null);
      leaving = true;
      platform().leave(errorPagePath(messenger.messengerErrorCode(error)), { replace: true });
      return;
    }
  } else {
    setUser(await resolveStartupUser());
  }
  await new Promise((resolve) => setTimeout(resolve, holdMs));
  if (!$user.get()) {
    platform().leave(SIGN_IN_PATH, { replace: true });
    return;
  }
  if (!$router.get()) redirectPage($router, 'home');
  $routesReady.set(true);
}

let leaving = false;

function leaveSignedOut(path: string): void {
  setUser(null);
  if (leaving) return;
  leaving = true;
  platform().leave(path, { replace: true });
}

/** SPEC §4: after a failed renewal or a second 401, drop the session without a word and go to sign-in. */
export function signOutSilently(): void {
  void identity()
    .then((idp) => idp.removeUser())
    .catch(() => undefined)
    // Inside the messenger there is no e-mail sign-in to go to: the entry logs in with the init data again.
    .finally(() => leaveSignedOut(platform().messenger ? MINI_APP_PATH : SIGN_IN_PATH));
}

/** SPEC §2: inside the messenger there is no logout. */
export function canSignOut(): boolean {
  return platform().kind !== 'tg';
}

/** Logout: the provider revokes the refresh token, the device forgets the user, and the entry page opens. */
export async function signOut(): Promise<void> {
  try {
    const idp = await identity();
    // A revocation that fails (offline) must not keep the user signed in on this device.
    await idp.revokeRefreshToken().catch(() => undefined);
    await idp.removeUser();
  } finally {
    leaveSignedOut(SIGNED_OUT_PATH);
  }
}

/** /auth/login/start: off to the provider's login. */
export async function signIn(): Promise<void> {
  try {
    await (await identity()).signinRedirect();
  } catch {
    platform().leave(SIGN_IN_FAILED_PATH, { replace: true });
  }
}

/** /auth/callback: the provider sent the code back; exchange it and open the wallet. */
export async function completeSignIn(url?: string): Promise<void> {
  try {
    setUser(await (await identity()).signinRedirectCallback(url));
    platform().leave(HOME_PATH, { replace: true });
  } catch {
    platform().leave(SIGN_IN_FAILED_PATH, { replace: true });
  }
}

/** /auth/silent: the iframe end of a silent sign-in without a refresh token. */
export async function completeSilentSignIn(url?: string): Promise<void> {
  await (await identity()).signinSilentCallback(url).catch(() => undefined);
}

/** The gateway client's view of the session (injected by the composition root). */
export const authSession: ApiSession = {
  accessToken: async () => {
    const user = $user.get();
    if (!user) return null;
    if (!accessExpired({ expires_at: user.expiresAt })) return user.accessToken;
    try {
      const renewed = await renewSession();
      setUser(renewed);
      return renewed?.access_token ?? null;
    } catch {
      return user.accessToken; // renewal failed for now: the gateway's answer decides
    }
  },
  reauthenticate: async () => {
    try {
      const renewed = await renewSession();
      if (renewed) setUser(renewed);
      return renewed?.access_token ?? null;
    } catch {
      return null;
    }
  },
  signOutSilently,
};

/** Forgets what a test left behind. */
export function resetAuth(): void {
  $authState.set('loading');
  $user.set(null);
  $routesReady.set(false);
  renewing = undefined;
  leaving = false;
}
