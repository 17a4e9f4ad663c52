import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createTestDatabase, startTestPostgres } from '../support/database.ts';
import { auditFailures, createWalletAccount, openTestCustody } from '../support/custody.ts';
import { ensureUserLedgerAccount, LedgerError, SYSTEM_ACCOUNTS, systemAccountId } from '../../src/server/domain/ledger.ts';
import { transfer } from '../../src/server/domain/ledger-writes.ts';
import { unitsOf } from '../../src/lib/money.ts';

/**
 * Ledger transfers per second at 16 clients (each a full journal entry: entry, two postings, two guarded balance
 * updates, one transaction) beside pgbench's built-in tpcb-like script at 16 clients on the same database in the
 * same run, then the audit over everything written. Target: ratio ≥ 1.2, audit clean.
 */
const CLIENTS = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ACCOUNTS = 2_000;
// pgbench's guidance: a scale factor at least the number of clients, or its branch rows become one queue.
const SCALE = CLIENTS;

function findPgbench(): string | undefined {
  const onPath = spawnSync('sh', ['-c', 'command -v pgbench'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return onPath;
  return ['/usr/lib/postgresql/18/bin/pgbench', '/usr/lib/postgresql/17/bin/pgbench', '/usr/lib/postgresql/16/bin/pgbench', '/usr/lib/postgresql/15/bin/pgbench'].find((p) =>
    existsSync(p),
  );
}

const postgres = await startTestPostgres();
const testDatabase = await createTestDatabase(postgres.adminUrl, 'wallet_bench');
const { database } = await openTestCustody(testDatabase.url);
let failed = false;
try {
  // Users funded from the world, so the measured transfers move money between users, as swaps and payments do.
  const world = systemAccountId(SYSTEM_ACCOUNTS.world('BITCOIN'));
  const users: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) users.push(await ensureUserLedgerAccount(database.pool, (await createWalletAccount(database.pool)).accountId));
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      for (let i = client; i < users.length; i += CLIENTS) {
        await transfer(database.pool, { key: `bench-fund:${users[i]}`, kind: 'DEPOSIT', from: world, to: users[i] ?? '', currency: 'BTC', amount: unitsOf(1_000_000_000n) });
      }
    }),
  );

  const run = async (seconds: number) => {
    let done = 0;
    let refused = 0;
    let sequence = 0;
    const deadline = performance.now() + seconds * 1000;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        while (performance.now() < deadline) {
          const from = users[Math.floor(Math.random() * users.length)] ?? '';
          let to = users[Math.floor(Math.random() * users.length)] ?? '';
          if (to === from) to = users[(users.indexOf(from) + 1) % users.length] ?? '';
          try {
            await transfer(database.pool, { key: `bench:${client}:${sequence++}:${started}`, kind: 'TRANSFER', from, to, currency: 'BTC', amount: unitsOf(BigInt(1 + Math.floor(Math.random() * 1000))) });
            done++;
          } catch (error) {
            if (!(error instanceof LedgerError)) throw error;
            refused++;
          }
        }
      }),
    );
    return { tps: done / ((performance.now() - started) / 1000), done, refused };
  };
  await run(2);
  const ledger = await run(SECONDS);

  const pgbench = findPgbench();
  let baseline: number | undefined;
  if (!pgbench) {
    console.log('pgbench is not installed (not on PATH nor under /usr/lib/postgresql/*/bin): the baseline cannot be measured.');
    console.log('Install it with: apt-get install postgresql-client');
  } else {
    execFileSync(pgbench, ['-i', '-q', '-s', String(SCALE), testDatabase.url], { stdio: ['ignore', 'ignore', 'pipe'] });
    const output = execFileSync(pgbench, ['-c', String(CLIENTS), '-j', '2', '-T', String(SECONDS), '-b', 'tpcb-like', '-n', testDatabase.url], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(output)?.[1];
    if (!tps) throw new Error(`no tps in pgbench's output:\n${output}`);
    baseline = Number(tps);
    execFileSync(pgbench, ['-i', '-I', 'd', testDatabase.url], { stdio: 'ignore' });
  }

  console.log(`\n${CLIENTS} clients, ${SECONDS} s each`);
  console.log(`ledger transfers          ${ledger.tps.toFixed(0).padStart(6)} /s   (${ledger.done} done, ${ledger.refused} refused for funds)`);
  if (baseline !== undefined) {
    console.log(`pgbench tpcb-like (s=${SCALE})  ${baseline.toFixed(0).padStart(6)} tps`);
    const ratio = ledger.tps / baseline;
    console.log(`ratio ${ratio.toFixed(2)} (target ≥ 1.2)`);
    if (ratio < 1.2) failed = true;
  }

  const failures = await auditFailures(database.pool);
  const entries = await database.pool.query<{ n: string }>('SELECT count(*) AS n FROM ledger_entries');
  console.log(`ledger audit over ${entries.rows[0]?.n} entries: ${failures.length === 0 ? 'clean' : failures.map((f) => `FAILED ${f.name}`).join('; ')}`);
  if (failures.length > 0) failed = true;
  console.log(failed ? 'bench:ledger: FAIL' : baseline === undefined ? 'bench:ledger: NO BASELINE (pgbench missing)' : 'bench:ledger: PASS');
} finally {
  await database.close();
  await testDatabase.drop();
  await postgres.stop();
}
process.exit(failed ? 1 : 0);
