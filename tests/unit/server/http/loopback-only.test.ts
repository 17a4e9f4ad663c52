import { describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import type { IncomingHttpHeaders } from 'node:http';
import { FORWARDING_HEADERS, isLoopbackAddress, isStraightFromLoopback, loopbackOnly } from '../../../../src/server/http/loopback-only.ts';

/** What @hono/node-server hands a route as `c.env`: the node request, here with a made-up socket address. */
const fakeIncoming = (remoteAddress: string | undefined, headers: IncomingHttpHeaders = {}) => ({ incoming: { socket: { remoteAddress }, headers } });

describe('the loopback guard of the development stand-ins', () => {
  it('knows loopback socket addresses from the rest', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1']) expect(isLoopbackAddress(address), address).toBe(true);
    for (const address of ['10.0.0.5', '192.168.1.2', '::ffff:10.0.0.5', '128.0.0.1', 'fe80::1', '::', '0.0.0.0', '', undefined]) expect(isLoopbackAddress(address), String(address)).toBe(false);
  });

  it('passes a loopback socket only when no header says a proxy forwards for someone else', () => {
    expect(isStraightFromLoopback('127.0.0.1', { host: 'localhost:4321', 'user-agent': 'curl' })).toBe(true);
    for (const name of FORWARDING_HEADERS) expect(isStraightFromLoopback('127.0.0.1', { [name]: '203.0.113.7' }), name).toBe(false);
    expect(isStraightFromLoopback('::1', { forwarded: 'for=203.0.113.7' })).toBe(false);
    expect(isStraightFromLoopback('203.0.113.7', {})).toBe(false);
  });

  it('answers 404 in the error shape to anything but a direct loopback request, and lets that one through', async () => {
    const app = new Hono();
    app.use('*', loopbackOnly());
    app.post('/sandbox/devnet/deposit', (c) => c.json({ credited: true }, 201));
    const call = (env: unknown) => app.fetch(new Request('http://wallet.test/sandbox/devnet/deposit', { method: 'POST' }), env);

    const direct = await call(fakeIncoming('127.0.0.1'));
    expect(direct.status).toBe(201);
    for (const env of [fakeIncoming('192.168.1.20'), fakeIncoming('::ffff:10.1.2.3'), fakeIncoming('127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }), fakeIncoming('::1', { 'x-real-ip': '203.0.113.7' }), fakeIncoming(undefined), undefined]) {
      const refused = await call(env);
      expect(refused.status).toBe(404);
      expect(await refused.json()).toEqual({ exceptionCode: 'NOT_FOUND', message: 'No such endpoint: POST /sandbox/devnet/deposit' });
    }
  });
});
