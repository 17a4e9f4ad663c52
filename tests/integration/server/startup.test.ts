import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createServer } from 'node:net';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { launchServer, runUntilExit, freePort } from '../../support/server.ts';

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
});
