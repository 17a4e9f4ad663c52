import { describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import { rateLimit } from '../../../src/server/http/rate-limit.ts';

/** The public endpoints' limiter: per client address, a fixed window of one minute, 429 with Retry-After beyond it. */
describe('rateLimit', () => {
  const setup = (perMinute: number, trustProxy = false) => {
    let clock = 1_000_000;
    const app = new Hono();
    app.post('/quote', rateLimit({ perMinute, trustProxy, now: () => clock }), (c) => c.json({ ok: true }));
    const from = (address: string, forwarded?: string) =>
      app.request('/quote', { method: 'POST' }, { incoming: { socket: { remoteAddress: address }, headers: forwarded ? { 'x-forwarded-for': forwarded } : {} } });
    return { from, advance: (ms: number) => (clock += ms) };
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
    const proxied = setup(1, true);
    expect((await proxied.from('10.0.0.9', '1.1.1.1')).status).toBe(200);
    expect((await proxied.from('10.0.0.9', '2.2.2.2')).status).toBe(200);
    expect((await proxied.from('10.0.0.9', '1.1.1.1, 10.0.0.9')).status).toBe(429);
  });

  it('is off at 0', async () => {
    const { from } = setup(0);
    for (let i = 0; i < 50; i += 1) expect((await from('10.0.0.1')).status).toBe(200);
  });
});
