/**
 * The attack suite, bodies: every route has a size limit, enforced while reading (also for chunked bodies without
 * Content-Length), answered 413 in the error shape; the keep-alive connection stays usable after it, and after a body
 * /oidc or a page left unread; huge uploads do not grow the process; an aborted upload is a warning, not an error.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Agent, request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { TEST_MNEMONIC } from '../../support/custody.ts';
import { startInProcess, type InProcessServer } from '../../support/in-process.ts';
import { BODY_LIMITS, bodyLimitFor } from '../../../src/server/http/body-limit.ts';

type Reply = { status: number; body: string; reusedSocket: boolean };

/** One request through node's http client (it can stream a chunked body and reuse a keep-alive socket). */
function post(url: string, path: string, body: Buffer | AsyncIterable<Buffer>, options: { agent?: Agent; headers?: Record<string, string> } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const chunked = !Buffer.isBuffer(body);
    const req = request(`${url}${path}`, {
      method: 'POST',
      agent: options.agent,
      headers: { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': String(body.length) }), ...options.headers },
    });
    req.on('response', (res: IncomingMessage) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, reusedSocket: req.reusedSocket }));
    });
    req.on('error', reject);
    if (!chunked) {
      req.end(body);
      return;
    }
    void (async () => {
      try {
        for await (const chunk of body) {
          if (req.destroyed || req.writableEnded) return;
          if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
        }
        req.end();
      } catch {
        // the server answered and closed: the response (or the error) settles the promise
      }
    })();
  });
}

/** `total` bytes of JSON-ish text in 64 KB chunks, produced as they are sent (never held whole). */
async function* stream(total: number): AsyncIterable<Buffer> {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  for (let sent = 0; sent < total; sent += chunk.length) yield chunk;
}

describe('attack: request body limits', () => {
  let database: TestDatabase;
  let server: InProcessServer;

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    server = await startInProcess({ DATABASE_URL: database.url, WALLET_SEED: TEST_MNEMONIC, RATES_WALK_MS: '0', PUBLIC_RATE_LIMIT: '0', WORKERS: 'off' });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  const expectTooLarge = (reply: Reply, what: string) => {
    expect(reply.status, `${what}: ${reply.body}`).toBe(413);
    expect(JSON.parse(reply.body), what).toMatchObject({ exceptionCode: 'PAYLOAD_TOO_LARGE', message: expect.any(String) });
  };

  it('refuses a body over its limit with 413 on every route that takes one, declared or chunked', async () => {
    const withBody = server.routes.filter((route) => route.method !== 'GET' && route.method !== 'HEAD');
    expect(withBody.length).toBeGreaterThan(40);
    for (const route of withBody) {
      const path = route.path.replace(/:(\w+)(\{[^}]*\})?\??/g, '00000000-0000-4000-8000-000000000000');
      const limit = bodyLimitFor(path);
      expectTooLarge(await post(server.url, path, Buffer.alloc(limit + 1, 'a')), `declared ${route.method} ${route.path}`);
      expectTooLarge(await post(server.url, path, stream(limit + 64 * 1024)), `chunked ${route.method} ${route.path}`);
    }
    // The limits are what the README says: a few KB for the JSON API, 1 MB for webhooks, 64 KB for /oidc.
    expect(bodyLimitFor('/api/rate')).toBe(BODY_LIMITS.json);
    expect(bodyLimitFor('/api/webhooks/card')).toBe(BODY_LIMITS.webhook);
    expect(bodyLimitFor('/api/tg/webhook')).toBe(BODY_LIMITS.webhook);
  }, 120_000);

  it('passes a chunked body within the limit on to the handler whole', async () => {
    const body = Buffer.from(JSON.stringify({ currencies: ['BTC'], fiatCurrencies: ['USD'], padding: 'x'.repeat(BODY_LIMITS.json - 200) }));
    async function* pieces() {
      for (let at = 0; at < body.length; at += 1000) yield body.subarray(at, at + 1000);
    }
    const reply = await post(server.url, '/api/rate', pieces());
    expect(reply.status, reply.body).toBe(200);
    // The handler read the whole body: only the currencies named in it are in the answer.
    expect(Object.keys((JSON.parse(reply.body) as { ratesMap: Record<string, unknown> }).ratesMap)).toEqual(['BTC']);
  });

  it('bounds /oidc and the pages too', async () => {
    expectTooLarge(await post(server.url, '/oidc/token', Buffer.alloc(BODY_LIMITS.oidc + 1, 'a'), { headers: { 'content-type': 'application/x-www-form-urlencoded' } }), '/oidc/token');
    expectTooLarge(await post(server.url, '/auth/login', Buffer.alloc(BODY_LIMITS.json + 1, 'a')), 'a page');
    // Chunked, /oidc stops reading at its own limit and refuses the request.
    const chunked = await post(server.url, '/oidc/token', stream(2 * 1024 * 1024), { headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(chunked.status).toBeGreaterThanOrEqual(400);
    expect(chunked.status).toBeLessThan(500);
  });

  it('keeps the keep-alive connection usable after a 413', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await post(server.url, '/api/rate', Buffer.alloc(BODY_LIMITS.json * 4, 'a'), { agent });
      expectTooLarge(first, 'declared');
      const second = await post(server.url, '/api/rate', Buffer.from('{"from":"BTC","to":"USD"}'), { agent });
      expect(second.reusedSocket).toBe(true);
      expect(second.status).toBeLessThan(500);
      expect(second.status).not.toBe(413);
      const third = await post(server.url, '/api/user', stream(BODY_LIMITS.json * 4), { agent });
      expectTooLarge(third, 'chunked');
      const fourth = await post(server.url, '/api/rate', Buffer.from('{"from":"BTC","to":"USD"}'), { agent });
      expect(fourth.reusedSocket).toBe(true);
      expect(fourth.status).not.toBe(413);
      expect(fourth.status).toBeLessThan(500);
    } finally {
      agent.destroy();
    }
  });

  it('keeps the connection usable after /oidc or a page left a body unread', async () => {
    // oidc-provider stops reading a chunked form at its own limit, and a page reads no body: the server reads and
    // drops the rest after the answer, or the next request on the connection would sit unread.
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const [path, body, headers] of [['/oidc/token', stream(2 * 1024 * 1024), form], ['/auth/login', stream(BODY_LIMITS.json / 2), {}]] as const) {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const first = await post(server.url, path, body, { agent, headers });
        expect(first.status, `${path}: ${first.body}`).toBeLessThan(500);
        const started = Date.now();
        const next = await post(server.url, '/api/rate', Buffer.from('{"from":"BTC","to":"USD"}'), { agent });
        expect(next.reusedSocket, path).toBe(true);
        expect(next.status, path).toBe(200);
        expect(Date.now() - started, `${path}: answered at once, not at the keep-alive timeout`).toBeLessThan(2_000);
      } finally {
        agent.destroy();
      }
    }
  });

  it('does not grow the process with huge uploads: a 300 MB public body, three parallel 100 MB unsigned webhooks', async () => {
    const before = process.memoryUsage().rss;
    // Declared 300 MB: answered 413 after the first 64 KB, before the rest is sent, and that connection is closed.
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write(`POST /api/rate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${300 * 1024 * 1024}\r\n\r\n`);
        socket.write(Buffer.alloc(64 * 1024, 'a'));
      });
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', () => resolve(text));
      setTimeout(() => reject(new Error(`no answer: ${text}`)), 10_000).unref();
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/connection: close/i);
    expect(answer).toContain('"exceptionCode":"PAYLOAD_TOO_LARGE"');
    const huge = await Promise.all(['/api/webhooks/card', '/api/webhooks/payout', '/api/tg/webhook'].map((path) => post(server.url, path, stream(100 * 1024 * 1024)).catch((error: unknown) => ({ status: 0, body: String(error), reusedSocket: false }))));
    // Each is answered 413 (or, past what is worth draining, cut off); none is read whole.
    for (const reply of huge) expect([0, 413]).toContain(reply.status);
    expect(huge.some((reply) => reply.status === 413)).toBe(true);
    expect(process.memoryUsage().rss - before).toBeLessThan(150 * 1024 * 1024);
    // The server still answers.
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  }, 60_000);

  it('logs an aborted upload as a warning, not an error', async () => {
    const abort = (head: string, part: string) =>
      new Promise<void>((resolve, reject) => {
        const socket = connect(server.port, '127.0.0.1', () => {
          socket.write(`POST /api/user HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${head}\r\n\r\n${part}`);
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 300);
        });
        socket.on('error', reject);
      });
    for (const [head, part] of [
      ['Content-Length: 1000', '{"email":"a@exam'],
      ['Transfer-Encoding: chunked', '10\r\n{"email":"a@exam\r\n'],
    ] as const) {
      const errorsBefore = server.logs.filter((line) => line.level >= 50).length;
      const warningsBefore = server.logs.filter((line) => line.level === 40 && /aborted/.test(line.msg)).length;
      await abort(head, part);
      await new Promise((r) => setTimeout(r, 500));
      expect(server.logs.filter((line) => line.level >= 50).slice(errorsBefore), head).toEqual([]);
      expect(server.logs.filter((line) => line.level === 40 && /aborted/.test(line.msg)).length, head).toBe(warningsBefore + 1);
    }
  });
});
