import { User, UserManager, WebStorageStateStore } from 'oidc-client-ts';
import type { ClientConfig, IdentityClient } from './session.ts';
import { getClientConfig } from './user.ts';

/**
 * The identity provider's client (oidc-client-ts), built from GET /api/client-config. Loaded lazily: the
 * static shells never ship it and the wallet island's first load stays small.
 */
export async function createIdentityClient(given?: ClientConfig): Promise<IdentityClient> {
  const { oidc } = given ?? (await getClientConfig());
  const manager = new UserManager({
    authority: oidc.authority,
    client_id: oidc.clientId,
    redirect_uri: oidc.redirectUri,
    silent_redirect_uri: oidc.silentRedirectUri,
    post_logout_redirect_uri: oidc.postLogoutRedirectUri,
    scope: oidc.scope,
    response_type: 'code',
    resource: oidc.resource,
    // The code exchange must name the gateway too, or the provider issues an opaque token it cannot verify.
    extraTokenParams: oidc.resource ? { resource: oidc.resource } : {},
    // SPEC §7: automatic renew is off; the auth store renews on demand (expired token or a 401).
    automaticSilentRenew: false,
    monitorSession: false,
    loadUserInfo: false,
    validateSubOnSilentRenew: true,
    revokeTokenTypes: ['refresh_token'],
    userStore: new WebStorageStateStore({ store: window.localStorage, prefix: 'wallet.oidc.' }),
    stateStore: new WebStorageStateStore({ store: window.localStorage, prefix: 'wallet.oidc.state.' }),
  });
  return {
    getUser: () => manager.getUser(),
    removeUser: () => manager.removeUser(),
    signinSilent: () => manager.signinSilent({ resource: oidc.resource }),
    // The e-mail button asks for the password every time: a shared device never reopens the last person's session.
    signinRedirect: () => manager.signinRedirect({ prompt: 'login' }),
    signinRedirectCallback: (url) => manager.signinRedirectCallback(url),
    signinSilentCallback: (url) => manager.signinSilentCallback(url),
    revokeRefreshToken: () => manager.revokeTokens(['refresh_token']),
    async storeUser(given) {
      const user = new User({
        access_token: given.access_token,
        id_token: given.id_token,
        refresh_token: given.refresh_token,
        token_type: 'Bearer',
        scope: oidc.scope,
        expires_at: given.expires_at,
        profile: given.profile as ConstructorParameters<typeof User>[0]['profile'],
      });
      await manager.storeUser(user);
      return user;
    },
  };
}
