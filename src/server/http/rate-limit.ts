import type { IncomingMessage } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import type { Limit } from '../domain/limits.ts';
import { addressBucket, clientAddress, type TrustProxy } from '../net/client-address.ts';

/** The client address of a request served by @hono/node-server (the socket's, or the proxies' say: TRUST_PROXY). */
export function requestAddress(c: { env: unknown }, trust: TrustProxy): string {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return incoming ? clientAddress(incoming, trust) : 'unknown';
}

/**
 * At most the limit's requests a window from one client address (an IPv6 /64 counts as one), counted in the
 * shared store (domain/limits.ts) so every instance counts the same: the first line against one caller flooding
 * a public endpoint that writes rows. Beyond it: 429 TOO_MANY_REQUESTS with Retry-After. No limit is off.
 */
export function rateLimit(options: { limit: Limit | undefined; trustProxy: TrustProxy }): MiddlewareHandler {
  const { limit } = options;
  return async (c, next) => {
    if (!limit) return next();
    const wait = await limit.take(addressBucket(requestAddress(c, options.trustProxy)));
    if (wait > 0) {
      c.header('Retry-After', String(Math.max(1, Math.ceil(wait / 1000))));
      return c.json({ exceptionCode: 'TOO_MANY_REQUESTS', message: 'Too many requests: try again in a minute' }, 429);
    }
    return next();
  };
}
