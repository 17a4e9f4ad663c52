import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mnemonicToSeedSync } from '@scure/bip39';
import { utils } from 'tronweb';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { auditFailures, createWalletAccount, quietLog, TEST_MNEMONIC, TEST_SECRETS_KEY, waitFor } from '../../support/custody.ts';
import { fixedRates } from '../../support/prices.ts';
import { startTronStandIn, type TronStandIn } from '../../support/tron-node.ts';
import { chainsConfig } from '../../../src/server/config-chains.ts';
import { openCustody, type Custody } from '../../../src/server/custody.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import { deriveAddress } from '../../../src/server/domain/addresses.ts';
import { addAssets, listAssets } from '../../../src/server/domain/assets.ts';
import { custodyBalances } from '../../../src/server/domain/custody-balances.ts';
import { confirmDeposits, scanDeposits } from '../../../src/server/domain/deposits.ts';
import { fundGasFromChain } from '../../../src/server/domain/gas-float.ts';
import { balancesOf, SYSTEM_ACCOUNTS, systemAccountId } from '../../../src/server/domain/ledger.ts';
import { collectDeposits } from '../../../src/server/domain/sweeps.ts';
import { createWithdrawalService } from '../../../src/server/domain/withdrawals/requests.ts';
import { confirmWithdrawals, processWithdrawals } from '../../../src/server/domain/withdrawals/worker.ts';

const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');
const USDT = utils.crypto.pkToAddress('0e'.repeat(32));
const TRX = (units: number) => BigInt(units) * 1_000_000n;

/**
 * Issue 29 item 5 on TRON, whose node is the checking stand-in (tests/support/tron-node.ts; no TRON node runs here):
 * the hot wallet's TRX for fees, energy top-ups and account activations is the gas float on the ledger, every fee the
 * stand-in burnt booked against it, so `custody balances` is ok for TRX and USDT_TRX after deposits, sweeps with a
 * top-up and withdrawals, and shows TRX nobody recorded as a difference.
 */
describe('the TRON gas float', () => {
  let node: TronStandIn;
  let testDatabase: TestDatabase;
  let database: Database;
  let custody: Custody;
  let hot: string;

  beforeAll(async () => {
    node = await startTronStandIn({ tokens: { USDT_TRX: USDT } });
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: await mkdtemp(join(tmpdir(), 'wallet-test-data-')) }, quietLog);
    const chains = chainsConfig({ DEVNET_BLOCK_MS: 100, CONFIRMATIONS: 'TRON:2', TRON_API_URL: node.url, TRON_API_KEY: node.apiKey, TRON_TOKENS: { USDT_TRX: USDT } }, 'devnet');
    custody = await openCustody({ production: false, publicUrl: 'http://wallet.test', dataDir: await mkdtemp(join(tmpdir(), 'wallet-test-data-')), walletSeed: TEST_MNEMONIC, secretsKey: TEST_SECRETS_KEY, chains, workerPollMs: 50, ratesWalkMs: 0 }, quietLog, database.pool);
    hot = await custody.chain.hotWalletAddress('TRON');
  });
  afterEach(async () => {
    expect(await auditFailures(database.pool)).toEqual([]);
  });
  afterAll(async () => {
    expect(node?.problems).toEqual([]);
    await custody?.close();
    await database?.close();
    await testDatabase?.drop();
    await node?.close();
  });

  const rows = async () => Object.fromEntries((await custodyBalances(database.pool, custody.chain)).filter((r) => r.network === 'TRON').map((r) => [r.currency, r]));
  const gasFloat = async () => (await balancesOf(database.pool, systemAccountId(SYSTEM_ACCOUNTS.gasFloat('TRON')))).find((b) => b.currency === 'TRX')?.available ?? 0n;
  const burnt = async () => {
    const fees = await database.pool.query<{ total: string }>(
      `SELECT ((SELECT coalesce(sum(coalesce(fee, 0) + top_up_fees), 0) FROM sweeps WHERE network = 'TRON')
             + (SELECT coalesce(sum(network_fee), 0) FROM withdrawals WHERE network = 'TRON'))::text AS total`,
    );
    return BigInt(fees.rows[0]?.total ?? '0');
  };

  it('is ok for TRX and USDT_TRX once the float is recorded, after deposits, sweeps with a top-up and withdrawals', async () => {
    await node.send({ to: hot, amount: TRX(500) });
    node.mine();
    expect((await rows()).TRX).toMatchObject({ difference: TRX(500), matches: false });
    expect(await fundGasFromChain(database.pool, custody.chain, { network: 'TRX', amount: '500', key: 'trx-funding-1' })).toMatchObject({ network: 'TRON', units: TRX(500), replayed: false });
    expect((await rows()).TRX).toMatchObject({ gasFloat: TRX(500), difference: 0n, matches: true });

    const { accountId } = await createWalletAccount(database.pool);
    await addAssets(database.pool, accountId, ['TRX', 'USDT_TRX'], custody.catalogue, custody);
    const assets = await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard);
    const addressOf = (currency: string) => assets.find((a) => a.currency === currency)?.depositAddress ?? '';
    await node.send({ to: addressOf('TRX'), amount: TRX(60) });
    await node.send({ to: addressOf('USDT_TRX'), amount: 40_000_000n, token: USDT });
    node.mine();
    await waitFor('deposits credited', async () => {
      node.mine();
      await scanDeposits(database.pool, custody.chain, 'TRON');
      await confirmDeposits(database.pool, custody.chain, quietLog);
      return (await database.pool.query(`SELECT 1 FROM chain_deposits WHERE state = 'CREDITED'`)).rowCount === 2;
    });

    const sweeps = await waitFor('swept', async () => {
      await collectDeposits(database.pool, custody.chain, quietLog);
      node.mine();
      const all = (await database.pool.query<{ currency: string; state: string; top_ups: number }>('SELECT currency, state, top_ups FROM sweeps ORDER BY currency')).rows;
      return all.length === 2 && all.every((s) => s.state === 'CONFIRMED') && all;
    }, 30_000);
    expect(sweeps.map((s) => [s.currency, s.top_ups])).toEqual([['TRX', 0], ['USDT_TRX', 1]]);
    expect(await gasFloat()).toBe(TRX(500) - (await burnt()));
    expect(await burnt()).toBeGreaterThan(0n);

    const service = createWithdrawalService({
      pool: database.pool,
      chain: custody.chain,
      rates: fixedRates({ TRX: '0.25', USDT: '1' }),
      addresses: custody.addresses,
      catalogue: custody.catalogue,
      settings: { fees: { TRX: '1', USDT_TRX: '1' }, blockedAddresses: [], feeMarginBps: 2000 },
    });
    // To accounts that do not exist yet: the TRX one pays the activation, the token one the energy of a new holder.
    const ids = [
      (await service.create(accountId, { currency: 'USDT_TRX', amount: '15', depositAddress: await deriveAddress(OUTSIDE_SEED, 'TRON', 20, 'mainnet'), idempotencyKey: randomUUID() })).id,
      (await service.create(accountId, { currency: 'TRX', amount: '20', depositAddress: await deriveAddress(OUTSIDE_SEED, 'TRON', 21, 'mainnet'), idempotencyKey: randomUUID() })).id,
    ];
    await waitFor('withdrawals completed', async () => {
      await processWithdrawals(database.pool, custody.chain, quietLog);
      node.mine();
      await confirmWithdrawals(database.pool, custody.chain, quietLog);
      return (await database.pool.query(`SELECT 1 FROM withdrawals WHERE id = ANY($1::uuid[]) AND state = 'COMPLETED'`, [ids])).rowCount === 2;
    }, 30_000);
    expect(await gasFloat()).toBe(TRX(500) - (await burnt()));
    const after = await rows();
    expect(after.TRX).toMatchObject({ difference: 0n, matches: true, inFlight: 0 });
    expect(after.USDT_TRX).toMatchObject({ difference: 0n, matches: true });
  });

  it('shows TRX sent to the hot wallet unrecorded as a difference of exactly that, until it is recorded', async () => {
    await node.send({ to: hot, amount: TRX(7) });
    node.mine();
    expect((await rows()).TRX).toMatchObject({ difference: TRX(7), matches: false });
    await expect(fundGasFromChain(database.pool, custody.chain, { network: 'TRON', amount: '7.000001' })).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    await fundGasFromChain(database.pool, custody.chain, { network: 'TRON', amount: '7', key: 'trx-funding-2' });
    expect((await rows()).TRX).toMatchObject({ difference: 0n, matches: true });
  });
});
