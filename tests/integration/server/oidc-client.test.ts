import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import * as oidc from 'openid-client';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { freePort } from '../../support/server.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { CookieJar, followToLogin, followToRedirect, signUpAndSignIn, submitLogin } from '../../support/auth.ts';

const PASSWORD = 'a quite long secret';

/**
 * Issue 14 item 19: a standard relying party (openid-client) against the embedded provider of the real server,
 * with nothing bent for it: discovery, code + PKCE through the login interaction, refresh, userinfo, revocation.
 */
describe('the identity provider as openid-client sees it', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let base: string;
  let config: oidc.Configuration;
  let counter = 0;
  const nextEmail = () => `rp${++counter}-${Date.now()}@example.com`;
  const redirectUri = () => `${base}/auth/callback`;

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = await startInProcess({ ...testServerEnv(database.url), PORT: String(port), PUBLIC_URL: base });
    config = await oidc.discovery(new URL(`${base}/oidc`), 'wallet-web', undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  /** A signed-up, confirmed user signs in through openid-client's own authorization URL and code exchange. */
  async function codeFlow(scope = 'openid email profile offline_access', extra: Record<string, string> = {}): Promise<{ tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers; userId: string; email: string }> {
    const email = nextEmail();
    const { userId } = await signUpAndSignIn(base, { email, password: PASSWORD, databaseUrl: database.url });
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri(),
      scope,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...extra,
    });
    const jar = new CookieJar();
    const uid = await followToLogin(base, url.toString(), jar);
    const afterLogin = await submitLogin(base, { jar, uid } as Parameters<typeof submitLogin>[1], { email, password: PASSWORD });
    const callback = await followToRedirect(base, afterLogin, jar, redirectUri());
    const tokens = await oidc.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state }, extra);
    return { tokens, userId, email };
  }

  it('discovers a provider that offers only what its client can use', () => {
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(`${base}/oidc`);
    expect(metadata.response_types_supported).toEqual(['code']);
    expect(metadata.grant_types_supported).not.toContain('implicit');
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.userinfo_endpoint).toBe(`${base}/oidc/me`);
  });

  it('completes code + PKCE, refresh, userinfo and revocation', async () => {
    const { tokens, userId, email } = await codeFlow();
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope).toBe('wallet');
    expect(tokens.claims()?.sub).toBe(userId);
    expect(tokens.refresh_token).toBeTruthy();
    // The access token is the gateway's.
    expect((await fetch(`${base}/api/user`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200);

    const info = await oidc.fetchUserInfo(config, tokens.access_token, userId);
    expect(info).toMatchObject({ sub: userId, email, email_verified: true });

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token ?? '');
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.scope).toBe('wallet');
    expect(refreshed.claims()?.sub).toBe(userId);
    expect((await oidc.fetchUserInfo(config, refreshed.access_token, userId)).sub).toBe(userId);

    // Our own web client names the resource: the same scope.
    const named = await codeFlow('openid email profile offline_access', { resource: `${base}/api` });
    expect(named.tokens.scope).toBe('wallet');

    await oidc.tokenRevocation(config, refreshed.refresh_token ?? '');
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token ?? '')).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('answers the four refusals with their OAuth error codes', async () => {
    const authorize = async (params: Record<string, string>) => {
      const url = new URL(`${base}/oidc/auth`);
      url.search = new URLSearchParams({
        client_id: 'wallet-web',
        redirect_uri: redirectUri(),
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
        state: 'st',
        ...params,
      }).toString();
      const response = await fetch(url, { redirect: 'manual' });
      const location = response.headers.get('location');
      expect(response.status, await response.clone().text()).toBe(303);
      const answer = new URL(location ?? '');
      expect(answer.toString().startsWith(redirectUri())).toBe(true);
      return answer.searchParams.get('error') ?? new URLSearchParams(answer.hash.slice(1)).get('error');
    };
    expect(await authorize({ response_type: 'code', resource: 'https://elsewhere.example/api' })).toBe('invalid_target');
    // The provider offers code only (discovery says so): any other type is one it does not support (RFC 6749 §4.1.2.1).
    expect(await authorize({ response_type: 'id_token', nonce: 'n' })).toBe('unsupported_response_type');
    expect(await authorize({ response_type: 'code id_token', nonce: 'n' })).toBe('unsupported_response_type');
    expect(await authorize({ response_type: 'token' })).toBe('unsupported_response_type');

    // Userinfo refuses what is not a live token of ours, the RFC 6750 way.
    const refused = await fetch(`${base}/oidc/me`, { headers: { authorization: 'Bearer not-a-token' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
  });
});
