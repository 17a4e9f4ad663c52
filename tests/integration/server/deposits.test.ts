import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { countedPool, createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { auditFailures, createWalletAccount, openTestCustody, quietLog, waitFor } from '../../support/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import type { TestCustody } from '../../support/custody.ts';
import { addAssets, listAssets } from '../../../src/server/domain/assets.ts';
import { confirmDeposits, creditDeposit, recordTransfers, scanDeposits } from '../../../src/server/domain/deposits.ts';
import { listTransactions } from '../../../src/server/domain/history.ts';
import { createWorker } from '../../../src/server/jobs/worker.ts';

describe('deposits from the devnet', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let custody: TestCustody;

  const newAccountWith = async (currencies: string[]) => {
    const { accountId } = await createWalletAccount(database.pool);
    await addAssets(database.pool, accountId, currencies, custody.catalogue, custody);
    const assets = await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard);
    const address = (currency: string) => assets.find((a) => a.currency === currency)?.depositAddress ?? '';
    return { accountId, address };
  };
  const asset = async (accountId: string, currency: string) => (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === currency);
  const history = (accountId: string) => listTransactions(database.pool, accountId, { sort: 'DESC', pageSize: 100, pageNumber: 1 }, custody.catalogue);
  const depositRows = (accountId: string) => database.pool.query('SELECT state FROM chain_deposits WHERE wallet_account_id = $1', [accountId]);

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    ({ database, custody } = await openTestCustody(testDatabase.url));
  });
  afterAll(async () => {
    if (database) expect(await auditFailures(database.pool)).toEqual([]);
    await database?.close();
    await testDatabase?.drop();
  });

  it('shows a deposit as pending at once and credits it after its confirmations, with hash and explorer link', async () => {
    const { accountId, address: addressOf } = await newAccountWith(['BTC']);
    const address = addressOf('BTC');
    expect(address).toMatch(/^bc1q/);
    const receipt = await custody.chain.send({ currency: 'BTC', toAddress: address, amount: '0.01' });
    expect(await scanDeposits(database.pool, custody.chain, 'BITCOIN')).toBe(1);
    const [pending] = await history(accountId);
    expect(pending).toMatchObject({ state: 'IN_PROGRESS', direction: 'DEPOSIT', transactionType: 'DEPOSIT', amount: '0.01', hash: receipt.txHash, to: address });
    expect(pending?.explorerUrl).toBe(`http://wallet.test/sandbox/devnet/tx/${receipt.txHash}`);
    expect((await asset(accountId, 'BTC'))?.totalAvailable).toBe('0');

    await waitFor('confirmations', async () => (await confirmDeposits(database.pool, custody.chain, quietLog)) === 1);
    expect((await asset(accountId, 'BTC'))?.totalAvailable).toBe('0.01');
    expect((await history(accountId))[0]).toMatchObject({ state: 'COMPLETED', amount: '0.01' });
  });

  it('credits nobody for a deposit address moved to another account: its MAC names the first (the coins stay in custody)', async () => {
    const victim = await newAccountWith(['BTC']);
    const address = victim.address('BTC');
    const { accountId: thief } = await createWalletAccount(database.pool);
    await database.pool.query('UPDATE deposit_addresses SET wallet_account_id = $2 WHERE address = $1', [address, thief]);
    await custody.chain.send({ currency: 'BTC', toAddress: address, amount: '0.02' });
    expect(await scanDeposits(database.pool, custody.chain, 'BITCOIN', { guard: custody.addressGuard })).toBe(0);
    expect((await depositRows(thief)).rowCount).toBe(0);
    expect((await depositRows(victim.accountId)).rowCount).toBe(0);

    // Put back, the address pays its own account again (the 0.02 too, if the scan still sees it unmined).
    await database.pool.query('UPDATE deposit_addresses SET wallet_account_id = $2 WHERE address = $1', [address, victim.accountId]);
    await custody.chain.send({ currency: 'BTC', toAddress: address, amount: '0.03' });
    expect(await scanDeposits(database.pool, custody.chain, 'BITCOIN', { guard: custody.addressGuard })).toBeGreaterThanOrEqual(1);
    expect((await history(victim.accountId)).map((item) => item.amount)).toContain('0.03');
    expect((await depositRows(thief)).rowCount).toBe(0);
  });

  it('opens no transaction for a scan that found nothing new (an idle network, every poll)', async () => {
    await scanDeposits(database.pool, custody.chain, 'BITCOIN');
    const cursor = (await database.pool.query<{ position: string }>(`SELECT position FROM chain_cursors WHERE network = 'BITCOIN'`)).rows[0]?.position ?? null;
    // The chain answers that nothing came after the cursor; the pool counts the connections checked out for a transaction.
    const quiet = { ...custody.chain, scan: async () => ({ transfers: [], cursor }) };
    const { pool: counted, counts } = countedPool(database.pool);
    expect(await scanDeposits(counted, quiet, 'BITCOIN')).toBe(0);
    expect(counts.connections).toBe(0);
    // A cursor that moved is saved, in a transaction.
    expect(await scanDeposits(counted, { ...quiet, scan: async () => ({ transfers: [], cursor: `${cursor ?? ''}-moved` }) }, 'BITCOIN')).toBe(0);
    expect(counts.connections).toBe(1);
    expect((await database.pool.query<{ position: string }>(`SELECT position FROM chain_cursors WHERE network = 'BITCOIN'`)).rows[0]?.position).toBe(`${cursor ?? ''}-moved`);
    // Back where the chain is, for the cases after this one.
    if (cursor === null) await database.pool.query(`DELETE FROM chain_cursors WHERE network = 'BITCOIN'`);
    else await database.pool.query(`UPDATE chain_cursors SET position = $1 WHERE network = 'BITCOIN'`, [cursor]);
  });

  it('records and credits a deposit seen twice only once', async () => {
    const { accountId, address: addressOf } = await newAccountWith(['BTC']);
    const address = addressOf('BTC');
    await custody.chain.send({ currency: 'BTC', toAddress: address, amount: '0.5' });
    await scanDeposits(database.pool, custody.chain, 'BITCOIN');
    // The scanner reads the head again, and a reset cursor makes it read everything again.
    await scanDeposits(database.pool, custody.chain, 'BITCOIN');
    await database.pool.query(`DELETE FROM chain_cursors WHERE network = 'BITCOIN'`);
    await scanDeposits(database.pool, custody.chain, 'BITCOIN');
    const { transfers } = await custody.chain.scan('BITCOIN', null, 10_000);
    const mine = transfers.filter((t) => t.toAddress === address);
    const client = await database.pool.connect();
    try {
      expect(await recordTransfers(client, custody.chain, 'BITCOIN', [...mine, ...mine])).toBe(0);
    } finally {
      client.release();
    }
    expect((await depositRows(accountId)).rowCount).toBe(1);
    // Once confirmed, ten credits race from two pools: exactly one wins.
    const [deposit] = (await database.pool.query<{ id: string; tx_hash: string }>('SELECT id, tx_hash FROM chain_deposits WHERE wallet_account_id = $1', [accountId])).rows;
    await waitFor('confirmations', async () => {
      const status = (await custody.chain.status('BITCOIN', [{ txHash: deposit?.tx_hash ?? '', outputIndex: 0 }])).values().next().value;
      return status?.state === 'SEEN' && status.confirmations >= 2;
    });
    const other = new pg.Pool({ connectionString: testDatabase.url, max: 5 });
    try {
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => creditDeposit(i % 2 ? other : database.pool, deposit?.id ?? '', 2, null)));
      expect(results.filter(Boolean)).toHaveLength(1);
    } finally {
      await other.end();
    }
    for (let i = 0; i < 3; i++) await confirmDeposits(database.pool, custody.chain, quietLog);
    expect((await asset(accountId, 'BTC'))?.totalAvailable).toBe('0.5');
    expect(await history(accountId)).toHaveLength(1);
  });

  it('credits each deposit once when two workers (two connection pools) run at once', async () => {
    const accounts = await Promise.all(Array.from({ length: 4 }, () => newAccountWith(['BTC', 'ETH', 'USDT_TRX'])));
    for (const { address } of accounts) {
      for (let i = 0; i < 3; i++) {
        await custody.chain.send({ currency: 'BTC', toAddress: address('BTC'), amount: '0.001' });
        await custody.chain.send({ currency: 'USDT_ETH', toAddress: address('ETH'), amount: '10.5' });
        await custody.chain.send({ currency: 'USDT_TRX', toAddress: address('USDT_TRX'), amount: '7' });
      }
    }
    const pools = [new pg.Pool({ connectionString: testDatabase.url, max: 5 }), new pg.Pool({ connectionString: testDatabase.url, max: 5 })];
    const workers = pools.map((pool) => createWorker({ pool, log: quietLog, handlers: custody.jobs, pollMs: 20 }));
    try {
      // Both claim the same job rows and race on the same deposits, round after round.
      await waitFor(
        'all 36 deposits credited',
        async () => {
          await Promise.all([...workers.map((w) => w.runOnce()), ...pools.map((pool) => confirmDeposits(pool, custody.chain, quietLog))]);
          const credited = await database.pool.query(`SELECT count(*)::int AS n FROM chain_deposits WHERE state = 'CREDITED' AND wallet_account_id = ANY($1::uuid[])`, [
            accounts.map((a) => a.accountId),
          ]);
          return credited.rows[0]?.n === 36;
        },
        30_000,
      );
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
    for (const { accountId } of accounts) {
      expect((await asset(accountId, 'BTC'))?.totalAvailable).toBe('0.003');
      expect((await asset(accountId, 'USDT_ETH'))?.totalAvailable).toBe('31.5');
      expect((await asset(accountId, 'USDT_TRX'))?.totalAvailable).toBe('21');
      const entries = await database.pool.query(`SELECT count(*)::int AS n FROM ledger_postings WHERE ledger_account_id = $1`, [accountId]);
      expect(entries.rows[0]?.n).toBe(9);
    }
  });

  it('brings a token that arrives on an address of the account into its assets', async () => {
    const { accountId, address } = await newAccountWith(['ETH']);
    await custody.chain.send({ currency: 'USDC_ETH', toAddress: address('ETH'), amount: '25' });
    await scanDeposits(database.pool, custody.chain, 'ETHEREUM');
    const usdc = await asset(accountId, 'USDC_ETH');
    expect(usdc).toMatchObject({ isToken: true, totalAvailable: '0', depositAddress: address('ETH') });
  });

  it('ignores transfers to addresses that are not ours', async () => {
    const before = await database.pool.query('SELECT count(*)::int AS n FROM chain_deposits');
    // BIP173's example address: valid, and derived from no seed of ours.
    await custody.chain.send({ currency: 'BTC', toAddress: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', amount: '1' });
    for (const network of custody.chain.networks) await scanDeposits(database.pool, custody.chain, network);
    const after = await database.pool.query('SELECT count(*)::int AS n FROM chain_deposits');
    expect(after.rows[0]?.n).toBe(before.rows[0]?.n);
  });

  it('refuses devnet sends with a bad currency, address or amount', async () => {
    await expect(custody.chain.send({ currency: 'XYZ', toAddress: 'x', amount: '1' })).rejects.toMatchObject({ problem: 'UNKNOWN_CURRENCY' });
    await expect(custody.chain.send({ currency: 'BTC', toAddress: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyv', amount: '1' })).rejects.toMatchObject({
      problem: 'BAD_ADDRESS',
    });
    await expect(custody.chain.send({ currency: 'BTC', toAddress: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', amount: '0' })).rejects.toMatchObject({
      problem: 'BAD_AMOUNT',
    });
    await expect(custody.chain.send({ currency: 'USDT_TRX', toAddress: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', amount: '1.1234567' })).rejects.toMatchObject({
      problem: 'BAD_AMOUNT',
    });
  });
});
