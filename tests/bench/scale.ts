import autocannon from 'autocannon';
import { spawnSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openDatabase } from '../../src/server/db/database.ts';
import { auditLedger } from '../../src/server/domain/ledger-audit.ts';
import { LedgerError } from '../../src/server/domain/ledger.ts';
import { transfer } from '../../src/server/domain/ledger-writes.ts';
import { createLogger } from '../../src/server/log.ts';
import { signIn } from '../support/auth.ts';
import { TEST_MNEMONIC, TEST_SECRETS_KEY } from '../support/custody.ts';
import { freePort, launchServer, launchWorker, type LaunchedServer } from '../support/server.ts';
import { createSmallDatabase, openScaleDatabase, SEED_PASSWORD, seededItemId, seededUser, type SeededUser } from './scale-seed.ts';
import { pacedLoad } from './paced.ts';
import { machineCpu, median, percentile, stolenShare } from './stats.ts';
import { unitsOf } from '../../src/lib/money.ts';
import { formatUnits } from '../../src/lib/amount.ts';

/**
 * bench:scale (issue 35): every hot path on a database the size of a real wallet's (SCALE × 1,000,000 users, SCALE ×
 * 10,000,000 history items and 30,000,000 postings; scale-seed.ts) beside the same seed at 2,000 users, both on one
 * embedded PostgreSQL under DATA_DIR/bench-scale, one server each, the measures alternating between them in ROUNDS
 * rounds (the ratios are the median round's); then the chain scans at mainnet size (chain-scan.ts, a process of its
 * own so its memory is its own). Goals: each request path within 1.25× of its small-database figure, balances p99
 * ≤ 10 ms at the million users' own polls (POLL_RATE), the audit usable (sampled: ledger-audit.ts), a Bitcoin-sized
 * block in ≤ 1 s, a million addresses in ≤ 200 MB. Not part of `npm test`.
 */
const SCALE = Number(process.env.SCALE ?? 1);
const DATA_DIR = process.env.DATA_DIR ?? './data';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
/**
 * Five rounds: on a 2-core virtual machine a round's tail figures (p99) move with its host's scheduling, and the
 * median of five is decided by three of them rather than two of three.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SMALL_USERS = 2_000;
/**
 * The transfers' goal is judged among the users active in the bench's seconds, as traffic is: 10,000 of the million
 * (all 2,000 of the small database). Transfers between uniformly random accounts of the million touch about six pages
 * each that no cache of this machine holds (read in and written whole to the WAL): that figure is printed as a note.
 */
const ACTIVE_USERS = 10_000;
/** Long enough for transfers among ACTIVE_USERS to touch each of them a few times (about 3,000 transfers/s, two accounts each). */
const WARM_TRANSFER_SECONDS = 15;
const RATIO_GOAL = 1.25;
/**
 * The load the absolute p99 goal is judged at: the million users' own balance polls. The app polls every 10 s while it
 * is open (SPEC §7 and §9; BALANCE_POLL_MS in src/stores/balances.ts), and ONLINE_SHARE of the users have it open at once:
 * 4 % of a million is 40,000 open apps, 4,000 req/s on one gateway. The same rate on the small database beside it.
 */
const POLL_SECONDS = 10;
const ONLINE_SHARE = Number(process.env.BENCH_ONLINE_SHARE ?? 0.04);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Target = { name: string; server: LaunchedServer; token: string; lightToken: string; heavy: SeededUser; light: SeededUser; withdrawer: SeededUser; withdrawerToken: string; url: string; users: number };
/** `note`: printed with its ratio but not a goal (the uniform transfers: see ACTIVE_USERS). */
type Figures = Record<string, { value: number; unit: string; higherIsBetter: boolean; note?: true }>;

const log = createLogger('warn');
const scaleDb = await openScaleDatabase(DATA_DIR, SCALE);
const small = await createSmallDatabase(scaleDb.adminUrl, SMALL_USERS);
const POLL_RATE = Math.round((scaleDb.stamp.users * ONLINE_SHARE) / POLL_SECONDS);
/**
 * The withdrawals' user of this run: the first light user of the scale database with none yet (the database is kept
 * between runs and the small one is made fresh, so each run's withdrawals start from the same empty history on both),
 * funded from the heavy account on each.
 */
const WITHDRAWER = await firstUserWithoutWithdrawals(scaleDb.url);
const WITHDRAWALS_PER_ROUND = 20;
/** 0.001 BTC each. */
const WITHDRAWAL_UNITS = unitsOf(100_000n);
/** Twice what the run's withdrawals hold. */
const WITHDRAWER_FUNDS = unitsOf(BigInt(2 * ROUNDS * WITHDRAWALS_PER_ROUND) * WITHDRAWAL_UNITS);
/** The servers and their workers, stopped at the end. */
const servers: { stop: () => Promise<number | null> }[] = [];
let failed = false;
try {
  const start = async (name: string, url: string, users: number): Promise<Target> => {
    const port = await freePort();
    // As production runs them: the gateway with WORKERS=off, the worker a process of its own on the same database.
    const env = { DATABASE_URL: url, PUBLIC_URL: `http://127.0.0.1:${port}`, WALLET_SEED: TEST_MNEMONIC, SECRETS_KEY: TEST_SECRETS_KEY, DATA_DIR: await mkdtemp(join(tmpdir(), 'wallet-scale-')), LOG_LEVEL: 'warn' };
    const server = await launchServer({ ...env, PORT: String(port), WORKERS: 'off' }, { waitMs: 180_000 });
    servers.push(server);
    const worker = launchWorker(env);
    servers.push(worker);
    const [heavy, light, withdrawer] = [seededUser(0), seededUser(1), seededUser(WITHDRAWER)];
    const tokens = await signIn(server.url, { email: heavy.email, password: SEED_PASSWORD });
    const lightTokens = await signIn(server.url, { email: light.email, password: SEED_PASSWORD });
    const withdrawerTokens = await signIn(server.url, { email: withdrawer.email, password: SEED_PASSWORD });
    await withClient(url, (client) =>
      transfer(client, { key: `scale:withdrawer:${WITHDRAWER}`, kind: 'TRANSFER', from: heavy.accountId, to: withdrawer.accountId, currency: 'BTC', amount: WITHDRAWER_FUNDS }),
    );
    return { name, server, token: tokens.accessToken, lightToken: lightTokens.accessToken, heavy, light, withdrawer, withdrawerToken: withdrawerTokens.accessToken, url, users };
  };
  const targets = [await start('small', small.url, small.stamp.users), await start('scale', scaleDb.url, scaleDb.stamp.users)];

  /** autocannon at `connections`, flat out. Latencies are each response's own (its histogram keeps whole milliseconds, which made 1 ms against 2 ms a ×2.00). */
  const load = async (target: Target, path: string, init: { method?: 'GET' | 'POST'; body?: string; token?: string } = {}, connections = 10) => {
    const latencies: number[] = [];
    const result = await new Promise<autocannon.Result>((resolve, reject) => {
      const instance = autocannon(
        {
          url: target.server.url + path,
          connections,
          duration: SECONDS,
          method: init.method ?? 'GET',
          headers: { authorization: `Bearer ${init.token ?? target.token}`, 'content-type': 'application/json' },
          ...(init.body === undefined ? {} : { body: init.body }),
        },
        (error: unknown, done) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(done)),
      );
      instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
    });
    if (result.non2xx + result.errors > 0) throw new Error(`${target.name} ${path}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    latencies.sort((a, b) => a - b);
    return { rps: result.requests.average, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
  };
  const timed = async (times: number, run: (i: number) => Promise<unknown>) => {
    const ms: number[] = [];
    for (let i = 0; i < times; i++) {
      const t0 = performance.now();
      await run(i);
      ms.push(performance.now() - t0);
    }
    return median(ms);
  };
  const historyBody = (account: string) => JSON.stringify({ account, pageSize: 100, pageNumber: 1, sort: 'DESC' });
  // The heavy account's item in the middle of its history.
  const itemId = seededItemId(5000);

  /** The second paced balances measure's rate (a note): half the small server's flat-out figure in the first round. */
  let halfRate = 0;
  const measure = async (target: Target, round: number): Promise<Figures> => {
    const figures: Figures = {};
    const balances = await load(target, `/api/${target.heavy.accountId}/asset`, {}, 50);
    figures['balances req/s'] = { value: balances.rps, unit: '/s', higherIsBetter: true };
    figures['balances p50'] = { value: balances.p50, unit: 'ms', higherIsBetter: false };
    figures['balances p99'] = { value: balances.p99, unit: 'ms', higherIsBetter: false };
    const balancesUrl = `${target.server.url}/api/${target.heavy.accountId}/asset`;
    const paced = await pacedLoad(balancesUrl, { authorization: `Bearer ${target.token}` }, POLL_RATE, SECONDS);
    figures['balances paced p50'] = { value: paced.p50, unit: 'ms', higherIsBetter: false, note: true };
    figures['balances paced p99'] = { value: paced.p99, unit: 'ms', higherIsBetter: false, note: true };
    // And at half of what the small server answered flat out in the first round (it is measured first there).
    if (halfRate === 0) halfRate = Math.round(balances.rps / 2);
    const half = await pacedLoad(balancesUrl, { authorization: `Bearer ${target.token}` }, halfRate, SECONDS);
    figures['balances p99 at half flat out'] = { value: half.p99, unit: 'ms', higherIsBetter: false, note: true };
    const heavy = await load(target, `/api/${target.heavy.accountId}/asset/transactions`, { method: 'POST', body: historyBody(target.heavy.accountId) });
    figures['history (10,000 items) req/s'] = { value: heavy.rps, unit: '/s', higherIsBetter: true };
    const light = await load(target, `/api/${target.light.accountId}/asset/transactions`, { method: 'POST', body: historyBody(target.light.accountId), token: target.lightToken });
    figures['history (10 items) req/s'] = { value: light.rps, unit: '/s', higherIsBetter: true };
    const details = await load(target, `/api/${target.heavy.accountId}/asset/transaction/${itemId}`);
    figures['details req/s'] = { value: details.rps, unit: '/s', higherIsBetter: true };
    figures['login ms'] = { value: await timed(6, () => signIn(target.server.url, { email: target.heavy.email, password: SEED_PASSWORD })), unit: 'ms', higherIsBetter: false };
    figures['withdrawal creation ms'] = {
      value: await timed(WITHDRAWALS_PER_ROUND, async (i) => {
        const response = await fetch(`${target.server.url}/api/${target.withdrawer.accountId}/withdrawal`, {
          method: 'POST',
          headers: { authorization: `Bearer ${target.withdrawerToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ account: target.withdrawer.accountId, currency: 'BTC', amount: formatUnits(WITHDRAWAL_UNITS, 8), depositAddress: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', idempotencyKey: `bench-${round}-${i}-${Date.now()}` }),
        });
        if (!response.ok) throw new Error(`withdrawal answered ${response.status}: ${await response.text()}`);
      }),
      unit: 'ms',
      higherIsBetter: false,
    };
    figures['ledger transfers/s (active users)'] = { value: await transfers(target, Math.min(ACTIVE_USERS, target.users)), unit: '/s', higherIsBetter: true };
    figures['ledger transfers/s (any user)'] = { value: await transfers(target, target.users), unit: '/s', higherIsBetter: true, note: true };
    return figures;
  };

  /** bench:ledger's transfer at 16 clients between random accounts of the database's first `users` users (BTC, amounts 1–1000). */
  const transfers = async (target: Target, users: number, seconds = SECONDS) => {
    const database = await openDatabase({ databaseUrl: target.url, dataDir: await mkdtemp(join(tmpdir(), 'wallet-scale-')) }, log);
    try {
      let done = 0;
      let sequence = 0;
      const started = performance.now();
      const deadline = started + seconds * 1000;
      await Promise.all(
        Array.from({ length: 16 }, async (_, client) => {
          while (performance.now() < deadline) {
            const from = seededUser(1 + Math.floor(Math.random() * (users - 1))).accountId;
            const to = seededUser(1 + Math.floor(Math.random() * (users - 1))).accountId;
            if (from === to) continue;
            try {
              await transfer(database.pool, { key: `scale:${client}:${sequence++}:${started}`, kind: 'TRANSFER', from, to, currency: 'BTC', amount: unitsOf(BigInt(1 + Math.floor(Math.random() * 1000))) });
              done++;
            } catch (error) {
              if (!(error instanceof LedgerError)) throw error;
            }
          }
        }),
      );
      return done / ((performance.now() - started) / 1000);
    } finally {
      await database.close();
    }
  };

  // Warm, as a running wallet is: the balances path, and the active users' ledger pages (a wallet's active users
  // are active all day; their rows stay in the buffer cache), by transfers among them for WARM_TRANSFER_SECONDS.
  for (const target of targets) {
    await load(target, `/api/${target.heavy.accountId}/asset`, {}, 50);
    await transfers(target, Math.min(ACTIVE_USERS, target.users), WARM_TRANSFER_SECONDS);
  }
  const rounds: Record<string, Figures[]> = { small: [], scale: [] };
  /** Per round, the share of the machine's CPU its hypervisor gave to others (undefined off Linux). */
  const stolen: (number | undefined)[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const before = machineCpu();
    for (const target of round % 2 === 0 ? targets : [...targets].reverse()) rounds[target.name]?.push(await measure(target, round));
    stolen.push(stolenShare(before, machineCpu()));
  }

  const audit = (url: string, sample: number | undefined) =>
    withClient(url, async (client) => {
      const t0 = performance.now();
      const results = await auditLedger(client, undefined, sample === undefined ? {} : { sample });
      return { seconds: (performance.now() - t0) / 1000, failed: results.filter((r) => !r.ok).map((r) => r.name) };
    });
  const sizePerUser = (url: string, users: number) =>
    withClient(url, async (client) => Number((await client.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes')).rows[0]?.bytes) / users);

  /** The buffer cache's size, and whether it sits on huge pages (the pages it needs when it does not). */
  const sharedBuffers = (url: string) =>
    withClient(url, async (client) => {
      const show = async (name: string) => (await client.query<Record<string, string>>(`SHOW ${name}`)).rows[0]?.[name] ?? '?';
      return { size: await show('shared_buffers'), hugePages: await show('huge_pages_status'), hugePagesNeeded: await show('shared_memory_size_in_huge_pages') };
    });

  const checks: [string, boolean][] = [];
  const buffers = await sharedBuffers(scaleDb.url);
  console.log(
    `\nscale ${SCALE}: ${scaleDb.stamp.users} users, ${scaleDb.stamp.items} items (seeded in ${scaleDb.stamp.seconds.toFixed(0)} s) against ${small.stamp.users} users, ${small.stamp.items} items; ${ROUNDS} rounds of ${SECONDS} s per measure; balances paced at ${POLL_RATE} req/s and ${halfRate} req/s; withdrawals by user ${WITHDRAWER}, its first; shared_buffers ${buffers.size} on huge pages: ${buffers.hugePages}`,
  );
  if (stolen.some((share) => share !== undefined)) {
    console.log(`note  CPU time the host's hypervisor took from this machine, by round: ${stolen.map((share) => (share === undefined ? '?' : `${(share * 100).toFixed(1)} %`)).join(', ')} (a round's tail latencies move with it)`);
  }
  // Without huge pages each buffer a statement touches costs a TLB miss once the working set outgrows the TLB's
  // reach: the million-user database's transfers then spend ~45 % more of PostgreSQL's CPU than the small one's.
  if (buffers.hugePages !== 'on') console.log(`note  PostgreSQL runs without huge pages: reserve them (as root: sysctl vm.nr_hugepages=${buffers.hugePagesNeeded}) and run again; see the README`);
  const names = Object.keys(rounds.small?.[0] ?? {});
  for (const name of names) {
    const of = (target: string) => (rounds[target] ?? []).map((f) => f[name]?.value ?? NaN);
    const higher = rounds.small?.[0]?.[name]?.higherIsBetter ?? false;
    const unit = rounds.small?.[0]?.[name]?.unit ?? '';
    // The scale database's cost against the small one's, per round: > 1 is slower.
    const perRound = of('small').map((s, i) => (higher ? s / (of('scale')[i] ?? NaN) : (of('scale')[i] ?? NaN) / s));
    const ratio = median(perRound);
    const shown = (values: number[]) => values.map((v) => v.toFixed(unit === '/s' ? 0 : 2)).join(' ');
    const line = `${name.padEnd(30)} small ${shown(of('small'))} ${unit}, scale ${shown(of('scale'))} ${unit}: cost ×${ratio.toFixed(2)}`;
    if (rounds.small?.[0]?.[name]?.note) console.log(`note  ${line} (not a goal)`);
    else checks.push([`${line} (goal ≤ ${RATIO_GOAL})`, ratio <= RATIO_GOAL]);
  }
  // The absolute goal is judged at the million users' own load, on the median round as the ratios are: flat out, a
  // closed-loop client's latency is its connections over the server's throughput (Little's law), which the req/s
  // ratio judges; and at half the flat-out rate, one round's p99 on two shared cores is the machine's scheduling as
  // much as the server (the small database's rounds spread as widely: both printed as notes).
  const scaleRounds = (name: string) => (rounds.scale ?? []).map((f) => f[name]?.value ?? NaN);
  console.log(`note  balances p99 flat out (50 connections) on the scale database: ${scaleRounds('balances p99').map((v) => v.toFixed(2)).join(' ')} ms (not a goal; its ratio is)`);
  const pacedP99 = median(scaleRounds('balances paced p99'));
  checks.push([
    `balances p99 on the scale database at ${POLL_RATE} req/s (${(ONLINE_SHARE * 100).toFixed(0)} % of ${scaleDb.stamp.users} users in the app, each polling every ${POLL_SECONDS} s), median round ${pacedP99.toFixed(2)} ms (goal ≤ 10 ms)`,
    pacedP99 <= 10,
  ]);
  const smallAudit = await audit(small.url, undefined);
  const sampled = await audit(scaleDb.url, 0.1);
  checks.push([`ledger audit: full pass on the small database ${smallAudit.seconds.toFixed(1)} s; sampled (0.1 %) on the scale database ${sampled.seconds.toFixed(1)} s (goal ≤ 60 s)`, sampled.seconds <= 60]);
  checks.push([`the audits are clean${[...smallAudit.failed, ...sampled.failed].map((f) => `; FAILED ${f}`).join('')}`, smallAudit.failed.length + sampled.failed.length === 0]);
  if (process.env.BENCH_FULL_AUDIT === '1') {
    const full = await audit(scaleDb.url, undefined);
    console.log(`note  full audit on the scale database: ${full.seconds.toFixed(0)} s${full.failed.map((f) => `; FAILED ${f}`).join('')}`);
  }
  console.log(`note  database size: ${((await sizePerUser(scaleDb.url, scaleDb.stamp.users)) / 1024).toFixed(1)} KiB per user at scale (${(scaleDb.stamp.bytes / 2 ** 30).toFixed(2)} GiB when seeded), ${((await sizePerUser(small.url, small.stamp.users)) / 1024).toFixed(1)} KiB on the small one`);

  for (const server of servers.splice(0)) await server.stop();
  // The chain scans, in a process of their own on the scale database's addresses.
  const scan = spawnSync(process.execPath, ['--expose-gc', 'tests/bench/chain-scan.ts'], { cwd: ROOT, env: { ...process.env, SCAN_DATABASE_URL: scaleDb.url }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  for (const line of scan.stdout.split('\n')) if (/^(PASS|FAIL) /.test(line)) checks.push([line.slice(5).trim(), line.startsWith('PASS')]);
  if (scan.status !== 0 && !scan.stdout.includes('FAIL')) checks.push([`the chain scans exited with ${scan.status}`, false]);

  for (const [text, ok] of checks) console.log(`${ok ? 'PASS' : 'FAIL'}  ${text}`);
  failed = checks.some(([, ok]) => !ok);
  console.log(failed ? 'bench:scale: FAIL' : 'bench:scale: PASS');
} finally {
  for (const server of servers) await server.stop();
  await small.drop();
  await scaleDb.stop();
}
process.exit(failed ? 1 : 0);

/** One connection to `url` for `work`, closed after. */
async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The lowest user index from 2 whose account has made no withdrawal (a user of the small database too: under SMALL_USERS). */
async function firstUserWithoutWithdrawals(url: string): Promise<number> {
  const candidates = Array.from({ length: SMALL_USERS - 2 }, (_, i) => seededUser(i + 2));
  const used = await withClient(url, (client) =>
    client.query<{ account: string }>('SELECT DISTINCT wallet_account_id AS account FROM withdrawals WHERE wallet_account_id = ANY($1)', [candidates.map((user) => user.accountId)]),
  );
  const withdrawn = new Set(used.rows.map((row) => row.account));
  const first = candidates.find((user) => !withdrawn.has(user.accountId));
  if (!first) throw new Error(`every user from 2 to ${SMALL_USERS - 1} of the scale database has made withdrawals: seed it again (delete its stamp under DATA_DIR/bench-scale)`);
  return first.index;
}
