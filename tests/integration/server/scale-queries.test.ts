import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { NEW_ADDRESSES_SQL } from '../../../src/server/adapters/chains/address-set.ts';
import { createEvmAddressSet } from '../../../src/server/adapters/chains/evm/context.ts';
import { createDepositAddressSet } from '../../../src/server/adapters/chains/ton/reader.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import { SWEEP_CHECKS } from '../../../src/server/domain/sweep-audit.ts';
import { createLoginThrottleStore } from '../../../src/server/domain/login-throttle-store.ts';
import { afterFailure, retryAfterMs, throttleKeys, type ThrottleState } from '../../../src/server/domain/throttle.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { quietLog } from '../../support/custody.ts';

/**
 * Issue 35: the query shapes that keep hot paths flat as the data grows, on a real PostgreSQL. The block scans'
 * "addresses added since" is an index lookup (EXPLAIN), the sign-in throttle's reservation is one statement that
 * counts as throttle.ts's rules do, and the audit's sweep check reads the ledger once, not once per sweep.
 */
describe('queries at scale', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let pool: pg.Pool;

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: await mkdtemp(join(tmpdir(), 'scale-queries-')) }, quietLog);
    pool = database.pool;
  });
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  describe('deposit addresses added since the last scan', () => {
    const ADDRESSES = 30_000;
    beforeAll(async () => {
      // 30,000 accounts with an Ethereum and a TON address each, made over 400 days (as the scale seed makes them).
      await pool.query(`INSERT INTO users (id, email, email_confirmed_at) SELECT md5('u' || i)::uuid, 'scan-' || i || '@scale.test', now() FROM generate_series(0, ${ADDRESSES - 1}) AS g(i)`);
      await pool.query(`INSERT INTO wallet_accounts (id, user_id) SELECT md5('a' || i)::uuid, md5('u' || i)::uuid FROM generate_series(0, ${ADDRESSES - 1}) AS g(i)`);
      await pool.query(
        `INSERT INTO deposit_addresses (network, address, wallet_account_id, derivation_index, created_at)
         SELECT 'ETHEREUM', '0x' || substr(md5('eth' || i) || md5('eth2' || i), 1, 40), md5('a' || i)::uuid, i, now() - interval '400 days' + make_interval(secs => i * ${34_560_000 / ADDRESSES})
           FROM generate_series(0, ${ADDRESSES - 1}) AS g(i)
         UNION ALL
         SELECT 'TON', translate(encode('\\x1100'::bytea || sha256(('ton' || i)::bytea) || '\\x0000'::bytea, 'base64'), '+/', '-_'), md5('a' || i)::uuid, i,
                now() - interval '400 days' + make_interval(secs => i * ${34_560_000 / ADDRESSES})
           FROM generate_series(0, ${ADDRESSES - 1}) AS g(i)`,
      );
      await pool.query('ANALYZE deposit_addresses');
    });

    it('finds the new rows through the (network, created_at) index, not a walk of the network', async () => {
      const plan = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${NEW_ADDRESSES_SQL}`, ['ETHEREUM', '', new Date(Date.now() - 60 * 60_000)]);
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(text).toMatch(/Index (Only )?Scan using deposit_addresses_network_created_at on deposit_addresses/);
      expect(text).toMatch(/Index Cond: \(\(network = 'ETHEREUM'::text\) AND \(created_at >= /);
      // The last hour holds a handful of the 30,000 (one every ~19 minutes): the scan reads those, not the network.
      const scanned = /Index (?:Only )?Scan using deposit_addresses_network_created_at[^\n]*actual time=[^\n]* rows=(\d+)/.exec(text);
      expect(Number(scanned?.[1])).toBeLessThan(20);
      expect(text).not.toMatch(/Seq Scan on deposit_addresses|deposit_addresses_pkey/);
    });

    it('loads every address once, then only the ones added since (and those a late commit dated earlier)', async () => {
      const evm = createEvmAddressSet(pool);
      const ton = createDepositAddressSet(pool);
      await evm.refresh();
      await ton.refresh();
      expect(evm.size).toBe(ADDRESSES);
      expect(ton.size).toBe(ADDRESSES);
      const late = '0x' + 'ab'.repeat(20);
      const recent = '0x' + 'cd'.repeat(20);
      // Two new accounts' addresses: one committed now but dated five minutes back (inside the overlap), one dated now.
      await pool.query(`INSERT INTO users (id, email, email_confirmed_at) SELECT md5('u' || i)::uuid, 'scan-' || i || '@scale.test', now() FROM generate_series(${ADDRESSES}, ${ADDRESSES + 1}) AS g(i)`);
      await pool.query(`INSERT INTO wallet_accounts (id, user_id) SELECT md5('a' || i)::uuid, md5('u' || i)::uuid FROM generate_series(${ADDRESSES}, ${ADDRESSES + 1}) AS g(i)`);
      const [first, second] = [`md5('a${ADDRESSES}')::uuid`, `md5('a${ADDRESSES + 1}')::uuid`];
      await pool.query(
        `INSERT INTO deposit_addresses (network, address, wallet_account_id, derivation_index, created_at) VALUES
           ('BITCOIN', 'bcrt1qlate', ${first}, ${ADDRESSES}, now()),
           ('ETHEREUM', $1, ${first}, ${ADDRESSES}, (SELECT max(created_at) FROM deposit_addresses WHERE network = 'ETHEREUM') - interval '5 minutes'),
           ('ETHEREUM', $2, ${second}, ${ADDRESSES + 1}, now())`,
        [late, recent],
      );
      await evm.refresh();
      expect(evm.size).toBe(ADDRESSES + 2);
      expect(evm.find(late)).toBeDefined();
      expect(evm.find(recent)).toBeDefined();
      expect(evm.find('0x' + 'ef'.repeat(20))).toBeUndefined();
      await ton.refresh();
      expect(ton.size).toBe(ADDRESSES);
    });
  });

  describe("the audit's check of sweeps' top-up fees", () => {
    type PlanNode = { 'Relation Name'?: string; 'Actual Loops': number; 'Actual Rows': number; Plans?: PlanNode[] };
    const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

    it('reads the ledger once whatever the number of sweeps, and names the sweep whose top-ups do not add up', async () => {
      const SWEEPS = 200;
      const FILLER = 20_000;
      const check = SWEEP_CHECKS.find((c) => c.name.startsWith("each sweep's top-up fees"));
      if (!check) throw new Error('no top-up check');
      await pool.query(`INSERT INTO ledger_accounts (kind, code) VALUES ('SYSTEM', 'GAS_FLOAT:ETHEREUM') ON CONFLICT (code) DO NOTHING`);
      // 200 sweeps that each paid two top-ups of 3 (sweep 1's second taken back by a reorganisation), and one whose
      // row says 7 where its entries booked 6.
      await pool.query(
        `INSERT INTO sweeps (id, network, currency, address, derivation_index, amount, state, top_ups, top_up_fees)
         SELECT md5('sweep' || i)::uuid, 'ETHEREUM', 'USDT', '0x' || substr(md5('s' || i), 1, 40), i, 1, 'CONFIRMED', 2, CASE i WHEN 0 THEN 7 WHEN 1 THEN 3 ELSE 6 END
           FROM generate_series(0, ${SWEEPS - 1}) AS g(i)`,
      );
      const entries = await pool.query<{ id: string; key: string }>(
        `INSERT INTO ledger_entries (idempotency_key, kind, reference)
         SELECT 'sweep:top-up-fee:' || md5('sweep' || i)::uuid || ':' || n, 'SWEEP_FEE', 'sweep:' || md5('sweep' || i)::uuid FROM generate_series(0, ${SWEEPS - 1}) AS g(i), generate_series(1, 2) AS t(n)
         UNION ALL SELECT 'sweep:top-up-fee:' || md5('sweep1')::uuid || ':2:reopen', 'SWEEP_FEE_REOPEN', 'sweep:' || md5('sweep1')::uuid
         UNION ALL SELECT 'filler:' || i, 'TRANSFER', NULL FROM generate_series(1, ${FILLER}) AS g(i)
         RETURNING id, idempotency_key AS key`,
      );
      await pool.query(
        `INSERT INTO ledger_postings (entry_id, ledger_account_id, currency, bucket, amount)
         SELECT e.id, a.id, 'ETH', 'AVAILABLE', CASE WHEN e.key LIKE '%:reopen' THEN 3 ELSE -3 END
           FROM unnest($1::bigint[], $2::text[]) AS e(id, key), ledger_accounts a
          WHERE a.code = 'GAS_FLOAT:ETHEREUM' AND e.key LIKE 'sweep:%'`,
        [entries.rows.map((e) => e.id), entries.rows.map((e) => e.key)],
      );
      await pool.query('ANALYZE sweeps, ledger_entries, ledger_postings');

      const found = await pool.query<{ sweep: string; recorded: string; booked: string }>(check.sql);
      const [wrong] = (await pool.query<{ id: string }>(`SELECT md5('sweep0')::uuid AS id`)).rows;
      expect(found.rows).toEqual([{ sweep: wrong?.id, recorded: '7', booked: '6' }]);

      const plan = (await pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${check.sql}`)).rows[0]?.['QUERY PLAN'][0].Plan;
      if (!plan) throw new Error('no plan');
      const ledgerReads = nodes(plan).filter((node) => node['Relation Name'] === 'ledger_entries');
      expect(ledgerReads.length).toBeGreaterThan(0);
      // A join on a LIKE per sweep reads the ledger (or a copy of it in memory) once for each of the 200 sweeps.
      for (const node of ledgerReads) expect(node['Actual Loops']).toBe(1);
      const rowsHandled = nodes(plan).reduce((sum, node) => sum + node['Actual Rows'] * node['Actual Loops'], 0);
      expect(rowsHandled).toBeLessThan(3 * (FILLER + 2 * SWEEPS));
    });
  });

  describe('the sign-in throttle reservation', () => {
    it('counts every key as throttle.ts afterFailure does, through windows and doubling locks, in one statement', async () => {
      let clock = new Date('2026-11-01T00:00:00Z');
      const store = createLoginThrottleStore(pool, () => clock);
      const keys = throttleKeys('model@scale.test', '203.0.113.7');
      const model = new Map<string, ThrottleState | undefined>();
      let reservations = 0;
      let waits = 0;
      // Failures a minute apart: the pair key locks at its fifth, and the attempts inside its locks are refused.
      for (let step = 0; step < 40; step++) {
        clock = new Date(clock.getTime() + (step === 20 ? 30 * 60_000 : 61_000));
        const expectedWait = Math.max(...keys.map(({ key }) => retryAfterMs(model.get(key), clock)));
        const reservation = await store.reserveAttempt(keys);
        if ('wait' in reservation) {
          waits++;
          expect(reservation.wait).toBe(expectedWait);
          continue;
        }
        reservations++;
        expect(expectedWait).toBe(0);
        for (const { key, policy } of keys) {
          const before = model.get(key);
          const after = afterFailure(before?.failures ? before : undefined, clock, policy);
          const got = reservation.reserved.find((r) => r.key === key);
          expect(got?.after).toEqual(after);
          expect(got?.before?.lockedUntil ?? null).toEqual(before?.lockedUntil ?? null);
          model.set(key, after);
        }
      }
      expect(reservations).toBeGreaterThan(5);
      expect(waits).toBeGreaterThan(5);
    });

    it('counts every one of many first attempts at once on the same keys, none lost to a race', async () => {
      const clock = new Date();
      const stores = Array.from({ length: 8 }, () => createLoginThrottleStore(pool, () => clock));
      const keys = throttleKeys('race@scale.test', '198.51.100.9').filter(({ key }) => key.startsWith('ip:') || !key.includes('|'));
      const results = await Promise.all(stores.flatMap((store) => [store.reserveAttempt(keys), store.reserveAttempt(keys)]));
      expect(results.every((r) => 'reserved' in r)).toBe(true);
      const rows = await pool.query<{ key: string; failures: number }>('SELECT key, failures FROM login_throttle WHERE key = ANY($1) ORDER BY key', [keys.map(({ key }) => key)]);
      expect(rows.rows.map((r) => r.failures)).toEqual([16, 16]);
    });

    it('keeps a storm on one account to one pooled connection: a sign-in on other keys is not held up behind its row lock', async () => {
      const small = new pg.Pool({ connectionString: testDatabase.url, max: 3 });
      const holder = new pg.Client({ connectionString: testDatabase.url });
      await holder.connect();
      try {
        const store = createLoginThrottleStore(small, () => new Date());
        const victim = throttleKeys('storm@scale.test', '198.51.100.10');
        await store.reserveAttempt(victim);
        // Another process is in the middle of an attempt on the victim's rows.
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM login_throttle WHERE key = ANY($1) FOR UPDATE', [victim.map(({ key }) => key)]);
        const storm = Promise.all(Array.from({ length: 10 }, () => store.reserveAttempt(victim)));
        await new Promise((resolve) => setTimeout(resolve, 100));
        const bystander = store.reserveAttempt(throttleKeys('bystander@scale.test', '192.0.2.44'));
        const answered = await Promise.race([bystander.then(() => 'answered'), new Promise((resolve) => setTimeout(() => resolve('held up'), 3000))]);
        expect(answered).toBe('answered');
        await holder.query('COMMIT');
        const outcomes = await storm;
        // The account locks at its fifth failure; the attempts queued behind that are refused from the lock seen.
        expect(outcomes.filter((r) => 'reserved' in r)).toHaveLength(4);
        expect(outcomes.filter((r) => 'wait' in r)).toHaveLength(6);
      } finally {
        await holder.end();
        await small.end();
      }
    });
  });

  describe('ids of rows made per operation', () => {
    const versionOf = (id: string) => id[14];
    const variantOf = (id: string) => id[19];

    it('are UUIDv7: version 7, the RFC variant, the creation time in their first 48 bits, later ones sorting after', async () => {
      const first = await pool.query<{ id: string; ms: string }>(`SELECT uuid_v7()::text AS id, floor(extract(epoch FROM clock_timestamp()) * 1000)::text AS ms`);
      await pool.query('SELECT pg_sleep(0.005)');
      const second = await pool.query<{ id: string; later: boolean }>(`SELECT uuid_v7()::text AS id, uuid_v7() > $1::uuid AS later`, [first.rows[0]?.id]);
      const id = first.rows[0]?.id ?? '';
      expect(versionOf(id)).toBe('7');
      expect(['8', '9', 'a', 'b']).toContain(variantOf(id));
      const stamped = Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);
      expect(Math.abs(stamped - Number(first.rows[0]?.ms))).toBeLessThan(5);
      expect(second.rows[0]?.later).toBe(true);
      expect(second.rows[0]?.id).not.toBe(id);
    });

    it('are what a history item and a withdrawal get, while a user keeps a random one', async () => {
      const user = await pool.query<{ id: string }>(`INSERT INTO users (email, email_confirmed_at) VALUES ('ids@scale.test', now()) RETURNING id::text`);
      const userId = user.rows[0]?.id ?? '';
      expect(versionOf(userId)).toBe('4');
      const account = await pool.query<{ id: string }>(`INSERT INTO wallet_accounts (user_id) VALUES ($1) RETURNING id::text`, [userId]);
      const accountId = account.rows[0]?.id ?? '';
      const item = await pool.query<{ id: string }>(
        `INSERT INTO wallet_transactions (wallet_account_id, transaction_type, direction, state, currency, amount, reference)
         VALUES ($1, 'WITHDRAWAL', 'WITHDRAWAL', 'IN_PROGRESS', 'BTC', 1, 'ids:1') RETURNING id::text`,
        [accountId],
      );
      expect(versionOf(item.rows[0]?.id ?? '')).toBe('7');
      const withdrawal = await pool.query<{ id: string }>(
        `INSERT INTO withdrawals (wallet_account_id, idempotency_key, kind, state, currency, network, amount, fee, to_address)
         VALUES ($1, 'ids-1', 'EXTERNAL', 'PENDING', 'BTC', 'BITCOIN', 1000, 10, 'bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh') RETURNING id::text`,
        [accountId],
      );
      expect(versionOf(withdrawal.rows[0]?.id ?? '')).toBe('7');
    });
  });
});
