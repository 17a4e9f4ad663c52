import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createWalletAccount, openTestCustody } from '../../support/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { oncePerKey, requestHash } from '../../../src/server/domain/orders/idempotency.ts';
import { recordHistory } from '../../../src/server/domain/orders/history.ts';
import { moveOrder } from '../../../src/server/domain/orders/state.ts';
import { NOW } from '../../../src/server/domain/orders/sql-set.ts';

/** The orders module against PostgreSQL: the idempotency rule (same, 422, 409) and the guarded state move. */
describe('the orders module', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  const table = { table: 'scratch_orders', history: 'wallet_transaction_id' } as const;
  type Row = { id: string; requestHash: string | null };

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    ({ database } = await openTestCustody(testDatabase.url));
    await database.pool.query(`CREATE TABLE scratch_orders (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), account uuid NOT NULL, key text NOT NULL, request_hash text,
      state text NOT NULL, wallet_transaction_id uuid, closed_at timestamptz, UNIQUE (account, key))`);
  });
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  const order = (account: string, key: string, input: { amount: bigint }, gate?: Promise<void>, waitMs?: number) => {
    const request = { scope: 'scratch', account, key, hash: requestHash(input), waitMs };
    return oncePerKey(database.pool, request, {
      find: async (db) => (await db.query<Row>('SELECT id, request_hash AS "requestHash" FROM scratch_orders WHERE account = $1 AND key = $2', [account, key])).rows[0],
      sameAsLegacy: () => input.amount === 1n,
      replay: (row) => row.id,
      create: async (db) => {
        await gate;
        const inserted = await db.query<{ id: string }>(`INSERT INTO scratch_orders (account, key, request_hash, state) VALUES ($1, $2, $3, 'PENDING') RETURNING id`, [account, key, request.hash]);
        return inserted.rows[0]?.id ?? '';
      },
    });
  };

  it('gives the first answer to the same key and input, and refuses another input under the key with 422', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    const key = randomUUID();
    const first = await order(accountId, key, { amount: 5n });
    expect(await order(accountId, key, { amount: 5n })).toBe(first);
    await expect(order(accountId, key, { amount: 6n })).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect((await database.pool.query('SELECT 1 FROM scratch_orders WHERE account = $1', [accountId])).rowCount).toBe(1);
  });

  it('makes a request that comes while the first with its key runs wait for it and answer as it did; one still waiting past the limit is 409', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    const key = randomUUID();
    let open = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const first = order(accountId, key, { amount: 5n }, gate);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(order(accountId, key, { amount: 5n }, undefined, 200)).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE' });
    const waiting = order(accountId, key, { amount: 5n });
    const other = order(accountId, key, { amount: 6n });
    await new Promise((resolve) => setTimeout(resolve, 100));
    open();
    const id = await first;
    expect(await waiting).toBe(id);
    await expect(other).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    // The wait's lock_timeout was the waiting transaction's own: the pool's sessions keep the server's default.
    expect((await database.pool.query<{ t: string }>("SELECT current_setting('lock_timeout') AS t")).rows[0]?.t).toBe('0');
    expect((await database.pool.query('SELECT 1 FROM scratch_orders WHERE account = $1', [accountId])).rowCount).toBe(1);
  });

  it("keeps a burst of one account's orders to one pooled connection: another account's order is not held up behind its lock", async () => {
    const small = new pg.Pool({ connectionString: testDatabase.url, max: 3, connectionTimeoutMillis: 3000 });
    const holder = new pg.Client({ connectionString: testDatabase.url });
    await holder.connect();
    const lockingOrder = (account: string) => {
      const request = { scope: 'scratch', account, key: randomUUID(), hash: requestHash({ amount: 1n }) };
      return oncePerKey(small, request, {
        find: async () => undefined,
        replay: () => '',
        create: async (db) => {
          // What a withdrawal does first: the account's row, locked.
          await db.query('SELECT 1 FROM wallet_accounts WHERE id = $1 FOR UPDATE', [account]);
          return (await db.query<{ id: string }>(`INSERT INTO scratch_orders (account, key, request_hash, state) VALUES ($1, $2, $3, 'PENDING') RETURNING id`, [account, request.key, request.hash])).rows[0]?.id ?? '';
        },
      });
    };
    try {
      const busy = (await createWalletAccount(database.pool)).accountId;
      const other = (await createWalletAccount(database.pool)).accountId;
      // Another process is in the middle of an order of the busy account.
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM wallet_accounts WHERE id = $1 FOR UPDATE', [busy]);
      const burst = Promise.all(Array.from({ length: 10 }, () => lockingOrder(busy)));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await lockingOrder(other)).toMatch(/^[0-9a-f-]{36}$/);
      await holder.query('COMMIT');
      expect(new Set(await burst).size).toBe(10);
    } finally {
      await holder.end();
      await small.end();
    }
  });

  it('compares a row stored before request hashes the old way', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    const key = randomUUID();
    const inserted = await database.pool.query<{ id: string }>(`INSERT INTO scratch_orders (account, key, state) VALUES ($1, $2, 'PENDING') RETURNING id`, [accountId, key]);
    expect(await order(accountId, key, { amount: 1n })).toBe(inserted.rows[0]?.id);
    await expect(order(accountId, key, { amount: 2n })).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
  });

  it('moves a state only from the expected one, the history item with it; a second mover finds it moved', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    const id = await order(accountId, randomUUID(), { amount: 5n });
    const shown = await recordHistory(database.pool, { walletAccountId: accountId, transactionType: 'WITHDRAWAL', direction: 'WITHDRAWAL', state: 'IN_PROGRESS', currency: 'BTC', amount: '5', reference: `scratch:${id}` });
    await database.pool.query('UPDATE scratch_orders SET wallet_transaction_id = $2 WHERE id = $1', [id, shown]);

    expect(await moveOrder(database.pool, table, id, { from: 'PENDING', to: 'DONE', set: { closed_at: NOW }, history: { state: 'FAILED', set: { failure_reason: 'why' } } })).toBe(true);
    const row = await database.pool.query<{ state: string; closed: boolean }>('SELECT state, closed_at IS NOT NULL AS closed FROM scratch_orders WHERE id = $1', [id]);
    expect(row.rows[0]).toEqual({ state: 'DONE', closed: true });
    const item = await database.pool.query<{ state: string; failure_reason: string }>('SELECT state, failure_reason FROM wallet_transactions WHERE id = $1', [shown]);
    expect(item.rows[0]).toEqual({ state: 'FAILED', failure_reason: 'why' });

    await expect(moveOrder(database.pool, table, id, { from: 'PENDING', to: 'OTHER' })).rejects.toMatchObject({ code: 'ORDER_STATE_CHANGED' });
    expect(await moveOrder(database.pool, table, id, { from: ['PENDING', 'SIGNED'], to: 'OTHER', ifMoved: 'skip' })).toBe(false);
    expect((await database.pool.query<{ state: string }>('SELECT state FROM scratch_orders WHERE id = $1', [id])).rows[0]?.state).toBe('DONE');
  });
});
