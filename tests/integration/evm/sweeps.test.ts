import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { encodeFunctionData, parseEther, type Address, type Hex } from 'viem';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { anvilAccount, mintCall, startAnvil, tokenAbi, type Anvil } from '../../support/anvil.ts';
import { auditFailures, createWalletAccount, quietLog, waitFor } from '../../support/custody.ts';
import { depositAddressOf, deployTestTokens, openEvmCustody, type EvmTokens } from '../../support/evm-custody.ts';
import type { Custody } from '../../../src/server/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { confirmDeposits, scanDeposits } from '../../../src/server/domain/deposits.ts';
import { balancesOf, SYSTEM_ACCOUNTS, systemAccountId } from '../../../src/server/domain/ledger.ts';
import { collectDeposits, SWEPT_DEPOSITS_LEFT } from '../../../src/server/domain/sweeps.ts';
import { custodyBalances } from '../../../src/server/domain/custody-balances.ts';
import { fundGasFromChain } from '../../../src/server/domain/gas-float.ts';

const CONFIRMATIONS = 2;

/**
 * Sweeps on a live anvil node: credited deposits move from the users' deposit addresses into the hot wallet, a token
 * after the hot wallet sent exactly the gas its transfer needs; the network fees are the custodian's, booked once.
 */
describe('Ethereum sweeps on anvil', () => {
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
    // The operator's gas float, sent and recorded (custody fund-gas).
    await anvil.testClient.setBalance({ address: hot, value: parseEther('10') });
    await fundGasFromChain(database.pool, custody.chain, { network: 'ETHEREUM', amount: '10' });
  });
  afterEach(async () => {
    expect(await auditFailures(database.pool)).toEqual([]);
  });
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
    anvil?.stop();
  });

  const credited = async (address: Address, send: () => Promise<unknown>) => {
    await send();
    await anvil.mine(CONFIRMATIONS);
    await waitFor('deposit credited', async () => {
      await scanDeposits(database.pool, custody.chain, 'ETHEREUM');
      await confirmDeposits(database.pool, custody.chain, quietLog);
      return (await database.pool.query(`SELECT 1 FROM chain_deposits WHERE state = 'PENDING' AND to_address = $1`, [address])).rowCount === 0;
    });
  };
  const sweepsOf = async (address: string) =>
    (
      await database.pool.query<{ id: string; currency: string; state: string; amount: string; tx_hash: string | null; fee: string | null; top_ups: number; top_up_tx_hash: string | null; top_up_fees: string }>(
        'SELECT id, currency, state, amount::text, tx_hash, fee::text, top_ups, top_up_tx_hash, top_up_fees::text FROM sweeps WHERE address = $1 ORDER BY created_at',
        [address],
      )
    ).rows;
  /** Runs the sweep job and mines a block until every sweep of `address` is closed. */
  const swept = (address: string) =>
    waitFor(
      'sweeps closed',
      async () => {
        await collectDeposits(database.pool, custody.chain, quietLog);
        await anvil.mine(1);
        const all = await sweepsOf(address);
        return all.length > 0 && all.every((s) => ['CONFIRMED', 'SKIPPED', 'FAILED'].includes(s.state)) && all;
      },
      30_000,
    );
  const receiptFee = async (hash: string) => {
    const receipt = await anvil.publicClient.getTransactionReceipt({ hash: hash as Hex });
    return receipt.gasUsed * receipt.effectiveGasPrice;
  };
  const gasFloat = async () => (await balancesOf(database.pool, systemAccountId(SYSTEM_ACCOUNTS.gasFloat('ETHEREUM')))).find((b) => b.currency === 'ETH')?.available ?? 0n;

  it('tops a token deposit address up with exactly the gas of its transfer, sweeps the token into the hot wallet and books both fees', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    const address = await depositAddressOf(custody, database, accountId, 'USDT_ETH');
    await credited(address, () => anvil.send({ to: tokens.USDT_ETH, data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [address, 25_000_000n] }) }));
    const floatBefore = await gasFloat();
    const hotEthBefore = await anvil.publicClient.getBalance({ address: hot });

    const [sweep] = await swept(address);
    expect(sweep).toMatchObject({ currency: 'USDT_ETH', state: 'CONFIRMED', amount: '25000000', top_ups: 1 });
    expect(await anvil.balanceOf(tokens.USDT_ETH, address)).toBe(0n);
    expect(await anvil.balanceOf(tokens.USDT_ETH, hot)).toBe(25_000_000n);

    // The top-up was exactly the sweep's gas limit at its fee cap; what the block did not charge is all that is left.
    const topUp = await anvil.publicClient.getTransaction({ hash: sweep?.top_up_tx_hash as Hex });
    const sweepTx = await anvil.publicClient.getTransaction({ hash: sweep?.tx_hash as Hex });
    expect(topUp.value).toBe(sweepTx.gas * (sweepTx.maxFeePerGas ?? 0n));
    const left = await anvil.publicClient.getBalance({ address });
    expect(left).toBe(topUp.value - (await receiptFee(sweep?.tx_hash ?? '')));
    expect(left).toBeLessThan(topUp.value / 3n);

    const [sweepFee, topUpFee] = [await receiptFee(sweep?.tx_hash ?? ''), await receiptFee(sweep?.top_up_tx_hash ?? '')];
    expect(sweep?.fee).toBe(sweepFee.toString());
    expect(sweep?.top_up_fees).toBe(topUpFee.toString());
    expect(await gasFloat()).toBe(floatBefore - sweepFee - topUpFee);
    expect(await anvil.publicClient.getBalance({ address: hot })).toBe(hotEthBefore - topUp.value - topUpFee);

    // The top-up is the custody's own ETH, not a deposit of the user's; nothing more to sweep.
    await anvil.mine(CONFIRMATIONS);
    await scanDeposits(database.pool, custody.chain, 'ETHEREUM');
    expect((await database.pool.query('SELECT currency FROM chain_deposits WHERE to_address = $1', [address])).rows).toEqual([{ currency: 'USDT_ETH' }]);
    await collectDeposits(database.pool, custody.chain, quietLog);
    expect(await sweepsOf(address)).toHaveLength(1);
  });

  it('sweeps native ETH above the threshold, leaving only the unused part of the fee cap, and skips a dust deposit', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    const address = await depositAddressOf(custody, database, accountId, 'ETH');
    await credited(address, () => anvil.send({ to: address, value: parseEther('2') }));
    const hotBefore = await anvil.publicClient.getBalance({ address: hot });
    const [sweep] = await swept(address);
    expect(sweep).toMatchObject({ currency: 'ETH', state: 'CONFIRMED', top_ups: 0 });
    const tx = await anvil.publicClient.getTransaction({ hash: sweep?.tx_hash as Hex });
    const fee = await receiptFee(sweep?.tx_hash ?? '');
    expect(await anvil.publicClient.getBalance({ address: hot })).toBe(hotBefore + tx.value);
    expect(tx.value + tx.gas * (tx.maxFeePerGas ?? 0n)).toBe(parseEther('2'));
    expect(await anvil.publicClient.getBalance({ address })).toBe(parseEther('2') - tx.value - fee);

    const small = await depositAddressOf(custody, database, (await createWalletAccount(database.pool)).accountId, 'ETH');
    await credited(small, () => anvil.send({ to: small, value: 1000n }));
    expect(await swept(small)).toEqual([expect.objectContaining({ state: 'SKIPPED', fee: null })]);
    expect(await anvil.publicClient.getBalance({ address: small })).toBe(1000n);
  });

  it('runs as the worker job of networks that sweep, and shows what the chain holds', async () => {
    expect(custody.jobs.map((j) => j.name)).toContain('chain.sweeps:ETHEREUM');
    const holdings = await custody.chain.holdings('ETHEREUM');
    const addresses = (await database.pool.query<{ address: Address }>(`SELECT address FROM deposit_addresses WHERE network = 'ETHEREUM'`)).rows.map((r) => r.address);
    let eth = await anvil.publicClient.getBalance({ address: hot });
    let usdt = await anvil.balanceOf(tokens.USDT_ETH, hot);
    for (const address of addresses) {
      eth += await anvil.publicClient.getBalance({ address });
      usdt += await anvil.balanceOf(tokens.USDT_ETH, address);
    }
    expect(holdings).toEqual({ ETH: eth, USDT_ETH: usdt, USDC_ETH: 0n });

    // npm run custody -- balances: the tokens and ETH match the ledger to the unit, ETH's position being the deposits
    // and the recorded gas float less every fee the sweeps and top-ups paid.
    const rows = await custodyBalances(database.pool, custody.chain);
    const row = (currency: string) => rows.find((r) => r.network === 'ETHEREUM' && r.currency === currency);
    expect(row('USDT_ETH')).toMatchObject({ holdings: usdt, position: 25_000_000n, matches: true });
    const ethRow = row('ETH');
    expect(ethRow).toMatchObject({ holdings: eth, difference: 0n, matches: true });
  });

  it('fails, with one ERROR, an ETH sweep whose deposit a reorganisation took away, instead of leaving it SENT with a transaction the node does not know', async () => {
    const lines: { level: number; msg: string }[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (chunk.toString().split('\n').filter((l) => l.trim()).forEach((l) => lines.push(JSON.parse(l) as { level: number; msg: string })), done()) }));
    const { accountId } = await createWalletAccount(database.pool);
    const address = await depositAddressOf(custody, database, accountId, 'ETH');
    const before = await anvil.publicClient.getBlockNumber({ cacheTime: 0 });
    const snapshot = await anvil.testClient.snapshot();
    await credited(address, () => anvil.send({ to: address, value: parseEther('1') }));
    await collectDeposits(database.pool, custody.chain, log);
    const [sent] = await sweepsOf(address);
    expect(sent).toMatchObject({ currency: 'ETH', state: 'SENT' });

    // The chain goes back to before the deposit and grows longer without it (or the sweep).
    const tip = await anvil.publicClient.getBlockNumber({ cacheTime: 0 });
    await anvil.testClient.revert({ id: snapshot });
    await anvil.mine(Number(tip - before) + 1);
    for (let i = 0; i < 3; i++) {
      await scanDeposits(database.pool, custody.chain, 'ETHEREUM', { log });
      await confirmDeposits(database.pool, custody.chain, log);
      await collectDeposits(database.pool, custody.chain, log);
    }
    expect((await database.pool.query('SELECT state FROM chain_deposits WHERE to_address = $1', [address])).rows).toEqual([{ state: 'REVERSED' }]);
    expect(await sweepsOf(address)).toEqual([expect.objectContaining({ id: sent?.id, state: 'FAILED', fee: null })]);
    expect((await database.pool.query('SELECT reason FROM sweeps WHERE id = $1', [sent?.id])).rows[0]).toEqual({ reason: SWEPT_DEPOSITS_LEFT });
    expect(lines.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual(['sweep left the chain with the deposits it collected: failed, its other deposits will be swept again']);
    expect(await anvil.publicClient.getBalance({ address })).toBe(0n);
    expect(await balancesOf(database.pool, accountId)).toEqual([expect.objectContaining({ currency: 'ETH', available: 0n, onHold: 0n })]);
    // `custody balances` as before the deposit: the ledger's position (the gas float on it) and the chain agree.
    const eth = (await custodyBalances(database.pool, custody.chain)).find((r) => r.network === 'ETHEREUM' && r.currency === 'ETH');
    expect((eth?.holdings ?? 0n) - (eth?.position ?? 0n) - (eth?.uncredited ?? 0n)).toBe(0n);
  });

  it('takes back the fee of a confirmed ETH sweep a reorganisation took with its deposit, and fails it with one ERROR', async () => {
    const lines: { level: number; msg: string }[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (chunk.toString().split('\n').filter((l) => l.trim()).forEach((l) => lines.push(JSON.parse(l) as { level: number; msg: string })), done()) }));
    const { accountId } = await createWalletAccount(database.pool);
    const address = await depositAddressOf(custody, database, accountId, 'ETH');
    const feesBefore = await gasFloat();
    const before = await anvil.publicClient.getBlockNumber({ cacheTime: 0 });
    const snapshot = await anvil.testClient.snapshot();
    await credited(address, () => anvil.send({ to: address, value: parseEther('1') }));
    const [confirmed] = await swept(address);
    expect(confirmed).toMatchObject({ state: 'CONFIRMED', fee: expect.any(String) });
    expect(await gasFloat()).toBe(feesBefore - BigInt(confirmed?.fee ?? '0'));

    const tip = await anvil.publicClient.getBlockNumber({ cacheTime: 0 });
    await anvil.testClient.revert({ id: snapshot });
    await anvil.mine(Number(tip - before) + 1);
    for (let i = 0; i < 3; i++) {
      await scanDeposits(database.pool, custody.chain, 'ETHEREUM', { log });
      await confirmDeposits(database.pool, custody.chain, log);
      await collectDeposits(database.pool, custody.chain, log);
    }
    expect((await database.pool.query('SELECT state FROM chain_deposits WHERE to_address = $1', [address])).rows).toEqual([{ state: 'REVERSED' }]);
    expect(await sweepsOf(address)).toEqual([expect.objectContaining({ id: confirmed?.id, state: 'FAILED', fee: null })]);
    expect((await database.pool.query('SELECT reopened FROM sweeps WHERE id = $1', [confirmed?.id])).rows[0]).toEqual({ reopened: 1 });
    expect(await gasFloat()).toBe(feesBefore);
    expect(lines.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual(['sweep left the chain with the deposits it collected: failed, its other deposits will be swept again']);
    const eth = (await custodyBalances(database.pool, custody.chain)).find((r) => r.network === 'ETHEREUM' && r.currency === 'ETH');
    expect((eth?.holdings ?? 0n) - (eth?.position ?? 0n) - (eth?.uncredited ?? 0n)).toBe(0n);
  });

  it('sends again a gas top-up a reorganisation took from under a token sweep, books its fee anew once mined again, and the sweep follows', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    const address = await depositAddressOf(custody, database, accountId, 'USDT_ETH');
    await credited(address, () => anvil.send({ to: tokens.USDT_ETH, data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [address, 7_000_000n] }) }));
    const feesBefore = await gasFloat();
    const before = await anvil.publicClient.getBlockNumber({ cacheTime: 0 });
    const snapshot = await anvil.testClient.snapshot();
    await collectDeposits(database.pool, custody.chain, quietLog);
    await collectDeposits(database.pool, custody.chain, quietLog);
    const [sent] = await sweepsOf(address);
    expect(sent).toMatchObject({ state: 'SENT', top_ups: 1 });

    // Top-up and sweep are replaced by a longer chain without them; the token deposit, older, stays.
    const tip = await anvil.publicClient.getBlockNumber({ cacheTime: 0 });
    await anvil.testClient.revert({ id: snapshot });
    await anvil.mine(Number(tip - before) + 1);
    await waitFor(
      'the sweep confirmed again',
      async () => {
        await scanDeposits(database.pool, custody.chain, 'ETHEREUM');
        await confirmDeposits(database.pool, custody.chain, quietLog);
        await collectDeposits(database.pool, custody.chain, quietLog);
        await anvil.mine(1);
        return (await sweepsOf(address))[0]?.state === 'CONFIRMED';
      },
      30_000,
    );
    const [done] = await sweepsOf(address);
    expect(done).toMatchObject({ id: sent?.id, tx_hash: sent?.tx_hash, top_up_tx_hash: sent?.top_up_tx_hash, top_ups: 2 });
    const [sweepFee, topUpFee] = [await receiptFee(done?.tx_hash ?? ''), await receiptFee(done?.top_up_tx_hash ?? '')];
    expect(done).toMatchObject({ fee: sweepFee.toString(), top_up_fees: topUpFee.toString() });
    expect(await gasFloat()).toBe(feesBefore - sweepFee - topUpFee);
    expect(await anvil.balanceOf(tokens.USDT_ETH, address)).toBe(0n);
    expect((await database.pool.query('SELECT state FROM chain_deposits WHERE to_address = $1', [address])).rows).toEqual([{ state: 'CREDITED' }]);
  });
});
