import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { auditFailures, createWalletAccount, openTestCustody, TEST_SECRETS_KEY } from '../../support/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { balancesOf, ensureUserLedgerAccount, SYSTEM_ACCOUNTS, systemAccountId } from '../../../src/server/domain/ledger.ts';
import { hold, transfer } from '../../../src/server/domain/ledger-writes.ts';
import { unitsOf } from '../../../src/lib/money.ts';

/**
 * README, "Backups and restore", tried on a real database (issue 30 item 6): users and ledger movements made through
 * the domain, `pg_dump -Fc`, `pg_restore` into a new database, and the copy opens with the same WALLET_SEED and
 * SECRETS_KEY, passes the ledger audit (`npm run ledger:audit`) and holds the same balances. The machine's client
 * tools must be at least the server's major version (pg_dump refuses a newer server): with the embedded PostgreSQL
 * 18 and Debian's 15 tools the test is skipped, saying why; CI runs it on the machine's PostgreSQL.
 */
const run = promisify(execFile);
const ROOT = new URL('../../../', import.meta.url).pathname;

async function clientMajor(tool: string): Promise<number | undefined> {
  try {
    const { stdout } = await run(tool, ['--version']);
    return Number(/(\d+)(?:\.\d+)?/.exec(stdout)?.[1]);
  } catch {
    return undefined;
  }
}

describe('backup and restore with pg_dump and pg_restore', () => {
  let source: TestDatabase;
  let restored: TestDatabase | undefined;
  let database: Database;
  let dir: string;
  let skipped: string | undefined;

  beforeAll(async () => {
    source = await createTestDatabase(inject('adminDatabaseUrl'), 'wallet_backup');
    ({ database } = await openTestCustody(source.url));
    dir = await mkdtemp(join(tmpdir(), 'wallet-backup-'));
    const server = Number((await database.pool.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0]?.v) / 10_000;
    const [dump, restore] = [await clientMajor('pg_dump'), await clientMajor('pg_restore')];
    if (dump === undefined || restore === undefined) skipped = 'pg_dump/pg_restore are not installed';
    else if (dump < Math.floor(server) || restore < Math.floor(server)) skipped = `the client tools are PostgreSQL ${dump}, the server ${Math.floor(server)}`;
  });
  afterAll(async () => {
    await database?.close();
    await source?.drop();
    await restored?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('restores a dump into a new database that audits clean with the same balances', async (context) => {
    if (skipped) context.skip(skipped);
    const pool = database.pool;
    const world = systemAccountId(SYSTEM_ACCOUNTS.world('BITCOIN'));
    const alice = await ensureUserLedgerAccount(pool, (await createWalletAccount(pool)).accountId);
    const bob = await ensureUserLedgerAccount(pool, (await createWalletAccount(pool)).accountId);
    await transfer(pool, { key: 'backup:deposit', kind: 'DEPOSIT', from: world, to: alice, currency: 'BTC', amount: unitsOf(150_000n) });
    await transfer(pool, { key: 'backup:internal', kind: 'INTERNAL_TRANSFER', from: alice, to: bob, currency: 'BTC', amount: unitsOf(40_000n) });
    await hold(pool, { key: 'backup:hold', kind: 'WITHDRAWAL', account: alice, currency: 'BTC', amount: unitsOf(10_000n) });
    // Every stored balance, in one order: the copy must hold exactly these.
    const allBalances = async (p: typeof pool) =>
      (await p.query(`SELECT ledger_account_id, currency, available::text, on_hold::text FROM ledger_balances ORDER BY ledger_account_id, currency`)).rows;
    const before = { alice: await balancesOf(pool, alice), bob: await balancesOf(pool, bob), all: await allBalances(pool) };
    expect(before.all.length).toBeGreaterThan(3);
    expect(before.alice).toContainEqual({ currency: 'BTC', available: 100_000n, onHold: 10_000n });
    const counts = async (p: typeof pool) =>
      (await p.query(`SELECT (SELECT count(*) FROM users) AS users, (SELECT count(*) FROM ledger_entries) AS entries, (SELECT count(*) FROM ledger_postings) AS postings`)).rows[0];
    const countsBefore = await counts(pool);

    // README: pg_dump --format=custom, then pg_restore into a new, empty database.
    const file = join(dir, 'wallet.dump');
    await run('pg_dump', ['--format=custom', '--no-owner', `--file=${file}`, `--dbname=${source.url}`]);
    expect((await stat(file)).size).toBeGreaterThan(1000);
    restored = await createTestDatabase(inject('adminDatabaseUrl'), 'wallet_restored');
    await run('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${restored.url}`, file]);

    // The restored copy with the same WALLET_SEED and SECRETS_KEY: the custody opens (both fingerprints match).
    const copy = await openTestCustody(restored.url);
    try {
      expect(await auditFailures(copy.database.pool)).toEqual([]);
      expect(await counts(copy.database.pool)).toEqual(countsBefore);
      expect({ alice: await balancesOf(copy.database.pool, alice), bob: await balancesOf(copy.database.pool, bob), all: await allBalances(copy.database.pool) }).toEqual(before);
    } finally {
      await copy.database.close();
    }
    // Without its SECRETS_KEY the copy does not open: it is part of the backup.
    await expect(openTestCustody(restored.url, { secretsKey: TEST_SECRETS_KEY.replace(/1$/, '2') })).rejects.toThrow(/SECRETS_KEY/);

    // And the operator's own check, as the README says to run it on a restored copy.
    const audit = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, ['src/server/cli/ledger-audit.ts'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: restored?.url, LOG_LEVEL: 'warn', ENV_FILE: '' }, stdio: ['ignore', 'pipe', 'inherit'] });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.once('exit', (code) => resolve({ code, stdout }));
    });
    expect(audit.stdout).toMatch(/ledger audit: \d+ passed, 0 failed/);
    expect(audit.code).toBe(0);
  });
});
