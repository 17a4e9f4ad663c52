import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { encodeFunctionData, parseEther, type Address } from 'viem';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { anvilAccount, mintCall, startAnvil, tokenAbi, type Anvil } from '../../support/anvil.ts';
import { auditFailures, createWalletAccount, quietLog, waitFor } from '../../support/custody.ts';
import { depositAddressOf, deployTestTokens, openEvmCustody, type EvmTokens } from '../../support/evm-custody.ts';
import { fixedRates } from '../../support/prices.ts';
import type { Custody } from '../../../src/server/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { custodyBalances } from '../../../src/server/domain/custody-balances.ts';
import { confirmDeposits, scanDeposits } from '../../../src/server/domain/deposits.ts';
import { fundGasFromChain } from '../../../src/server/domain/gas-float.ts';
import { feeCoverage } from '../../../src/server/domain/market/exposure.ts';
import { balancesOf, SYSTEM_ACCOUNTS, systemAccountId } from '../../../src/server/domain/ledger.ts';
import { collectDeposits } from '../../../src/server/domain/sweeps.ts';
import { createWithdrawalService } from '../../../src/server/domain/withdrawals/requests.ts';
import { confirmWithdrawals, processWithdrawals } from '../../../src/server/domain/withdrawals/worker.ts';

const CONFIRMATIONS = 2;

/**
 * Issue 29 item 5 on a live anvil node: the hot wallet's ETH for gas is on the ledger (GAS_FLOAT:ETHEREUM, funded by
 * `custody fund-gas`, every fee the custodian pays booked against it), so `custody balances` is ok for ETH and the
 * tokens after deposits, sweeps with a gas top-up and withdrawals, and shows coins nobody recorded as a difference.
 */
describe('the Ethereum gas float on anvil', () => {
  let anvil: Anvil;
  let tokens: EvmTokens;
  let testDatabase: TestDatabase;
  let database: Database;
  let custody: Custody;
  let hot: Address;

  beforeAll(async () => {
    anvil = await startAnvil();
    tokens = await deployTestTokens(anvil);
    await anvil.send({ to: tokens.USDT_ETH, data: mintCall(anvilAccount.address, 10_000_000_000n) });
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    ({ database, custody } = await openEvmCustody(testDatabase.url, anvil, tokens, CONFIRMATIONS));
    hot = (await custody.chain.hotWalletAddress('ETHEREUM')) as Address;
  });
  afterEach(async () => {
    expect(await auditFailures(database.pool)).toEqual([]);
  });
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
    anvil?.stop();
  });

  const rows = async () => Object.fromEntries((await custodyBalances(database.pool, custody.chain)).filter((r) => r.network === 'ETHEREUM').map((r) => [r.currency, r]));
  const gasFloat = async () => (await balancesOf(database.pool, systemAccountId(SYSTEM_ACCOUNTS.gasFloat('ETHEREUM')))).find((b) => b.currency === 'ETH')?.available ?? 0n;
  const networkFees = async () => (await balancesOf(database.pool, systemAccountId(SYSTEM_ACCOUNTS.networkFees('ETHEREUM')))).find((b) => b.currency === 'ETH')?.available ?? 0n;
  const fee = async (hash: string | null) => {
    const receipt = await anvil.publicClient.getTransactionReceipt({ hash: hash as Address });
    return receipt.gasUsed * receipt.effectiveGasPrice;
  };

  it('funds the float only with coins the chain shows and the ledger does not count, once per key', async () => {
    await expect(fundGasFromChain(database.pool, custody.chain, { network: 'ETHEREUM', amount: '1' })).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    await expect(fundGasFromChain(database.pool, custody.chain, { network: 'LITECOIN', amount: '1' })).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(fundGasFromChain(database.pool, custody.chain, { network: 'ETH', amount: '0.1234567890123456789' })).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(fundGasFromChain(database.pool, custody.chain, { network: 'ETH', amount: '-1' })).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(fundGasFromChain(database.pool, custody.chain, { network: 'ETH', amount: '1e18' })).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(fundGasFromChain(database.pool, custody.chain, { network: 'DOGS', amount: '1' })).rejects.toMatchObject({ code: 'UNKNOWN_CURRENCY' });
    // The operator sends 10 ETH to the hot wallet: until it is recorded, the balances show it as a difference.
    await anvil.testClient.setBalance({ address: hot, value: parseEther('10') });
    expect((await rows()).ETH).toMatchObject({ difference: parseEther('10'), matches: false });
    await expect(fundGasFromChain(database.pool, custody.chain, { network: 'ETHEREUM', amount: '10.000000000000000001' })).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    expect(await fundGasFromChain(database.pool, custody.chain, { network: 'eth', amount: '10', key: '0xfunding-1' })).toMatchObject({ network: 'ETHEREUM', units: parseEther('10'), replayed: false });
    expect(await fundGasFromChain(database.pool, custody.chain, { network: 'ETHEREUM', amount: '10', key: '0xfunding-1' })).toMatchObject({ replayed: true });
    expect(await gasFloat()).toBe(parseEther('10'));
    expect((await rows()).ETH).toMatchObject({ gasFloat: parseEther('10'), difference: 0n, matches: true });
  });

  it('is ok for ETH and USDT after deposits, sweeps with a top-up and withdrawals; every fee is the float\'s', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    const ethAddress = await depositAddressOf(custody, database, accountId, 'ETH');
    const usdtAddress = await depositAddressOf(custody, database, accountId, 'USDT_ETH');
    await anvil.send({ to: ethAddress, value: parseEther('3') });
    await anvil.send({ to: tokens.USDT_ETH, data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [usdtAddress, 50_000_000n] }) });
    // Pending deposits are in the node's holdings, not the ledger's position: no funding may take them.
    await scanDeposits(database.pool, custody.chain, 'ETHEREUM');
    expect((await rows()).ETH).toMatchObject({ pending: parseEther('3') });
    await expect(fundGasFromChain(database.pool, custody.chain, { network: 'ETHEREUM', amount: '1' })).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    await anvil.mine(CONFIRMATIONS);
    await waitFor('deposits credited', async () => {
      await scanDeposits(database.pool, custody.chain, 'ETHEREUM');
      await confirmDeposits(database.pool, custody.chain, quietLog);
      return (await database.pool.query(`SELECT 1 FROM chain_deposits WHERE state = 'PENDING'`)).rowCount === 0;
    });

    // Sweeps: ETH whole, USDT after the hot wallet topped its address up with gas.
    const feesBefore = await networkFees();
    const sweeps = await waitFor('swept', async () => {
      await collectDeposits(database.pool, custody.chain, quietLog);
      await anvil.mine(1);
      const all = (await database.pool.query<{ currency: string; state: string; tx_hash: string | null; top_up_tx_hash: string | null; top_ups: number }>('SELECT currency, state, tx_hash, top_up_tx_hash, top_ups FROM sweeps ORDER BY currency')).rows;
      return all.length === 2 && all.every((s) => s.state === 'CONFIRMED') && all;
    }, 30_000);
    expect(sweeps.map((s) => [s.currency, s.top_ups])).toEqual([['ETH', 0], ['USDT_ETH', 1]]);
    let spent = 0n;
    for (const s of sweeps) spent += (await fee(s.tx_hash)) + (s.top_up_tx_hash ? await fee(s.top_up_tx_hash) : 0n);
    expect(await gasFloat()).toBe(parseEther('10') - spent);

    // Withdrawals from the hot wallet: a token's gas and ETH's are the float's too.
    const service = createWithdrawalService({
      pool: database.pool,
      chain: custody.chain,
      rates: fixedRates({ ETH: '3200', USDT: '1', USDC: '1' }),
      addresses: custody.addresses,
      catalogue: custody.catalogue,
      settings: { fees: { ETH: '0.001', USDT_ETH: '1', USDC_ETH: '1' }, blockedAddresses: [], feeMarginBps: 2000 },
    });
    const outside = '0x000000000000000000000000000000000000dEaD';
    const ids = [
      (await service.create(accountId, { currency: 'USDT_ETH', amount: '20', depositAddress: outside, idempotencyKey: randomUUID() })).id,
      (await service.create(accountId, { currency: 'ETH', amount: '1', depositAddress: outside, idempotencyKey: randomUUID() })).id,
    ];
    const done = await waitFor('withdrawals completed', async () => {
      await processWithdrawals(database.pool, custody.chain, quietLog);
      await anvil.mine(1);
      await confirmWithdrawals(database.pool, custody.chain, quietLog);
      const rows = await database.pool.query<{ state: string; tx_hash: string; network_fee: string | null }>(`SELECT state, tx_hash, network_fee::text FROM withdrawals WHERE id = ANY($1::uuid[]) AND state = 'COMPLETED'`, [ids]);
      return rows.rowCount === 2 && rows.rows;
    }, 30_000);
    for (const w of done) {
      expect(w.network_fee).toBe((await fee(w.tx_hash)).toString());
      spent += await fee(w.tx_hash);
    }
    expect(await gasFloat()).toBe(parseEther('10') - spent);
    // Nothing goes to NETWORK_FEES on a network with a float.
    expect(await networkFees()).toBe(feesBefore);
    // What the networks charged, as `custody exposure` shows it: every fee, none of the float's fundings.
    expect((await feeCoverage(database.pool)).find((r) => r.currency === 'ETH')?.cost).toBe(spent);

    const after = await rows();
    expect(after.ETH).toMatchObject({ difference: 0n, matches: true, inFlight: 0, gasFloat: parseEther('10') - spent });
    // 50 USDT deposited, 19 paid out (the 1 USDT fee stays with the custodian).
    expect(after.USDT_ETH).toMatchObject({ difference: 0n, matches: true, position: 31_000_000n });
    expect(after.USDC_ETH).toMatchObject({ difference: 0n, matches: true });
  });

  it('shows ETH sent to the hot wallet unrecorded as a difference of exactly that, until it is recorded', async () => {
    const before = await anvil.publicClient.getBalance({ address: hot });
    await anvil.send({ to: hot, value: parseEther('0.5') });
    expect((await rows()).ETH).toMatchObject({ difference: parseEther('0.5'), matches: false });
    expect(await anvil.publicClient.getBalance({ address: hot })).toBe(before + parseEther('0.5'));
    // Coins leaving the custody unbooked are a difference too, below zero.
    await anvil.testClient.setBalance({ address: hot, value: before - parseEther('0.25') });
    expect((await rows()).ETH).toMatchObject({ difference: -parseEther('0.25'), matches: false });
    await anvil.testClient.setBalance({ address: hot, value: before + parseEther('0.5') });
    await fundGasFromChain(database.pool, custody.chain, { network: 'ETHEREUM', amount: '0.5', key: 'top-up-2' });
    expect((await rows()).ETH).toMatchObject({ difference: 0n, matches: true });
  });
});
