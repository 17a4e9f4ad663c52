import type { IncomingMessage } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { clientAddress } from './client-address.ts';

const SWEEP_AT = 10_000;

/**
 * At most `perMinute` requests a minute from one client address, counted in this process's memory (a fixed
 * window): the first line against one caller flooding a public endpoint that writes rows. Beyond it: 429
 * TOO_MANY_REQUESTS with Retry-After. `perMinute` 0 turns it off. A proxy's limiter belongs in front of it too.
 */
export function rateLimit(options: { perMinute: number; trustProxy: boolean; now?: () => number }): MiddlewareHandler {
  const now = options.now ?? Date.now;
  const windows = new Map<string, { startedAt: number; count: number }>();
  return async (c, next) => {
    if (options.perMinute <= 0) return next();
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const key = incoming ? clientAddress(incoming, options.trustProxy) : 'unknown';
    const at = now();
    if (windows.size >= SWEEP_AT) for (const [k, w] of windows) if (at - w.startedAt >= 60_000) windows.delete(k);
    let window = windows.get(key);
    if (!window || at - window.startedAt >= 60_000) {
      window = { startedAt: at, count: 0 };
      windows.set(key, window);
    }
    window.count += 1;
    if (window.count > options.perMinute) {
      c.header('Retry-After', String(Math.max(1, Math.ceil((window.startedAt + 60_000 - at) / 1000))));
      return c.json({ exceptionCode: 'TOO_MANY_REQUESTS', message: 'Too many requests: try again in a minute' }, 429);
    }
    return next();
  };
}
