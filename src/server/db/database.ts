import pg from 'pg';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { fileURLToPath } from 'node:url';
import * as schema from './schema.ts';
import { startEmbeddedPostgres } from './embedded.ts';
import type { Logger } from '../log.ts';

export type Db = NodePgDatabase<typeof schema>;
export type Database = { pool: pg.Pool; db: Db; url: string; close: () => Promise<void> };

const MIGRATIONS = fileURLToPath(new URL('./migrations', import.meta.url));
/** Arbitrary but fixed: every process of this product takes the same lock before migrating. */
const MIGRATION_LOCK = 7_420_001;

// numeric stays a string (exact money); int8 counts become bigint-safe strings too.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => value);

/** Connects to DATABASE_URL, or starts embedded PostgreSQL under DATA_DIR, then applies migrations. */
export async function openDatabase(
  options: { databaseUrl: string | undefined; dataDir: string; poolSize?: number },
  log: Logger,
): Promise<Database> {
  const embedded = options.databaseUrl ? undefined : await startEmbeddedPostgres(options.dataDir, log);
  const url = options.databaseUrl ?? embedded?.url ?? '';
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 20, connectionTimeoutMillis: 10_000 });
  pool.on('error', (error) => log.warn({ err: error }, 'idle database connection failed'));
  const close = async () => {
    await pool.end().catch(() => {});
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

export async function databaseStatus(pool: pg.Pool): Promise<'up' | 'down'> {
  try {
    await pool.query('SELECT 1');
    return 'up';
  } catch {
    return 'down';
  }
}
