import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Hono } from 'hono';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { rateLimit } from '../../../src/server/http/rate-limit.ts';
import { limitOf } from '../../../src/server/domain/limits.ts';
import { parseTrustProxy, type TrustProxy } from '../../../src/server/net/client-address.ts';

/**
 * The public endpoints' limiter: per client address, a fixed window of one minute, 429 with Retry-After beyond it.
 * The server counts in PostgreSQL (two instances share it: tests/integration/server/limits.test.ts); here the same
 * library's memory store stands in, on a fake clock.
 */
describe('rateLimit', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => vi.useRealTimers());

  const setup = (perMinute: number, trust: TrustProxy = { hops: 0 }) => {
    const app = new Hono();
    const limit = perMinute > 0 ? limitOf(new RateLimiterMemory({ points: perMinute, duration: 60 })) : undefined;
    app.post('/quote', rateLimit({ limit, trustProxy: trust }), (c) => c.json({ ok: true }));
    const from = (address: string, forwarded?: string) =>
      app.request('/quote', { method: 'POST' }, { incoming: { socket: { remoteAddress: address }, headers: forwarded ? { 'x-forwarded-for': forwarded } : {} } });
    return { from, advance: (ms: number) => vi.advanceTimersByTime(ms) };
  };

  it('lets the limit through, refuses the next with 429 and Retry-After, and opens again after the minute', async () => {
    const { from, advance } = setup(3);
    for (let i = 0; i < 3; i += 1) expect((await from('10.0.0.1')).status).toBe(200);
    advance(20_000);
    const refused = await from('10.0.0.1');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ exceptionCode: 'TOO_MANY_REQUESTS', message: 'Too many requests: try again in a minute' });
    expect(refused.headers.get('retry-after')).toBe('40');
    // Another address has its own count.
    expect((await from('10.0.0.2')).status).toBe(200);
    advance(40_000);
    expect((await from('10.0.0.1')).status).toBe(200);
  });

  it('counts the forwarded address only behind a trusted proxy', async () => {
    const direct = setup(1);
    expect((await direct.from('10.0.0.9', '1.1.1.1')).status).toBe(200);
    // Without TRUST_PROXY the header is anyone's to forge: the socket's address is what counts.
    expect((await direct.from('10.0.0.9', '2.2.2.2')).status).toBe(429);
    const proxied = setup(1, { hops: 1 });
    expect((await proxied.from('10.0.0.9', '1.1.1.1')).status).toBe(200);
    expect((await proxied.from('10.0.0.9', '2.2.2.2')).status).toBe(200);
    // The proxy appends what it saw: a first hop the client made up changes nothing.
    expect((await proxied.from('10.0.0.9', '9.9.9.9, 1.1.1.1')).status).toBe(429);
  });

  it('does not let a client spray made-up first hops past a tripped limit', async () => {
    const trust = parseTrustProxy('10.0.0.0/8');
    if (typeof trust === 'string') throw new Error(trust);
    const { from } = setup(2, trust);
    const statuses = [];
    for (let i = 0; i < 20; i += 1) statuses.push((await from('10.0.0.9', `198.51.100.${i}, 203.0.113.5`)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
  });

  it('counts an IPv6 client by its /64', async () => {
    const { from } = setup(1);
    expect((await from('2001:db8:1:2::1')).status).toBe(200);
    expect((await from('2001:db8:1:2:ffff::9')).status).toBe(429);
    expect((await from('2001:db8:1:3::1')).status).toBe(200);
  });

  it('is off at 0', async () => {
    const { from } = setup(0);
    for (let i = 0; i < 50; i += 1) expect((await from('10.0.0.1')).status).toBe(200);
  });
});
