import type { IncomingMessage, ServerResponse } from 'node:http';
import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type Provider from 'oidc-provider';
import type { SealedSettings } from '../adapters/keys/port.ts';
import { loadIdpSecrets, publicJwks, type IdpSecrets } from './keys.ts';
import { bearerToken } from '../net/bearer-token.ts';

/** Which claims each OpenID scope releases (the provider's `claims` configuration). */
const SCOPE_CLAIMS: Record<string, readonly string[]> = { openid: ['sub'], email: ['email', 'email_verified'], profile: ['locale'] };

type Answer = { status: number; body: Record<string, unknown>; challenge?: string };

/**
 * The userinfo endpoint (`/oidc/me`, OpenID Connect Core §5.3). The provider's own one accepts only access tokens
 * without an audience, and every token we issue is the gateway's JWT (resource indicator): this one takes those,
 * while their grant lives, and answers the claims of the grant's OpenID scopes.
 */
export function createUserinfoEndpoint(deps: {
  provider: Provider;
  /** Where the secrets are reread from when a token's key is not known yet (rotated meanwhile). */
  settings: SealedSettings;
  secrets: IdpSecrets;
  issuer: string;
  audience: string;
  findAccount: (sub: string) => Promise<{ claims: () => Record<string, unknown> } | undefined>;
}): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  let keys = createLocalJWKSet(publicJwks(deps.secrets));
  let reloadedAt = Date.now();

  const verify = async (token: string): Promise<JWTPayload | undefined> => {
    const options = { issuer: deps.issuer, audience: deps.audience, algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'] };
    try {
      return (await jwtVerify(token, keys, options)).payload;
    } catch {
      // A key rotated by another process since this one started: reread the keys, at most every 30 s.
      if (Date.now() - reloadedAt < 30_000) return undefined;
      reloadedAt = Date.now();
      keys = createLocalJWKSet(publicJwks(await loadIdpSecrets(deps.settings)));
      return (await jwtVerify(token, keys, options).catch(() => undefined))?.payload;
    }
  };

  const refuse = (description: string): Answer => ({
    status: 401,
    body: { error: 'invalid_token', error_description: description },
    challenge: `Bearer error="invalid_token", error_description="${description}"`,
  });

  const answer = async (req: IncomingMessage): Promise<Answer> => {
    if (req.method !== 'GET' && req.method !== 'POST') return { status: 405, body: { error: 'invalid_request', error_description: 'use GET or POST' } };
    const token = bearerToken(req.headers.authorization);
    if (!token) return { status: 401, body: { error: 'invalid_token', error_description: 'no access token provided' }, challenge: 'Bearer' };
    const payload = await verify(token);
    if (!payload?.sub || typeof payload.grant_id !== 'string') return refuse('invalid token provided');
    // A revoked grant (sign-out, revocation, password reset) ends its tokens here at once.
    const grant = await deps.provider.Grant.find(payload.grant_id);
    if (!grant || grant.accountId !== payload.sub) return refuse('invalid token provided');
    const account = await deps.findAccount(payload.sub);
    if (!account) return refuse('invalid token provided');
    const scopes = (grant.getOIDCScope() ?? '').split(' ');
    if (!scopes.includes('openid')) return { status: 403, body: { error: 'insufficient_scope', error_description: 'access token missing openid scope' }, challenge: 'Bearer error="insufficient_scope", scope="openid"' };
    const claims = account.claims();
    const released = new Set(scopes.flatMap((scope) => SCOPE_CLAIMS[scope] ?? []));
    return { status: 200, body: Object.fromEntries(Object.entries(claims).filter(([claim, value]) => released.has(claim) && value !== undefined)) };
  };

  return async (req, res) => {
    const { status, body, challenge } = await answer(req);
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };
    if (challenge) headers['www-authenticate'] = challenge;
    res.writeHead(status, headers);
    res.end(JSON.stringify(body));
  };
}
