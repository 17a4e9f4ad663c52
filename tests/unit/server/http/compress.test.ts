/**
 * The compressor in front of the gateway, on a real node server with the gateway's own adapter: a JSON answer under
 * the threshold goes as it is (with its length), a larger one gzipped, whichever way its length reaches node.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { Hono } from 'hono';
import { getRequestListener } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPRESS_THRESHOLD, createCompressor } from '../../../../src/server/http/compress.ts';

const small = { items: ['x'.repeat(COMPRESS_THRESHOLD - 100)] };
const large = { items: ['x'.repeat(COMPRESS_THRESHOLD * 4)] };

describe('the compressor', () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    const app = new Hono();
    app.get('/small', (c) => c.json(small));
    app.get('/large', (c) => c.json(large));
    app.get('/small-with-header', (c) => c.body(JSON.stringify(small), 200, { 'content-type': 'application/json', 'content-length': String(JSON.stringify(small).length) }));
    app.get('/stream', (c) => c.body(new Blob([JSON.stringify(large)]).stream(), 200, { 'content-type': 'application/json' }));
    const listener = getRequestListener(app.fetch);
    const compress = createCompressor();
    server = createServer((req, res) => compress(req, res, () => void listener(req, res)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const get = (path: string, encoding = 'gzip') =>
    new Promise<{ encoding: string | undefined; length: string | undefined; body: Buffer }>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path, headers: { 'accept-encoding': encoding } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ encoding: res.headers['content-encoding'], length: res.headers['content-length'], body: Buffer.concat(chunks) }));
      })
        .on('error', reject)
        .end();
    });

  it('sends a JSON answer under the threshold as it is, with its length', async () => {
    for (const path of ['/small', '/small-with-header']) {
      const reply = await get(path);
      expect(reply.encoding, path).toBeUndefined();
      expect(reply.length, path).toBe(String(reply.body.length));
      expect(JSON.parse(reply.body.toString()), path).toEqual(small);
    }
  });

  it('gzips a larger one, whether node knows its length or it streams', async () => {
    for (const path of ['/large', '/stream']) {
      const reply = await get(path);
      expect(reply.encoding, path).toBe('gzip');
      expect(reply.body.length, path).toBeLessThan(JSON.stringify(large).length / 4);
      expect(JSON.parse(gunzipSync(reply.body).toString()), path).toEqual(large);
    }
  });

  it('leaves every answer as it is for a client that asks for no encoding', async () => {
    const reply = await get('/large', 'identity');
    expect(reply.encoding).toBeUndefined();
    expect(JSON.parse(reply.body.toString())).toEqual(large);
  });
});
