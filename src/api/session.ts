import type { ChainEnv } from '../lib/currencies.ts';

/** What the gateway client needs from whoever holds the sign-in (the auth store in the app, a fake in tests). */
export type ApiSession = {
  /** The bearer token to send, renewed first when it has expired; null when nobody is signed in. */
  accessToken: () => Promise<string | null>;
  /** Called after a 401: renews the session and resolves with a fresh token, or null when that failed. */
  reauthenticate: () => Promise<string | null>;
  /** Ends the session without a word to the user (SPEC §4: a second 401 or a failed renewal). */
  signOutSilently: () => void;
};

/** The signed-in user as oidc-client-ts keeps it on the device; its User class has these fields. */
export type StoredUser = {
  access_token: string;
  id_token?: string;
  refresh_token?: string;
  /** Seconds since the epoch. */
  expires_at?: number;
  profile: { sub: string; email?: string };
};

/** The part of oidc-client-ts' UserManager the auth store uses; unit tests pass a fake. */
export type IdentityClient = {
  getUser: () => Promise<StoredUser | null>;
  removeUser: () => Promise<void>;
  /** With a refresh token this is a token request, not an iframe. */
  signinSilent: () => Promise<StoredUser | null>;
  signinRedirect: () => Promise<void>;
  signinRedirectCallback: (url?: string) => Promise<StoredUser>;
  signinSilentCallback: (url?: string) => Promise<void>;
  revokeRefreshToken: () => Promise<void>;
  /** Keeps tokens obtained elsewhere (the messenger sign-in) as the signed-in user, renewable like any other. */
  storeUser?: (user: StoredUser & { id_token: string; profile: Record<string, unknown> & { sub: string } }) => Promise<StoredUser>;
};

/** GET /api/client-config: how the browser reaches the identity provider. */
export type ClientConfig = {
  oidc: {
    authority: string;
    clientId: string;
    redirectUri: string;
    silentRedirectUri: string;
    postLogoutRedirectUri: string;
    scope: string;
    resource?: string;
  };
  supportEmail: string;
  /** The support chat 'Leave feedback' opens inside Telegram (https://t.me/name), when SUPPORT_TELEGRAM is set. */
  supportTelegram?: string;
  /** Whether the buy/sell screen's buy entry is on (a card provider is configured); absent from an older gateway means on. */
  buyEnabled?: boolean;
  /** Whether the buy/sell screen's sell entry is on (SELL_ENABLED and a payout provider); absent from an older gateway means off. */
  sellEnabled?: boolean;
  /** CHAIN_ENV: the address forms of the chains the custody runs on; absent from an older gateway means mainnet. */
  chainEnv?: ChainEnv;
  /** The analytics SDK's source (SPEC §7 Analytics); absent while analytics is off. */
  analytics?: AnalyticsSource;
};

/** Where the analytics SDK reads its source configuration and sends events, and the source's write key. */
export type AnalyticsSource = { writeKey: string; dataPlaneUrl: string; configUrl: string };
