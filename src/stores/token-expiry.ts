/** Token lifetimes as the browser reads them: shared by the sign-in store and the messenger start without a cycle. */
import type { StoredUser } from '../api/session.ts';
import { platform } from '../platform/platform.ts';

/** A token this close to its expiry is renewed before a call, so it does not lapse on the way. */
export const EXPIRY_SKEW_S = 5;

const nowS = () => Math.floor(platform().now() / 1000);

/** Whether the access token has expired (or is about to); a token without an expiry never does. */
export function accessExpired(user: Pick<StoredUser, 'expires_at'>, now = nowS()): boolean {
  return user.expires_at !== undefined && user.expires_at - EXPIRY_SKEW_S <= now;
}

/** Whether the refresh token may still work: a JWT tells its expiry, an opaque one only the provider knows. */
export function refreshUsable(user: Pick<StoredUser, 'refresh_token'>, now = nowS()): boolean {
  const token = user.refresh_token;
  if (!token) return false;
  const exp = jwtExpiry(token);
  return exp === undefined || exp > now;
}

function jwtExpiry(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return undefined;
  try {
    const claims: unknown = JSON.parse(atob(parts[1].replace(/-/g, '+').replace(/_/g, '/')));
    return claims && typeof claims === 'object' && 'exp' in claims && typeof claims.exp === 'number' ? claims.exp : undefined;
  } catch {
    return undefined;
  }
}
