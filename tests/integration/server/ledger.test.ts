import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { auditFailures, createWalletAccount, openTestCustody } from '../../support/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { auditLedger } from '../../../src/server/domain/ledger-audit.ts';
import { balancesOf, ensureUserLedgerAccount, LedgerError, SYSTEM_ACCOUNTS, systemAccountId } from '../../../src/server/domain/ledger.ts';
import { hold, post, release, settle, transfer } from '../../../src/server/domain/ledger-writes.ts';
import { unitsOf } from '../../../src/lib/money.ts';

describe('the ledger', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  const world = systemAccountId(SYSTEM_ACCOUNTS.world('BITCOIN'));
  const fees = systemAccountId(SYSTEM_ACCOUNTS.feeIncome());

  const newUser = async () => ensureUserLedgerAccount(database.pool, (await createWalletAccount(database.pool)).accountId);
  const fund = (account: string, amount: bigint, key = `fund:${account}:${amount}:${Math.random()}`) =>
    transfer(database.pool, { key, kind: 'DEPOSIT', from: world, to: account, currency: 'BTC', amount: unitsOf(amount) });
  const balance = async (account: string, currency = 'BTC') => (await balancesOf(database.pool, account)).find((b) => b.currency === currency);

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    ({ database } = await openTestCustody(testDatabase.url));
  });
  afterAll(async () => {
    if (database) expect(await auditFailures(database.pool)).toEqual([]);
    await database?.close();
    await testDatabase?.drop();
  });

  it('moves money with postings that sum to zero, and lets the world go negative', async () => {
    const alice = await newUser();
    await fund(alice, 1_000n);
    expect(await balance(alice)).toEqual({ currency: 'BTC', available: 1_000n, onHold: 0n });
    expect((await balance(world))?.available).toBeLessThanOrEqual(-1_000n);
  });

  it('does a movement once per idempotency key, and refuses the key for another movement', async () => {
    const alice = await newUser();
    const first = await fund(alice, 500n, `once:${alice}`);
    const again = await fund(alice, 500n, `once:${alice}`);
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ entryId: first.entryId, replayed: true });
    expect((await balance(alice))?.available).toBe(500n);
    await expect(fund(alice, 501n, `once:${alice}`)).rejects.toMatchObject({ problem: 'KEY_REUSED' });
  });

  it('refuses to take more than is available, and leaves no trace', async () => {
    const [alice, bob] = [await newUser(), await newUser()];
    await fund(alice, 100n);
    const move = transfer(database.pool, { key: `too-much:${alice}`, kind: 'TRANSFER', from: alice, to: bob, currency: 'BTC', amount: unitsOf(101n) });
    await expect(move).rejects.toBeInstanceOf(LedgerError);
    await expect(move).rejects.toMatchObject({ problem: 'INSUFFICIENT_FUNDS' });
    expect((await balance(alice))?.available).toBe(100n);
    expect(await balance(bob)).toBeUndefined();
    const entries = await database.pool.query(`SELECT 1 FROM ledger_entries WHERE idempotency_key = $1`, [`too-much:${alice}`]);
    expect(entries.rowCount).toBe(0);
    // A currency the user never had is no different.
    await expect(transfer(database.pool, { key: `none:${alice}`, kind: 'T', from: alice, to: bob, currency: 'ETH', amount: unitsOf(1n) })).rejects.toMatchObject({
      problem: 'INSUFFICIENT_FUNDS',
    });
  });

  it('holds, releases and settles held money (a withdrawal: amount to the world, fee to fee income)', async () => {
    const alice = await newUser();
    await fund(alice, 1_000n);
    await hold(database.pool, { key: `hold:${alice}`, kind: 'WITHDRAWAL_HOLD', account: alice, currency: 'BTC', amount: unitsOf(600n) });
    expect(await balance(alice)).toMatchObject({ available: 400n, onHold: 600n });
    await expect(hold(database.pool, { key: `hold2:${alice}`, kind: 'WITHDRAWAL_HOLD', account: alice, currency: 'BTC', amount: unitsOf(401n) })).rejects.toMatchObject({
      problem: 'INSUFFICIENT_FUNDS',
    });
    await release(database.pool, { key: `release:${alice}`, kind: 'WITHDRAWAL_RELEASE', account: alice, currency: 'BTC', amount: unitsOf(100n) });
    expect(await balance(alice)).toMatchObject({ available: 500n, onHold: 500n });
    await settle(database.pool, {
      key: `settle:${alice}`,
      kind: 'WITHDRAWAL_SETTLE',
      account: alice,
      currency: 'BTC',
      to: [
        { account: world, amount: unitsOf(490n) },
        { account: fees, amount: unitsOf(10n) },
      ],
    });
    expect(await balance(alice)).toMatchObject({ available: 500n, onHold: 0n });
    await expect(release(database.pool, { key: `release2:${alice}`, kind: 'WITHDRAWAL_RELEASE', account: alice, currency: 'BTC', amount: unitsOf(1n) })).rejects.toMatchObject({
      problem: 'INSUFFICIENT_FUNDS',
    });
  });

  it('refuses entries that do not balance, before and inside the database', async () => {
    const alice = await newUser();
    await expect(
      post(database.pool, { key: `bad:${alice}`, kind: 'T', postings: [{ account: alice, currency: 'BTC', bucket: 'AVAILABLE', amount: unitsOf(5n) }, { account: world, currency: 'BTC', bucket: 'AVAILABLE', amount: unitsOf(-4n) }] }),
    ).rejects.toMatchObject({ problem: 'UNBALANCED' });
    await expect(
      database.pool.query(`SELECT * FROM ledger_post('raw', 'T', NULL, ARRAY[$1, $2]::uuid[], ARRAY['BTC','BTC'], ARRAY['AVAILABLE','AVAILABLE'], ARRAY[5, -4]::numeric[])`, [alice, world]),
    ).rejects.toMatchObject({ code: 'WL001' });
    await expect(transfer(database.pool, { key: `zero:${alice}`, kind: 'T', from: world, to: alice, currency: 'BTC', amount: unitsOf(0n) })).rejects.toMatchObject({ problem: 'UNBALANCED' });
    await expect(
      transfer(database.pool, { key: `ghost:${alice}`, kind: 'T', from: world, to: '00000000-0000-4000-8000-000000000000', currency: 'BTC', amount: unitsOf(1n) }),
    ).rejects.toMatchObject({ problem: 'UNKNOWN_ACCOUNT' });
  });

  it('never lets a balance go negative under concurrent spending', async () => {
    const alice = await newUser();
    const others = await Promise.all(Array.from({ length: 5 }, () => newUser()));
    await fund(alice, 100n);
    const attempts = Array.from({ length: 60 }, (_, i) =>
      transfer(database.pool, { key: `race:${alice}:${i}`, kind: 'T', from: alice, to: others[i % others.length] ?? alice, currency: 'BTC', amount: unitsOf(3n) }).then(
        () => 'ok' as const,
        (error: unknown) => (error instanceof LedgerError && error.problem === 'INSUFFICIENT_FUNDS' ? ('refused' as const) : Promise.reject(error)),
      ),
    );
    const outcomes = await Promise.all(attempts);
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(33);
    expect((await balance(alice))?.available).toBe(1n);
  });

  it('creates a balance row once when the first credits of a currency arrive together', async () => {
    for (let round = 0; round < 5; round++) {
      const alice = await newUser();
      await Promise.all(Array.from({ length: 30 }, () => fund(alice, 2n)));
      expect((await balance(alice))?.available).toBe(60n);
    }
  });

  it('does not deadlock when money flows both ways at once', async () => {
    const [alice, bob] = [await newUser(), await newUser()];
    await fund(alice, 10_000n);
    await fund(bob, 10_000n);
    await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        transfer(database.pool, { key: `both:${alice}:${i}`, kind: 'T', from: i % 2 ? alice : bob, to: i % 2 ? bob : alice, currency: 'BTC', amount: unitsOf(7n) }),
      ),
    );
    expect((await balance(alice))?.available).toBe(10_000n);
    expect((await balance(bob))?.available).toBe(10_000n);
  });

  it('keeps amounts beyond 64 bits exact (wei)', async () => {
    const alice = await newUser();
    const big = 123_456_789_012_345_678_901_234_567n;
    await transfer(database.pool, { key: `wei:${alice}`, kind: 'DEPOSIT', from: systemAccountId(SYSTEM_ACCOUNTS.world('ETHEREUM')), to: alice, currency: 'ETH', amount: unitsOf(big) });
    expect((await balance(alice, 'ETH'))?.available).toBe(big);
  });

  it('has an audit that catches a balance row that disagrees with its postings', async () => {
    expect(await auditFailures(database.pool)).toEqual([]);
    const alice = await newUser();
    await fund(alice, 10n);
    await database.pool.query(`UPDATE ledger_balances SET available = available + 1 WHERE ledger_account_id = $1`, [alice]);
    const failures = await auditFailures(database.pool);
    expect(failures.map((f) => f.name)).toContain('every balance row equals the sum of its postings');
    await database.pool.query(`UPDATE ledger_balances SET available = available - 1 WHERE ledger_account_id = $1`, [alice]);
    expect(await auditFailures(database.pool)).toEqual([]);
  });

  it('has a sampled audit (ledger:audit --sample) whose posting checks catch the same breaks, and that refuses a sample out of range', async () => {
    const sampled = async (sample: number) => {
      const client = await database.pool.connect();
      try {
        return (await auditLedger(client, undefined, { sample })).filter((r) => !r.ok).map((r) => r.name);
      } finally {
        client.release();
      }
    };
    expect(await sampled(100)).toEqual([]);
    const alice = await newUser();
    await fund(alice, 10n);
    await database.pool.query(`UPDATE ledger_balances SET available = available + 1 WHERE ledger_account_id = $1`, [alice]);
    // A posting without its balance row and one that unbalances its entry (the table has no foreign keys: ledger_post is its writer).
    const entry = await database.pool.query<{ id: string }>(`SELECT id FROM ledger_entries ORDER BY id DESC LIMIT 1`);
    const stray = await database.pool.query<{ id: string }>(
      `INSERT INTO ledger_postings (entry_id, ledger_account_id, currency, bucket, amount) VALUES ($1, $2, 'DOGE', 'AVAILABLE', 5) RETURNING id`,
      [entry.rows[0]?.id, alice],
    );
    const failures = await sampled(100);
    expect(failures).toEqual(
      expect.arrayContaining(['every balance row equals the sum of its postings', 'every entry sums to zero per currency', 'every posting has its entry and its balance row']),
    );
    await database.pool.query(`DELETE FROM ledger_postings WHERE id = $1`, [stray.rows[0]?.id]);
    await database.pool.query(`UPDATE ledger_balances SET available = available - 1 WHERE ledger_account_id = $1`, [alice]);
    expect(await sampled(100)).toEqual([]);
    await expect(sampled(0)).rejects.toThrow(RangeError);
  });
});
