/**
 * The console's sign-in: oidc-client-ts against the same provider as the wallet, with the console's own client
 * (GET /api/operator/client-config) and its own storage, so a wallet session in the same browser is not the console's.
 */
import { UserManager, WebStorageStateStore } from 'oidc-client-ts';

type ClientConfig = { oidc: { authority: string; clientId: string; redirectUri: string; postLogoutRedirectUri: string; scope: string; resource: string } };

export type Session = {
  /** The access token, or null when nobody is signed in (or the token expired: sign in again). */
  token: () => Promise<string | null>;
  email: () => Promise<string | null>;
  signIn: () => Promise<void>;
  /** Completes the redirect back from the provider; returns where to go next. */
  callback: () => Promise<string>;
  signOut: () => Promise<void>;
};

export async function createSession(): Promise<Session> {
  const response = await fetch('/api/operator/client-config');
  const { oidc } = (await response.json()) as ClientConfig;
  const manager = new UserManager({
    authority: oidc.authority,
    client_id: oidc.clientId,
    redirect_uri: oidc.redirectUri,
    post_logout_redirect_uri: oidc.postLogoutRedirectUri,
    scope: oidc.scope,
    response_type: 'code',
    resource: oidc.resource,
    extraTokenParams: { resource: oidc.resource },
    automaticSilentRenew: false,
    monitorSession: false,
    loadUserInfo: false,
    userStore: new WebStorageStateStore({ store: window.sessionStorage, prefix: 'operator.oidc.' }),
    stateStore: new WebStorageStateStore({ store: window.sessionStorage, prefix: 'operator.oidc.state.' }),
  });
  const current = async () => {
    const user = await manager.getUser();
    return user && !user.expired ? user : null;
  };
  return {
    token: async () => (await current())?.access_token ?? null,
    email: async () => {
      const email = (await current())?.profile.email;
      return typeof email === 'string' ? email : null;
    },
    // Every operator types their password: a shared browser never reopens another's console.
    signIn: () => manager.signinRedirect({ prompt: 'login', state: window.location.pathname + window.location.search }),
    async callback() {
      const user = await manager.signinRedirectCallback();
      const back = typeof user.state === 'string' && user.state.startsWith('/operator') && !user.state.startsWith('/operator/callback') ? user.state : '/operator';
      return back;
    },
    async signOut() {
      await manager.removeUser();
      window.location.assign('/operator');
    },
  };
}
