/**
 * An idle client connection outlives a proxy's idle timeout's worth of quiet at the gateway's side: a connection the
 * gateway closed after 5 s of quiet once met a request sent at that instant (a reset, which a proxy turns into a
 * 502, and which failed an e2e test's request). Here the same socket answers again after 6 s of quiet; and a stop
 * still ends soon after the last answer, not a keep-alive later.
 */
import { request, Agent } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { rateRequestInFlight } from '../../support/server.ts';
import { KEEP_ALIVE_MS } from '../../../src/server/main.ts';

describe('kept-alive connections', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    server = await startInProcess({ ...testServerEnv(database.url), WORKERS: 'off' });
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('keeps an idle connection open longer than a proxy keeps its own (60 s), and answers on it after a pause', async () => {
    expect(KEEP_ALIVE_MS).toBeGreaterThan(60_000);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; socket: Socket; keepAlive: string | string[] | undefined }>((resolve, reject) => {
        const req = request(`${server.url}/api/health`, { agent }, (res) => {
          res.resume();
          res.once('end', () => resolve({ status: res.statusCode ?? 0, socket: req.socket as Socket, keepAlive: res.headers['keep-alive'] }));
        });
        req.once('error', reject);
        req.end();
      });
    const first = await get();
    expect(first.status).toBe(200);
    expect(first.keepAlive).toBe(`timeout=${KEEP_ALIVE_MS / 1000}`);
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const second = await get();
    expect(second.status).toBe(200);
    expect(second.socket, 'the same connection answered').toBe(first.socket);
    agent.destroy();
  });

  it('stops without waiting out the keep-alive of a connection that was answering when the stop came', async () => {
    // A request in flight at the stop: its body is still coming when close() is called.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const { answered } = await rateRequestInFlight(server.url, agent);
    const started = Date.now();
    const stopped = server.close();
    expect(await answered, 'the request in flight is answered').toBe(200);
    await stopped;
    // Not SHUTDOWN_TIMEOUT_MS (10 s, when the stop gives up and cuts every connection), nor KEEP_ALIVE_MS.
    expect(Date.now() - started).toBeLessThan(5_000);
    agent.destroy();
  });
});
