import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runningPort, startEmbeddedPostgres } from '../../src/server/db/embedded.ts';
import { createLogger } from '../../src/server/log.ts';

/**
 * A PostgreSQL server for tests: TEST_DATABASE_URL (any database on it; CI uses the machine's server),
 * else an embedded one in a temporary directory. Each test suite makes its own database and drops it.
 */
export type TestServer = { adminUrl: string; stop: () => Promise<void> };

export async function startTestPostgres(): Promise<TestServer> {
  const given = process.env.TEST_DATABASE_URL;
  if (given) return { adminUrl: given, stop: async () => {} };
  const dir = await mkdtemp(join(tmpdir(), 'wallet-test-pg-'));
  const embedded = await startEmbeddedPostgres(dir, createLogger('warn'));
  return {
    adminUrl: embedded.url,
    stop: async () => {
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export type TestDatabase = { url: string; drop: () => Promise<void> };

export async function createTestDatabase(adminUrl: string, prefix = 'wallet_test'): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        // A pool's end() resolves before its connections have closed: give them a moment to go on their own (a
        // connection FORCE terminates reaches its client as an error nobody listens to any more), then force.
        for (let attempt = 0; ; attempt++) {
          const others = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
          if ((others.rows[0]?.n ?? 0) === 0 || attempt >= 40) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A pool that counts what reaches PostgreSQL through it: statements (`query`) and connections checked out (`connect`). */
export function countedPool(pool: pg.Pool): { pool: pg.Pool; counts: { statements: number; connections: number } } {
  const counts = { statements: 0, connections: 0 };
  const counted = new Proxy(pool, {
    get(target, key) {
      if (key === 'query') return (...args: unknown[]) => ((counts.statements += 1), (target.query as (...a: unknown[]) => unknown)(...args));
      if (key === 'connect') return () => ((counts.connections += 1), target.connect());
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as pg.Pool;
  return { pool: counted, counts };
}

/** Kills a PostgreSQL a failed test left running on its data directory (the server runs it in a group of its own). */
export async function killLeftPostgres(databaseDir: string): Promise<void> {
  if ((await runningPort(databaseDir)) === undefined) return;
  const pid = Number((await readFile(join(databaseDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  try {
    if (pid > 0) process.kill(pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
}
