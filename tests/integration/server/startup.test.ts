import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createServer } from 'node:net';
import { createTestDatabase, killLeftPostgres, type TestDatabase } from '../../support/database.ts';
import { launchServer, runUntilExit, freePort, rateRequestInFlight } from '../../support/server.ts';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runningPort } from '../../../src/server/db/embedded.ts';

describe('starting the server', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('two processes on one DATABASE_URL both start: the migration lock lets them in turn', async () => {
    const [a, b] = await Promise.all([launchServer({ DATABASE_URL: database.url }), launchServer({ DATABASE_URL: database.url })]);
    try {
      for (const server of [a, b]) {
        const health = await fetch(`${server.url}/api/health`).then((r) => r.json());
        expect(health).toMatchObject({ status: 'ok', database: 'up' });
      }
    } finally {
      expect(await a.stop()).toBe(0);
      expect(await b.stop()).toBe(0);
    }
  });

  it.each([
    ['a SIGTERM to the server', false],
    // A terminal's Ctrl-C signals its whole foreground process group: PostgreSQL runs in a group of its own.
    ["a terminal's Ctrl-C (SIGINT to the server's process group)", true],
  ] as const)('on its embedded PostgreSQL, %s answers the request in flight before PostgreSQL stops', async (_, ctrlC) => {
    // DATA_DIR under a directory PostgreSQL's own user can reach (as root it runs as 'postgres').
    const dir = await mkdtemp(join(tmpdir(), 'wallet-embedded-'));
    await chmod(dir, 0o755);
    const server = await launchServer({ DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'info' }, { waitMs: 120_000, ownGroup: ctrlC });
    try {
      // Its body still coming when the signal arrives.
      const { answered } = await rateRequestInFlight(server.url);
      const stopped = ctrlC ? new Promise<number | null>((resolve) => server.process.once('exit', resolve)) : server.stop();
      if (ctrlC) process.kill(-(server.process.pid ?? 0), 'SIGINT');
      expect(await answered, server.output()).toBe(200);
      expect(await stopped, server.output()).toBe(0);
      expect(server.output()).toContain('"msg":"stopped"');
      expect(server.output(), 'no query met a PostgreSQL stopped under it').not.toMatch(/terminating connection/);
      expect(await runningPort(join(dir, 'data', 'pg')), 'PostgreSQL stopped with the server').toBeUndefined();
    } finally {
      server.process.kill('SIGKILL');
      // A failed run may leave its PostgreSQL (in a group of its own) running.
      await killLeftPostgres(join(dir, 'data', 'pg'));
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('a malformed DATABASE_URL ends the start with one clear line', async () => {
    const result = await runUntilExit({ DATABASE_URL: 'postgres//nope' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^wallet: cannot start: DATABASE_URL is invalid/)]);
  });

  it('a taken port ends the start with one clear line', async () => {
    const port = await freePort();
    const blocker = createServer().listen(port, '0.0.0.0');
    await new Promise((resolve) => blocker.once('listening', resolve));
    try {
      const result = await runUntilExit({ DATABASE_URL: database.url, PORT: String(port) });
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`wallet: cannot start: PORT ${port} is already in use`);
    } finally {
      blocker.close();
    }
  });

  it('announces CHAIN_ENV to the browser, and a database derived under one CHAIN_ENV refuses another with one clear line', async () => {
    const own = await createTestDatabase(inject('adminDatabaseUrl'));
    const env = { DATABASE_URL: own.url, DATA_DIR: await mkdtemp(join(tmpdir(), 'wallet-chain-env-')) };
    try {
      const server = await launchServer({ ...env, CHAIN_ENV: 'regtest' });
      try {
        const config = (await (await fetch(`${server.url}/api/client-config`)).json()) as { chainEnv?: string };
        expect(config.chainEnv).toBe('regtest');
      } finally {
        expect(await server.stop()).toBe(0);
      }
      const refused = await runUntilExit({ ...env, CHAIN_ENV: 'mainnet' });
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim()).toBe(
        "wallet: cannot start: CHAIN_ENV is mainnet but this database's deposit addresses were derived under CHAIN_ENV=regtest: set CHAIN_ENV=regtest or use another database",
      );
      // The same environment starts again.
      const again = await launchServer({ ...env, CHAIN_ENV: 'regtest' });
      expect(await again.stop()).toBe(0);
    } finally {
      await own.drop();
    }
  });

  it('answers unknown API paths with 404 and the error shape, and pages with HTML', async () => {
    const server = await launchServer({ DATABASE_URL: database.url });
    try {
      const missing = await fetch(`${server.url}/api/nothing-here`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ exceptionCode: 'NOT_FOUND' });
      const page = await fetch(`${server.url}/auth`);
      expect(page.status).toBe(200);
      expect(page.headers.get('x-request-id')).toBeTruthy();
      expect(await page.text()).toContain('<html');
    } finally {
      await server.stop();
    }
  });
  it('at LOG_LEVEL=info writes one access line per request: its id, method, path without the query, status and time', async () => {
    const server = await launchServer({ DATABASE_URL: database.url, LOG_LEVEL: 'info' });
    let page: Response | undefined;
    let discovery: Response | undefined;
    try {
      const answers = await Promise.all(['a', 'b'].map((n) => fetch(`${server.url}/api/nothing-${n}?secret=1`, { headers: { 'x-request-id': `access-${n}` } })));
      expect(answers.map((r) => r.headers.get('x-request-id'))).toEqual(['access-a', 'access-b']);
      const own = await Promise.all([1, 2].map(() => fetch(`${server.url}/api/health`)));
      const ids = own.map((r) => r.headers.get('x-request-id') ?? '');
      // Pages and the identity provider are answered by other handlers: each of their answers has its line too.
      page = await fetch(`${server.url}/auth/login`, { headers: { 'x-request-id': 'access-page' }, redirect: 'manual' });
      discovery = await fetch(`${server.url}/oidc/.well-known/openid-configuration`, { method: 'HEAD', headers: { 'x-request-id': 'access-oidc' } });
      for (const id of ids) expect(id).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);
      expect(ids[0]).not.toBe(ids[1]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"request"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((line) => /^access-[ab]$/.test(String(line.reqId))).sort((x, y) => String(x.reqId).localeCompare(String(y.reqId)))).toEqual(
      ['a', 'b'].map((n) => ({ level: 30, time: expect.any(String), service: 'wallet', reqId: `access-${n}`, method: 'GET', path: `/api/nothing-${n}`, status: 404, ms: expect.any(Number), msg: 'request' })),
    );
    expect(lines.some((line) => line.path === '/api/health' && line.status === 200)).toBe(true);
    expect(lines.filter((line) => line.reqId === 'access-page')).toEqual([expect.objectContaining({ method: 'GET', path: '/auth/login', status: page?.status })]);
    expect(lines.filter((line) => line.reqId === 'access-oidc')).toEqual([expect.objectContaining({ method: 'HEAD', path: '/oidc/.well-known/openid-configuration', status: discovery?.status })]);
  });
});
