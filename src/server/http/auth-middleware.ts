// Usage: `app.get('/path', requireAuth(deps.auth), handler)` or `app.use('/area/*', requireAuth(deps.auth))`, then `c.get('principal')` is `{ userId, sub }`.
import { createLocalJWKSet, createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { eq, sql } from 'drizzle-orm';
import type { MiddlewareHandler } from 'hono';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { SealedSettings, SecretsKey } from '../adapters/keys/port.ts';
import { users, walletAccounts } from '../db/schema.ts';
import { loadIdpSecrets, publicJwks } from '../idp/keys.ts';
import { readRevokedGrants } from '../idp/revocations.ts';
import { storedOidcId, storedOidcIds } from '../idp/adapter.ts';
import type { Logger } from '../log.ts';
import type { ApiEnv, Principal } from './context.ts';
import { bearerToken } from '../net/bearer-token.ts';

/** Why a bearer token is refused; the message goes to the caller as is. */
export class UnauthorizedError extends Error {}

/** Checks access tokens of the configured issuer; one per process, shared by every /api area. */
export type AccessTokenVerifier = {
  verify: (token: string) => Promise<Principal>;
  /** The principal of a token verified before, unexpired and not revoked as far as this process knows now; else undefined (then `verify` decides). */
  cached: (token: string) => Principal | undefined;
  /** Drops cached tokens of a user (after a password reset) so this process refuses them at once. */
  forgetUser: (userId: string) => void;
  /** A grant of this process' provider was revoked: its tokens are refused here at once (others read it within seconds). */
  revokeGrant: (grantId: string) => void;
};

const CACHE_LIMIT = 10_000;
/** A cached token is found by this many of its last characters: a signature's, unique to the token in practice. */
const CACHE_KEY_CHARS = 32;
const KEY_RELOAD_MS = 30_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const discoverySchema = z.object({ issuer: z.string(), jwks_uri: z.url() });
/**
 * Revoked grants are reread in the background when the list is a second old, and before answering when it is three:
 * a revocation reaches every process within about 3 s, at one small query a second per busy process, none per request.
 */
const REVOKED_REFRESH_MS = 1_000;
const REVOKED_STALE_MS = 3_000;
/** Re-read back this far, so a revocation committed late (its revoked_at earlier than its commit) is not missed. */
const REVOKED_OVERLAP_MS = 30_000;

/**
 * Verifies JWT access tokens locally with jose (issuer, audience, expiry, signature) and keeps each verified token
 * until it expires in a bounded cache. With the embedded provider the keys come from the database; with an
 * external issuer (OIDC_ISSUER) from its JWKS found by discovery, and unknown subjects get a user on first sight.
 */
export function createAccessTokenVerifier(deps: { config: Config; db: Db; secrets: SecretsKey; settings: SealedSettings; log: Logger }): AccessTokenVerifier {
  const { config, db, log } = deps;
  const { oidc } = config;
  // Keyed by the token's last characters (its signature's), the entry holding the whole token to compare: hashing a
  // whole token (~900 characters) for the lookup was the gateway's largest cost per request (bench:balances).
  const cache = new Map<string, { token: string; principal: Principal; expiresAt: number; grantIds: string[] | undefined }>();

  // Revoked grants of the embedded provider, by their stored (keyed-hash) id, as the database's trigger records them -> when this process learnt of it (dropped after a token's life).
  const revoked = new Map<string, number>();
  let revokedSince: Date | undefined;
  let revokedReadAt = 0;
  let revokedReading: Promise<void> | undefined;
  const readRevoked = (): Promise<void> => {
    revokedReading ??= (async () => {
      const since = revokedSince ?? new Date(Date.now() - (oidc.accessTokenTtl + 60) * 1000);
      const { grantIds, now } = await readRevokedGrants(db, since);
      const learnt = Date.now();
      for (const grantId of grantIds) if (!revoked.has(grantId)) revoked.set(grantId, learnt);
      for (const [grantId, at] of revoked) if (learnt - at > (oidc.accessTokenTtl + 60) * 1000 + REVOKED_OVERLAP_MS) revoked.delete(grantId);
      revokedSince = new Date(now.getTime() - REVOKED_OVERLAP_MS);
      revokedReadAt = learnt;
    })().finally(() => {
      revokedReading = undefined;
    });
    return revokedReading;
  };
  /** The revoked grants, at once while the list is fresh enough (the common case costs no await), else once reread. */
  const revokedList = (): Map<string, number> | Promise<Map<string, number>> => {
    const age = Date.now() - revokedReadAt;
    if (age >= REVOKED_STALE_MS) return readRevoked().then(() => revoked);
    if (age >= REVOKED_REFRESH_MS) readRevoked().catch((error: unknown) => log.warn({ err: error }, 'reading revoked grants failed'));
    return revoked;
  };

  let keys: Promise<JWTVerifyGetKey> | undefined;
  let reloadedAt = 0;
  const loadKeys = async (): Promise<JWTVerifyGetKey> => {
    if (oidc.embedded) return createLocalJWKSet(publicJwks(await loadIdpSecrets(deps.settings)));
    const response = await fetch(`${oidc.issuer}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(10_000) });
    const body: unknown = await response.json();
    return createRemoteJWKSet(new URL(discoverySchema.parse(body).jwks_uri));
  };
  const getKeys = (): Promise<JWTVerifyGetKey> => {
    keys ??= loadKeys().catch((error: unknown) => {
      keys = undefined;
      throw error;
    });
    return keys;
  };

  const verifySignature = async (token: string): Promise<JWTPayload> => {
    const options = { issuer: oidc.issuer, audience: oidc.audience, clockTolerance: 5, algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'] };
    try {
      return (await jwtVerify(token, await getKeys(), options)).payload;
    } catch (error) {
      // A key rotated since the keys were read: reread them (at most every 30 s, unknown kids cost nothing else).
      if (error instanceof joseErrors.JWKSNoMatchingKey && oidc.embedded && Date.now() - reloadedAt > KEY_RELOAD_MS) {
        reloadedAt = Date.now();
        keys = undefined;
        return (await jwtVerify(token, await getKeys(), options)).payload;
      }
      throw error;
    }
  };

  const userOf = async (payload: JWTPayload): Promise<string> => {
    const sub = payload.sub;
    if (!sub) throw new UnauthorizedError('The access token has no subject');
    if (oidc.embedded) {
      if (!UUID.test(sub)) throw new UnauthorizedError('The access token names no known user');
      const [user] = await db.select({ id: users.id, revokedAt: users.sessionsRevokedAt }).from(users).where(eq(users.id, sub));
      if (!user) throw new UnauthorizedError('The access token names no known user');
      // iat has whole seconds; our provider adds the millisecond (issued_at_ms) so a sign-in right after a reset counts.
      const issuedAtMs = typeof payload.issued_at_ms === 'number' ? payload.issued_at_ms : (payload.iat ?? 0) * 1000;
      if (user.revokedAt && issuedAtMs < user.revokedAt.getTime()) throw new UnauthorizedError('The session has ended; sign in again');
      return user.id;
    }
    const [known] = await db.select({ id: users.id }).from(users).where(eq(users.externalSubject, sub));
    if (known) return known.id;
    const email = typeof payload.email === 'string' ? payload.email.trim().toLowerCase() : null;
    return db.transaction(async (tx) => {
      const [taken] = email ? await tx.select({ id: users.id }).from(users).where(eq(users.email, email)) : [];
      const [created] = await tx
        .insert(users)
        .values({ externalSubject: sub, email: taken ? null : email, emailConfirmedAt: email && !taken ? sql`now()` : null })
        .onConflictDoNothing()
        .returning({ id: users.id });
      if (!created) {
        const [raced] = await tx.select({ id: users.id }).from(users).where(eq(users.externalSubject, sub));
        if (!raced) throw new Error('the user of an external subject could not be created');
        return raced.id;
      }
      await tx.insert(walletAccounts).values({ userId: created.id, name: 'Account' });
      log.info({ userId: created.id }, 'user created for an external subject');
      return created.id;
    });
  };

  const verifier: AccessTokenVerifier = {
    cached(token) {
      const hit = cache.get(token.slice(-CACHE_KEY_CHARS));
      if (hit?.token !== token || hit.expiresAt <= Date.now()) return undefined;
      if (!hit.grantIds) return hit.principal;
      const list = revokedList();
      return list instanceof Map && !hit.grantIds.some((id) => list.has(id)) ? hit.principal : undefined;
    },
    async verify(token) {
      const known = verifier.cached(token);
      if (known) return known;
      const key = token.slice(-CACHE_KEY_CHARS);
      const cached = cache.get(key);
      const hit = cached?.token === token ? cached : undefined;
      if (hit && hit.expiresAt > Date.now()) {
        // `cached` took every other live entry: here its grants' revocations were being reread, or one is revoked.
        const revokedNow = await revokedList();
        if (hit.grantIds?.some((id) => revokedNow.has(id))) {
          cache.delete(key);
          throw new UnauthorizedError('The session has ended; sign in again');
        }
        return hit.principal;
      }
      if (hit) cache.delete(key);
      let payload: JWTPayload;
      try {
        payload = await verifySignature(token);
      } catch (error) {
        if (error instanceof joseErrors.JWTExpired) throw new UnauthorizedError('The access token has expired');
        if (error instanceof joseErrors.JOSEError) throw new UnauthorizedError('The access token is not valid');
        throw error;
      }
      // Only the embedded provider's grants are known here; its tokens name theirs, stored under a keyed hash.
      // Under every key of a rotation: a grant revoked while its row was under the previous key is stored under that.
      const grantIds = oidc.embedded && typeof payload.grant_id === 'string' ? storedOidcIds(deps.secrets, payload.grant_id) : undefined;
      const revokedNow = grantIds && (await revokedList());
      if (grantIds && revokedNow && grantIds.some((id) => revokedNow.has(id))) throw new UnauthorizedError('The session has ended; sign in again');
      const principal: Principal = {
        userId: await userOf(payload),
        sub: payload.sub ?? '',
        authTime: typeof payload.auth_time === 'number' ? payload.auth_time : undefined,
      };
      if (cache.size >= CACHE_LIMIT) {
        const oldest = cache.keys().next();
        if (!oldest.done) cache.delete(oldest.value);
      }
      cache.set(key, { token, principal, expiresAt: (payload.exp ?? 0) * 1000, grantIds });
      return principal;
    },
    forgetUser(userId) {
      for (const [key, entry] of cache) if (entry.principal.userId === userId) cache.delete(key);
    },
    revokeGrant(grantId) {
      revoked.set(storedOidcId(deps.secrets, grantId), Date.now());
    },
  };
  return verifier;
}

/** The gateway's guard: a valid `Authorization: Bearer <JWT>` sets `principal`; anything else is 401 UNAUTHORIZED. */
export function requireAuth(verifier: AccessTokenVerifier): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    // Node's own header when the node server called: Hono's would build a Headers object of the whole request.
    const header = c.env?.incoming ? c.env.incoming.headers.authorization : c.req.header('authorization');
    const token = bearerToken(header);
    const refuse = (message: string) => {
      c.header('WWW-Authenticate', 'Bearer error="invalid_token"');
      return c.json({ exceptionCode: 'UNAUTHORIZED', message }, 401);
    };
    if (!token) return refuse('Sign in first: the request has no bearer access token');
    let principal: Principal;
    try {
      principal = await verifier.verify(token);
    } catch (error) {
      if (error instanceof UnauthorizedError) return refuse(error.message);
      throw error;
    }
    c.set('principal', principal);
    await next();
  };
}
