import pg from 'pg';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { fileURLToPath } from 'node:url';
import { setTimeout } from 'node:timers/promises';
import * as schema from './schema.ts';
import { startEmbeddedPostgres } from './embedded.ts';
import type { Logger } from '../log.ts';

export type Db = NodePgDatabase<typeof schema>;
export type Database = { pool: pg.Pool; db: Db; url: string; close: () => Promise<void> };

const MIGRATIONS = fileURLToPath(new URL('./migrations', import.meta.url));
/** Arbitrary but fixed: every process of this product takes the same lock before migrating. */
const MIGRATION_LOCK = 7_420_001;
/** How long a close waits for the connections pg-pool has asked to end. */
const CLOSE_WAIT_MS = 5_000;

// numeric stays a string (exact money); int8 counts become bigint-safe strings too.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => value);

/** Connects to DATABASE_URL, or starts embedded PostgreSQL under DATA_DIR, then applies migrations. */
export async function openDatabase(
  options: {
    databaseUrl: string | undefined;
    dataDir: string;
    poolSize?: number;
    /** The process stops itself on a signal, closing this database first: an embedded PostgreSQL gets a process group of its own. */
    gracefulStop?: boolean;
  },
  log: Logger,
): Promise<Database> {
  const embedded = options.databaseUrl ? undefined : await startEmbeddedPostgres(options.dataDir, log, { ownGroup: options.gracefulStop ?? false });
  const url = options.databaseUrl ?? embedded?.url ?? '';
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 20, connectionTimeoutMillis: 10_000 });
  pool.on('error', (error) => log.warn({ err: error }, 'idle database connection failed'));
  // A checked-out client has no listener of the pool's: when the server ends its connection (57P01 on a restart,
  // a crash) the 'error' event would take the process down. The query in flight still fails, and the pool drops
  // the broken client when it is released.
  // pg-pool's end() resolves once it has asked each idle client to end, not once its connection has closed. Each
  // client's own end is awaited too, so an embedded PostgreSQL is never stopped under connections still closing.
  const ending = new Set<Promise<void>>();
  pool.on('connect', (client) => {
    client.on('error', (error) => log.warn({ err: error }, 'database connection failed'));
    const ended: Promise<void> = new Promise<void>((resolve) => client.once('end', resolve)).then(() => void ending.delete(ended));
    ending.add(ended);
  });
  const close = async () => {
    await pool.end().catch(() => {});
    await Promise.race([Promise.all(ending), setTimeout(CLOSE_WAIT_MS, undefined, { ref: false })]);
    await embedded?.stop();
  };
  try {
    await applyMigrations(pool, log);
  } catch (error) {
    await close();
    throw error;
  }
  return { pool, db: drizzle(pool, { schema }), url, close };
}

/** Migrations run under an advisory lock, so instances starting together apply them once, in turn. */
export async function applyMigrations(pool: pg.Pool, log: Logger): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await migrate(drizzle(client), { migrationsFolder: MIGRATIONS });
      log.debug('migrations applied');
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

/** SQLSTATE classes and codes of "the database is not there": connection exceptions, shutdown, too many clients. */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_SOCKET = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// pg and pg-pool say so in words only: a dropped connection, a client that is no longer queryable, a pool timeout.
const UNAVAILABLE_MESSAGE = /^Connection terminated|not queryable|timeout exceeded when trying to connect|Connection terminated due to connection timeout/;

/** An error and its causes (drizzle wraps pg's errors), nearest first, at most five deep. */
export function causesOf(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let current = error; current instanceof Error && chain.length < 5; current = current.cause) chain.push(current);
  return chain;
}

/** The SQLSTATE (or socket) code of an error or its nearest cause that has one. */
export function databaseCode(error: unknown): string | undefined {
  return causesOf(error)
    .map((current) => (current as { code?: unknown }).code)
    .find((code): code is string => typeof code === 'string');
}

/** True when an error (or one of its causes) says the database cannot be reached right now. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (const current of causesOf(error)) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (UNAVAILABLE_STATES.has(code) || code.startsWith('08') || UNAVAILABLE_SOCKET.has(code))) return true;
    if (UNAVAILABLE_MESSAGE.test(current.message)) return true;
    if (current instanceof AggregateError && current.errors.some((inner) => isDatabaseUnavailable(inner))) return true;
  }
  return false;
}

export async function databaseStatus(pool: pg.Pool): Promise<'up' | 'down'> {
  try {
    await pool.query('SELECT 1');
    return 'up';
  } catch {
    return 'down';
  }
}
