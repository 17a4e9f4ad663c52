import { hash } from '@node-rs/argon2';
import pg from 'pg';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../../src/server/db/database.ts';
import { startEmbeddedPostgres } from '../../src/server/db/embedded.ts';
import { createLogger } from '../../src/server/log.ts';
import { loadWalletSeed } from '../../src/server/adapters/keys/seed.ts';
import { ensureSystemAccounts, SYSTEM_ACCOUNTS, systemAccountId, systemAccounts } from '../../src/server/domain/ledger.ts';
import { ARGON2_OPTIONS } from '../../src/server/domain/passwords.ts';
import { NETWORKS } from '../../src/lib/currencies.ts';
import { TEST_MNEMONIC } from '../support/custody.ts';

/**
 * The million-user database of bench:scale, seeded straight in SQL (generate_series, no API): SCALE × 1,000,000
 * users, each with one wallet account, three assets (BTC, ETH, TON) and their deposit addresses, and SCALE ×
 * 10,000,000 history items, each a completed deposit backed by one ledger entry of three postings (the world pays
 * the amount, the user gets it less the fee, fee income the fee): SCALE × 30,000,000 postings. Balances are the sums
 * of the postings, so `ledger:audit` passes. One account (HEAVY) has 10,000 items, the next (LIGHT) 10.
 *
 * Kept in an embedded PostgreSQL under DATA_DIR/bench-scale (its own server, so its settings are its own), one
 * database per scale whose name carries SEED_VERSION; `stamp-<database>.json` beside it says it is complete (the
 * last step), with its seeding time and size. A bump of SEED_VERSION (the seed's shape or the schema it was made on
 * changed) makes a new one; the old one is dropped.
 */
export const SEED_VERSION = 1;
export const SEED_PASSWORD = 'bench scale password that is long enough';
export const HEAVY_ITEMS = 10_000;
export const SEED_CURRENCIES = [
  { currency: 'BTC', network: 'BITCOIN' },
  { currency: 'ETH', network: 'ETHEREUM' },
  { currency: 'TON', network: 'TON' },
] as const;

export type ScaleStamp = { version: number; scale: number; users: number; items: number; seconds: number; bytes: number; steps: Record<string, number> };
export type ScaleDatabase = { url: string; adminUrl: string; name: string; stamp: ScaleStamp; heavy: SeededUser; light: SeededUser; stop: () => Promise<void> };
export type SeededUser = { index: number; email: string; accountId: string };

const log = createLogger('warn');

/** The id of seeded row `i` of a kind: deterministic, so every step computes the others' ids without a join. */
const idSql = (kind: string, i: string) => `md5('${kind}' || ${i})::uuid`;

export function seededUser(index: number): SeededUser {
  return { index, email: `bench-${index}@scale.test`, accountId: uuidOf(`a${index}`) };
}

/** History item n's id (its ledger entry is n + 1); the first HEAVY_ITEMS are the heavy account's. */
export const seededItemId = (n: number) => uuidOf(`t${n}`);

function uuidOf(text: string): string {
  const hex = createMd5(text);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

function createMd5(text: string): string {
  return createHash('md5').update(text).digest('hex');
}

/**
 * The buffer cache a database server of a million users is given: PostgreSQL's own guidance, a quarter of the
 * machine's memory (at most 8 GB). PostgreSQL's default of 128 MB is sized for a laptop: on it the index leaves of
 * ten thousand active accounts alone do not fit, and every transfer reads them back from the OS.
 */
export function scaleSharedBuffersMb(totalBytes = totalmem()): number {
  return Math.max(128, Math.min(8192, Math.floor(totalBytes / 4 / 2 ** 20)));
}

/**
 * The embedded server under DATA_DIR/bench-scale, with settings for bulk loads and the buffer cache of a production
 * server (its own; nobody else's). Both databases of a run, empty and seeded, live on it, so they share one cache.
 */
export async function startScaleServer(dataDir: string): Promise<{ adminUrl: string; dir: string; stop: () => Promise<void> }> {
  const dir = join(dataDir, 'bench-scale');
  await mkdir(dir, { recursive: true });
  const buffersMb = scaleSharedBuffersMb();
  for (let attempt = 0; ; attempt++) {
    const server = await startEmbeddedPostgres(dir, log);
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    let restart = false;
    try {
      // Fewer checkpoints during the load; reloaded at once (both are sighup settings).
      await admin.query(`ALTER SYSTEM SET max_wal_size = '8GB'`);
      await admin.query(`ALTER SYSTEM SET checkpoint_timeout = '30min'`);
      await admin.query('SELECT pg_reload_conf()');
      // shared_buffers takes a restart: once, when the server runs with another size (pg_settings counts 8 kB pages).
      await admin.query(`ALTER SYSTEM SET shared_buffers = '${buffersMb}MB'`);
      const running = await admin.query<{ mb: string }>(`SELECT setting::bigint * 8 / 1024 AS mb FROM pg_settings WHERE name = 'shared_buffers'`);
      restart = Number(running.rows[0]?.mb) !== buffersMb && attempt === 0;
    } finally {
      await admin.end();
    }
    if (!restart) return { adminUrl: server.url, dir, stop: server.stop };
    await server.stop();
  }
}

export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The seeded database at `scale`, made if missing or of an older SEED_VERSION. */
export async function openScaleDatabase(dataDir: string, scale: number, report: (line: string) => void = console.log): Promise<ScaleDatabase> {
  const server = await startScaleServer(dataDir);
  const name = `scale_v${SEED_VERSION}_${String(scale).replace('.', '_')}`;
  const stampFile = join(server.dir, `stamp-${name}.json`);
  let stamp = await readFile(stampFile, 'utf8').then((text) => JSON.parse(text) as ScaleStamp, () => undefined);
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  try {
    const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (!stamp || stamp.version !== SEED_VERSION || !exists) {
      // Ours alone: older versions of this seed and an unfinished one at this scale.
      const old = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'scale\\_v%'`);
      for (const { datname } of old.rows) if (datname === name || !datname.startsWith(`scale_v${SEED_VERSION}_`)) await admin.query(`DROP DATABASE ${datname} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${name}`);
      stamp = { ...(await seed(databaseUrl(server.adminUrl, name), seedCounts(scale), report)), scale };
      await writeFile(stampFile, JSON.stringify(stamp, null, 2));
    } else report(`reusing the seeded database ${name} (${stamp.users} users, ${stamp.items} items, seeded in ${stamp.seconds.toFixed(0)} s, ${(stamp.bytes / 2 ** 30).toFixed(2)} GiB)`);
  } finally {
    await admin.end();
  }
  return { url: databaseUrl(server.adminUrl, name), adminUrl: server.adminUrl, name, stamp, heavy: seededUser(0), light: seededUser(1), stop: server.stop };
}

/**
 * chain-scan.ts's own database when no SCAN_DATABASE_URL is given: the seed's `users` users with their accounts and
 * deposit addresses (one per network each, made over 400 days) and a history of 10 items, on the same embedded server,
 * reused between runs like the scale seed (`scan_v<SEED_VERSION>_<users>`, its stamp beside it). Its server stops
 * with the process.
 */
export async function openAddressDatabase(dataDir: string, users: number, report: (line: string) => void = console.log): Promise<{ url: string; stop: () => Promise<void> }> {
  const server = await startScaleServer(dataDir);
  const name = `scan_v${SEED_VERSION}_${users}`;
  const stampFile = join(server.dir, `stamp-${name}.json`);
  const stamp = await readFile(stampFile, 'utf8').then((text) => JSON.parse(text) as ScaleStamp, () => undefined);
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  try {
    const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (!stamp || stamp.version !== SEED_VERSION || !exists) {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${name}`);
      await writeFile(stampFile, JSON.stringify(await seed(databaseUrl(server.adminUrl, name), { users, items: 10 }, report), null, 2));
    } else report(`reusing the address database ${name} (${stamp.users} users, seeded in ${stamp.seconds.toFixed(0)} s)`);
  } finally {
    await admin.end();
  }
  return { url: databaseUrl(server.adminUrl, name), stop: server.stop };
}

/** Users and history items at `scale`: at least the heavy account's 10,000 items and 10 for every other. */
export function seedCounts(scale: number): { users: number; items: number } {
  const users = Math.max(10, Math.round(1_000_000 * scale));
  return { users, items: Math.max(HEAVY_ITEMS + 10 * (users - 1), Math.round(10_000_000 * scale)) };
}

/** The same seed at a small size (the measures' baseline) in a database of its own on the same server, dropped after. */
export async function createSmallDatabase(adminUrl: string, users: number, report: (line: string) => void = console.log): Promise<{ url: string; stamp: ScaleStamp; drop: () => Promise<void> }> {
  const name = `scale_small_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = databaseUrl(adminUrl, name);
  const stamp = await seed(url, { users, items: HEAVY_ITEMS + 10 * (users - 1) }, report);
  return {
    url,
    stamp,
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

async function seed(url: string, { users, items }: { users: number; items: number }, report: (line: string) => void): Promise<ScaleStamp> {
  report(`seeding ${users} users and ${items} history items...`);
  const started = performance.now();
  // Migrations (the server's own), then the system accounts the server would create at its start.
  const database = await openDatabase({ databaseUrl: url, dataDir: join('/tmp', 'unused') }, log);
  const walletSeed = await loadWalletSeed({ mnemonic: TEST_MNEMONIC, dataDir: '/tmp/unused', production: false }, log);
  await ensureSystemAccounts(database.pool, systemAccounts([...NETWORKS]));
  await database.close();
  const passwordHash = await hash(SEED_PASSWORD, ARGON2_OPTIONS);
  const feeIncome = systemAccountId(SYSTEM_ACCOUNTS.feeIncome());
  const world = (network: string) => systemAccountId(SYSTEM_ACCOUNTS.world(network));
  const currencyCase = (column: string, pick: (c: (typeof SEED_CURRENCIES)[number]) => string) =>
    `(CASE ${column} ${SEED_CURRENCIES.map((c, i) => `WHEN ${i} THEN ${pick(c)}`).join(' ')} END)`;
  // Item n's account: the first HEAVY_ITEMS are account 0's, the rest go round accounts 1.. (10 each at scale 1).
  const accountOf = (n: string) => `(CASE WHEN ${n} < ${HEAVY_ITEMS} THEN 0 ELSE 1 + (${n} - ${HEAVY_ITEMS}) % ${users - 1} END)`;
  // Each account's items go round the three currencies (n % 3 alone gives an account one currency when users - 1 divides by 3).
  const currencyOf = (n: string) => `((${n} + ${n} / ${users - 1}) % 3)`;
  const amountOf = (n: string) => `(100000 + (${n} % 997) * 1000)`;
  const feeOf = (n: string) => `(10 + ${n} % 7)`;

  const steps: Record<string, number> = {};
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const session = async (client: pg.PoolClient) => {
    await client.query(`SET synchronous_commit = off; SET maintenance_work_mem = '1GB'; SET max_parallel_maintenance_workers = 1; SET work_mem = '256MB'`);
  };
  const step = async (what: string, sqls: string[]) => {
    const client = await pool.connect();
    try {
      await session(client);
      const t0 = performance.now();
      for (const sql of sqls) await client.query(sql);
      steps[what] = (performance.now() - t0) / 1000;
      report(`  ${what}: ${steps[what].toFixed(1)} s`);
    } finally {
      client.release();
    }
  };
  // Every index and key of the seeded tables is dropped for the load and made again after, each in one pass (same
  // names, same definitions): row by row, their upkeep and the foreign keys' checks took most of the time.
  const client = await pool.connect();
  const bigTables = ['users', 'wallet_accounts', 'wallet_account_keys', 'account_assets', 'deposit_addresses', 'ledger_accounts', 'ledger_balances', 'ledger_postings', 'ledger_entries', 'wallet_transactions'];
  const indexes = await client.query<{ indexname: string; indexdef: string; tablename: string }>(
    `SELECT i.indexname, i.indexdef, i.tablename FROM pg_indexes i
      WHERE i.schemaname = 'public' AND i.tablename = ANY($1)
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    [bigTables],
  );
  // Their keys too, and every foreign key from or to them.
  const constraints = await client.query<{ conname: string; tablename: string; def: string; contype: string }>(
    `SELECT c.conname, t.relname AS tablename, pg_get_constraintdef(c.oid) AS def, c.contype FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
      WHERE c.contype IN ('p', 'u', 'f') AND (t.relname = ANY($1) OR (c.contype = 'f' AND c.confrelid IN (SELECT oid FROM pg_class WHERE relname = ANY($1))))
      ORDER BY c.contype = 'f' DESC`,
    [bigTables],
  );
  for (const index of indexes.rows) await client.query(`DROP INDEX ${index.indexname}`);
  // Foreign keys first, then the keys they hang on.
  for (const constraint of constraints.rows) await client.query(`ALTER TABLE ${constraint.tablename} DROP CONSTRAINT ${constraint.conname}`);
  const remake = (table: (name: string) => boolean, types: string[]) =>
    constraints.rows.filter((c) => table(c.tablename) && types.includes(c.contype)).map((c) => `ALTER TABLE ${c.tablename} ADD CONSTRAINT ${c.conname} ${c.def}`);
  client.release();

  const addressTime = `now() - interval '400 days' + make_interval(secs => i * ${34_560_000 / users})`;
  const series = (count: number) => `generate_series(0, ${count - 1}) AS g(i)`;
  // Two connections at once: the accounts' tables and the history on one, the ledger on the other.
  await Promise.all([
    step('users, accounts, keys, assets, addresses, ledger accounts, history items', [
      `INSERT INTO users (id, email, password_hash, email_confirmed_at, created_at)
       SELECT ${idSql('u', 'i')}, 'bench-' || i || '@scale.test', '${passwordHash}', now(), now() - interval '400 days' FROM ${series(users)}`,
      `INSERT INTO wallet_accounts (id, user_id, created_at) SELECT ${idSql('a', 'i')}, ${idSql('u', 'i')}, now() - interval '400 days' FROM ${series(users)}`,
      `INSERT INTO wallet_account_keys (wallet_account_id, derivation_index, seed_fingerprint) OVERRIDING SYSTEM VALUE
       SELECT ${idSql('a', 'i')}, i, '${walletSeed.fingerprint}' FROM ${series(users)}`,
      `SELECT setval(pg_get_serial_sequence('wallet_account_keys', 'derivation_index'), ${users})`,
      `INSERT INTO account_assets (wallet_account_id, currency) SELECT ${idSql('a', 'i')}, c FROM ${series(users)}, unnest(ARRAY[${SEED_CURRENCIES.map((c) => `'${c.currency}'`).join(',')}]) AS c`,
      // Address shapes: bech32-like for Bitcoin, 0x+40 hex for Ethereum, a 48-character friendly form for TON (its bytes
      // are read without the checksum). Made over 400 days, in order: the readers load only rows newer than their last.
      `INSERT INTO deposit_addresses (network, address, wallet_account_id, derivation_index, created_at)
       SELECT 'BITCOIN', 'bcrt1q' || substr(md5('btc' || i) || md5('btc2' || i), 1, 38), ${idSql('a', 'i')}, i, ${addressTime} FROM ${series(users)}
       UNION ALL SELECT 'ETHEREUM', '0x' || substr(md5('eth' || i) || md5('eth2' || i), 1, 40), ${idSql('a', 'i')}, i, ${addressTime} FROM ${series(users)}
       UNION ALL SELECT 'TON', translate(encode('\\x1100'::bytea || sha256(('ton' || i)::bytea) || '\\x0000'::bytea, 'base64'), '+/', '-_'), ${idSql('a', 'i')}, i, ${addressTime} FROM ${series(users)}`,
      `INSERT INTO ledger_accounts (id, kind, code, wallet_account_id, allow_negative) SELECT ${idSql('a', 'i')}, 'USER', 'USER:' || ${idSql('a', 'i')}, ${idSql('a', 'i')}, false FROM ${series(users)}`,
      `INSERT INTO wallet_transactions (id, wallet_account_id, transaction_type, direction, state, currency, amount, fee, fee_currency, network, to_address, hash, reference, created_at, updated_at, completed_at)
       SELECT ${idSql('t', 'i')}, ${idSql('a', accountOf('i'))}, 'DEPOSIT', 'DEPOSIT', 'COMPLETED', ${currencyCase(currencyOf('i'), (c) => `'${c.currency}'`)},
              ${amountOf('i')}, ${feeOf('i')}, ${currencyCase(currencyOf('i'), (c) => `'${c.currency}'`)}, ${currencyCase(currencyOf('i'), (c) => `'${c.network}'`)}, NULL, md5('tx' || i),
              'bench:' || i, ts, ts, ts
         FROM ${series(items)}, LATERAL (SELECT now() - interval '365 days' + make_interval(secs => i * ${31_536_000 / items})) AS t(ts)`,
    ]),
    step('ledger entries and postings', [
      `INSERT INTO ledger_entries (id, idempotency_key, kind, reference, created_at) OVERRIDING SYSTEM VALUE
       SELECT i + 1, 'bench:' || i, 'DEPOSIT', 'bench:' || i, now() - interval '365 days' + make_interval(secs => i * ${31_536_000 / items}) FROM ${series(items)}`,
      `SELECT setval(pg_get_serial_sequence('ledger_entries', 'id'), ${items})`,
      `INSERT INTO ledger_postings (entry_id, ledger_account_id, currency, bucket, amount)
       SELECT i + 1, p.account, ${currencyCase(currencyOf('i'), (c) => `'${c.currency}'`)}, 'AVAILABLE', p.amount
         FROM ${series(items)}, LATERAL (VALUES
           (${currencyCase(currencyOf('i'), (c) => `'${world(c.network)}'::uuid`)}, -${amountOf('i')}),
           (${idSql('a', accountOf('i'))}, ${amountOf('i')} - ${feeOf('i')}),
           ('${feeIncome}'::uuid, ${feeOf('i')})) AS p(account, amount)`,
    ]),
  ]);
  await Promise.all([
    step('balances', [
      // The postings' sums, computed from the generator (the same figures, without reading 30M rows back).
      `INSERT INTO ledger_balances (ledger_account_id, currency, available, on_hold, allow_negative)
       SELECT ${idSql('a', accountOf('i'))}, ${currencyCase(currencyOf('i'), (c) => `'${c.currency}'`)}, sum(${amountOf('i')} - ${feeOf('i')}), 0, false FROM ${series(items)} GROUP BY 1, 2
       UNION ALL SELECT ${currencyCase(currencyOf('i'), (c) => `'${world(c.network)}'::uuid`)}, ${currencyCase(currencyOf('i'), (c) => `'${c.currency}'`)}, -sum(${amountOf('i')}), 0, true FROM ${series(items)} GROUP BY 1, 2
       UNION ALL SELECT '${feeIncome}'::uuid, ${currencyCase(currencyOf('i'), (c) => `'${c.currency}'`)}, sum(${feeOf('i')}), 0, false FROM ${series(items)} GROUP BY 1, 2`,
    ]),
    step('ledger_postings keys', remake((t) => t === 'ledger_postings', ['p', 'u'])),
  ]);
  await Promise.all([
    step('ledger_postings indexes', indexes.rows.filter((i) => i.tablename === 'ledger_postings').map((i) => i.indexdef)),
    step('history and entries keys and indexes', [
      ...remake((t) => t !== 'ledger_postings', ['p', 'u']),
      ...indexes.rows.filter((i) => i.tablename !== 'ledger_postings').map((i) => i.indexdef),
    ]),
  ]);
  await step('foreign keys', remake(() => true, ['f']));
  await step('analyze', ['VACUUM (ANALYZE)']);
  const size = await pool.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes');
  await pool.end();
  const seconds = (performance.now() - started) / 1000;
  const bytes = Number(size.rows[0]?.bytes ?? 0);
  report(`seeded in ${seconds.toFixed(0)} s: ${(bytes / 2 ** 30).toFixed(2)} GiB, ${(bytes / users / 1024).toFixed(1)} KiB per user`);
  return { version: SEED_VERSION, scale: users / 1_000_000, users, items, seconds, bytes, steps };
}
