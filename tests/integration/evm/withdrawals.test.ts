import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeFunctionData, parseEther, parseTransaction, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { anvilAccount, mintCall, startAnvil, tokenAbi, type Anvil } from '../../support/anvil.ts';
import { auditFailures, createWalletAccount, quietLog, waitFor } from '../../support/custody.ts';
import { depositAddressOf, deployTestTokens, openEvmCustody, type EvmTokens } from '../../support/evm-custody.ts';
import type { Custody } from '../../../src/server/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { listAssets } from '../../../src/server/domain/assets.ts';
import { confirmDeposits, scanDeposits } from '../../../src/server/domain/deposits.ts';
import { createWithdrawalService, type WithdrawalService } from '../../../src/server/domain/withdrawals/requests.ts';
import { broadcastWithdrawals, confirmWithdrawals, processWithdrawals, signWithdrawals } from '../../../src/server/domain/withdrawals/worker.ts';
import { transferKey } from '../../../src/server/adapters/chains/port.ts';
import { estimateInAsset, withdrawalFee } from '../../../src/server/domain/withdrawals/fees.ts';
import { formatUnits } from '../../../src/lib/amount.ts';
import { fixedRates } from '../../support/prices.ts';
import { unitsOf } from '../../../src/lib/money.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const CONFIRMATIONS = 2;

/**
 * Withdrawals of ETH and ERC-20 tokens from the hot wallet on a live anvil node, through the domain's worker: exact
 * amounts on chain, a reverted token transfer failing the withdrawal, one nonce sequence across worker processes, a
 * worker killed between signing and sending, a stuck transaction replaced by fee, a token's fee following gas.
 */
describe('Ethereum withdrawals on anvil', () => {
  let anvil: Anvil;
  let tokens: EvmTokens;
  let testDatabase: TestDatabase;
  let database: Database;
  let custody: Custody;
  let service: WithdrawalService;
  let hot: Address;
  // Prices are an input here: a token's fee is converted from ETH at these.
  const prices = fixedRates({ ETH: '3200', USDT: '1', USDC: '1' });

  beforeAll(async () => {
    anvil = await startAnvil();
    tokens = await deployTestTokens(anvil);
    for (const token of Object.values(tokens)) await anvil.send({ to: token, data: mintCall(anvilAccount.address, 10_000_000_000n) });
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    ({ database, custody } = await openEvmCustody(testDatabase.url, anvil, tokens, CONFIRMATIONS));
    service = createWithdrawalService({
      pool: database.pool,
      chain: custody.chain,
      rates: prices,
      addresses: custody.addresses,
      catalogue: custody.catalogue,
      settings: { fees: { ETH: '0.001', USDT_ETH: '1', USDC_ETH: '1' }, blockedAddresses: [], feeMarginBps: 2000 },
    });
    hot = (await custody.chain.hotWalletAddress('ETHEREUM')) as Address;
    // The hot wallet's float: ETH for gas and payouts, USDT; no USDC until a test gives it some.
    await anvil.testClient.setBalance({ address: hot, value: parseEther('100') });
    await anvil.send({ to: tokens.USDT_ETH, data: mintCall(hot, 5_000_000_000n) });
  });
  afterEach(async () => {
    expect(await auditFailures(database.pool)).toEqual([]);
  });
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
    anvil?.stop();
  });

  const transfer = (to: Address, amount: bigint) => encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [to, amount] });
  const stranger = () => privateKeyToAccount(generatePrivateKey()).address;
  const balances = async (accountId: string) =>
    Object.fromEntries((await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).filter((a) => a.currency in { ETH: 1, USDT_ETH: 1, USDC_ETH: 1 }).map((a) => [a.currency, { available: a.totalAvailable, onHold: a.onHold }]));

  /** A user credited with real deposits from anvil's account: ETH and each token given. */
  const fundedUser = async (amounts: { ETH?: bigint; USDT_ETH?: bigint; USDC_ETH?: bigint }) => {
    const { accountId } = await createWalletAccount(database.pool);
    const address = await depositAddressOf(custody, database, accountId, 'ETH');
    for (const currency of ['USDT_ETH', 'USDC_ETH'] as const) await depositAddressOf(custody, database, accountId, currency);
    if (amounts.ETH) await anvil.send({ to: address, value: amounts.ETH });
    if (amounts.USDT_ETH) await anvil.send({ to: tokens.USDT_ETH, data: transfer(address, amounts.USDT_ETH) });
    if (amounts.USDC_ETH) await anvil.send({ to: tokens.USDC_ETH, data: transfer(address, amounts.USDC_ETH) });
    await anvil.mine(CONFIRMATIONS);
    await waitFor('deposits credited', async () => {
      await scanDeposits(database.pool, custody.chain, 'ETHEREUM');
      await confirmDeposits(database.pool, custody.chain, quietLog);
      const pending = await database.pool.query(`SELECT 1 FROM chain_deposits WHERE state = 'PENDING' AND to_address = $1`, [address]);
      return pending.rowCount === 0;
    });
    return accountId;
  };
  const withdraw = (accountId: string, currency: string, amount: string, to: Address) => service.create(accountId, { currency, amount, depositAddress: to, idempotencyKey: randomUUID() });
  const row = async (id: string) =>
    (await database.pool.query<{ state: string; raw_tx: string | null; tx_hash: string | null; failure_reason: string | null }>('SELECT state, raw_tx, tx_hash, failure_reason FROM withdrawals WHERE id = $1', [id])).rows[0];
  /** Runs the worker and mines until each withdrawal is COMPLETED or FAILED. */
  const settled = (ids: string[]) =>
    waitFor('withdrawals settled', async () => {
      await processWithdrawals(database.pool, custody.chain, quietLog);
      await anvil.mine(1);
      await confirmWithdrawals(database.pool, custody.chain, quietLog);
      const states = await database.pool.query<{ state: string }>(`SELECT state FROM withdrawals WHERE id = ANY($1::uuid[]) AND state IN ('COMPLETED', 'FAILED')`, [ids]);
      return states.rowCount === ids.length;
    }, 30_000);
  const nonceOf = (raw: string | null | undefined) => parseTransaction(raw as Hex).nonce;

  it('pays an ETH and a USDT withdrawal with EIP-1559 transactions from the hot wallet, the exact amounts arriving', async () => {
    const accountId = await fundedUser({ ETH: parseEther('2'), USDT_ETH: 100_000_000n });
    const [ethTo, usdtTo] = [stranger(), stranger()];
    const eth = await withdraw(accountId, 'ETH', '0.5', ethTo);
    const usdt = await withdraw(accountId, 'USDT_ETH', '10', usdtTo);
    await settled([eth.id, usdt.id]);
    expect((await row(eth.id))?.state).toBe('COMPLETED');
    expect((await row(usdt.id))?.state).toBe('COMPLETED');
    // The user's fee stays with the custody: the recipient gets the amount less it.
    expect(await anvil.publicClient.getBalance({ address: ethTo })).toBe(parseEther('0.499'));
    expect(await anvil.balanceOf(tokens.USDT_ETH, usdtTo)).toBe(9_000_000n);
    const tx = parseTransaction((await row(usdt.id))?.raw_tx as Hex);
    expect(tx).toMatchObject({ type: 'eip1559', chainId: 31337 });
    expect(tx.to?.toLowerCase()).toBe(tokens.USDT_ETH.toLowerCase());
    expect(tx.maxFeePerGas).toBeGreaterThanOrEqual(tx.maxPriorityFeePerGas ?? 0n);
    const onChain = await anvil.publicClient.getTransaction({ hash: (await row(eth.id))?.tx_hash as Hex });
    expect(onChain.from.toLowerCase()).toBe(hot.toLowerCase());
    expect(await balances(accountId)).toMatchObject({ ETH: { available: '1.5', onHold: '0' }, USDT_ETH: { available: '90', onHold: '0' } });
    const fee = await custody.chain.estimateFee({ network: 'ETHEREUM', currency: 'USDT_ETH', toAddress: usdtTo, amount: unitsOf(1n) });
    expect(fee).toMatchObject({ network: 'ETHEREUM', currency: 'ETH' });
    expect(fee.amount).toBe(fee.rate! * (fee.amount / fee.rate!));
  });

  it('fails a token withdrawal whose transfer reverts on chain and gives the hold back; the nonce is spent, not skipped', async () => {
    const accountId = await fundedUser({ USDC_ETH: 20_000_000n });
    // The hot wallet holds 5 USDC: each withdrawal alone can be paid when it is signed, not both.
    await anvil.send({ to: tokens.USDC_ETH, data: mintCall(hot, 5_000_000n) });
    const first = await withdraw(accountId, 'USDC_ETH', '5', stranger());
    const second = await withdraw(accountId, 'USDC_ETH', '5', stranger());
    await signWithdrawals(database.pool, custody.chain, quietLog);
    expect(nonceOf((await row(second.id))?.raw_tx)).toBe(nonceOf((await row(first.id))?.raw_tx)! + 1);
    await settled([first.id, second.id]);
    expect((await row(first.id))?.state).toBe('COMPLETED');
    expect(await row(second.id)).toMatchObject({ state: 'FAILED', failure_reason: expect.stringMatching(/reverted/) });
    const status = (await custody.chain.status('ETHEREUM', [{ txHash: (await row(second.id))?.tx_hash ?? '', outputIndex: 0 }])).get(transferKey({ txHash: (await row(second.id))?.tx_hash ?? '', outputIndex: 0 }));
    expect(status).toMatchObject({ state: 'FAILED', fee: expect.any(BigInt) });
    expect(await balances(accountId)).toMatchObject({ USDC_ETH: { available: '15', onHold: '0' } });
  });

  it('gives twenty withdrawals sent at once by two worker processes twenty consecutive nonces, each paid once', async () => {
    const accountId = await fundedUser({ ETH: parseEther('3') });
    const recipients = Array.from({ length: 20 }, () => stranger());
    const ids: string[] = [];
    for (const to of recipients) ids.push((await withdraw(accountId, 'ETH', '0.011', to)).id);
    const start = await anvil.publicClient.getTransactionCount({ address: hot, blockTag: 'pending' });
    const env = { EVM_DATABASE_URL: testDatabase.url, EVM_RPC_URL: anvil.url, EVM_TOKENS: JSON.stringify(tokens), EVM_MODE: 'work' };
    const workers = [0, 1].map(
      () =>
        new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, ['tests/support/evm-worker.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
          child.on('exit', resolve);
        }),
    );
    expect(await Promise.all(workers)).toEqual([0, 0]);
    await settled(ids);
    const raws = await database.pool.query<{ raw_tx: string; state: string }>('SELECT raw_tx, state FROM withdrawals WHERE id = ANY($1::uuid[])', [ids]);
    expect(raws.rows.map((r) => r.state)).toEqual(Array(20).fill('COMPLETED'));
    expect(raws.rows.map((r) => nonceOf(r.raw_tx)).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 20 }, (_, i) => start + i));
    for (const to of recipients) expect(await anvil.publicClient.getBalance({ address: to })).toBe(parseEther('0.01'));
    expect(await anvil.publicClient.getTransactionCount({ address: hot })).toBe(start + 20);
  });

  const hangingWorker = (mode: 'sign-then-hang' | 'send-then-hang') =>
    new Promise<ReturnType<typeof spawn>>((resolve, reject) => {
      const env = { EVM_DATABASE_URL: testDatabase.url, EVM_RPC_URL: anvil.url, EVM_TOKENS: JSON.stringify(tokens), EVM_MODE: mode };
      const child = spawn(process.execPath, ['tests/support/evm-worker.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
      child.stdout.on('data', (chunk: Buffer) => {
        if (/signed|sent/.test(chunk.toString())) resolve(child);
      });
      child.on('exit', (code) => reject(new Error(`the worker exited with ${code}`)));
    });

  it('sends a withdrawal once when its worker is killed -9 after signing, before or after sending', async () => {
    const accountId = await fundedUser({ ETH: parseEther('1'), USDT_ETH: 50_000_000n });
    const [ethTo, usdtTo] = [stranger(), stranger()];
    const before = await anvil.publicClient.getTransactionCount({ address: hot });

    // Killed after signing, before sending: the next worker sends the saved transaction, once.
    const eth = await withdraw(accountId, 'ETH', '0.2', ethTo);
    const signer = await hangingWorker('sign-then-hang');
    signer.kill('SIGKILL');
    const signedHash = (await row(eth.id))?.tx_hash;
    expect((await row(eth.id))?.state).toBe('SIGNED');
    // Signing again (a worker unsure whether it signed) gives the same bytes and nonce.
    const again = await custody.chain.signWithdrawal({ reference: eth.id, network: 'ETHEREUM', currency: 'ETH', toAddress: ethTo, amount: unitsOf(parseEther('0.199')) });
    expect(again.txHash).toBe(signedHash);
    // Its nonce is taken: the signer asks this before it re-checks a cold sweep (domain/signing.ts).
    expect(await custody.chain.signedBefore?.('ETHEREUM', eth.id)).toBe(true);
    expect(await custody.chain.signedBefore?.('ETHEREUM', randomUUID())).toBe(false);

    // Killed after sending, before the database knew: the next worker finds it by its hash and does not send again.
    const usdt = await withdraw(accountId, 'USDT_ETH', '5', usdtTo);
    const sender = await hangingWorker('send-then-hang');
    sender.kill('SIGKILL');
    expect((await row(usdt.id))?.state).toBe('SIGNED');

    await broadcastWithdrawals(database.pool, custody.chain, quietLog);
    await settled([eth.id, usdt.id]);
    expect((await row(eth.id))?.tx_hash).toBe(signedHash);
    expect(await anvil.publicClient.getBalance({ address: ethTo })).toBe(parseEther('0.199'));
    expect(await anvil.balanceOf(tokens.USDT_ETH, usdtTo)).toBe(4_000_000n);
    expect(await anvil.publicClient.getTransactionCount({ address: hot })).toBe(before + 2);
  });

  it('hands a transaction the node forgot back to it while its nonce is open, instead of failing a withdrawal that could still be mined', async () => {
    const accountId = await fundedUser({ ETH: parseEther('1') });
    const to = stranger();
    const w = await withdraw(accountId, 'ETH', '0.1', to);
    await anvil.testClient.setAutomine(false);
    try {
      await signWithdrawals(database.pool, custody.chain, quietLog);
      await broadcastWithdrawals(database.pool, custody.chain, quietLog);
      const hash = (await row(w.id))?.tx_hash as Hex;
      await anvil.testClient.dropTransaction({ hash });
      await expect(anvil.publicClient.getTransaction({ hash })).rejects.toThrow();
      const ref = { txHash: hash, outputIndex: 0 };
      expect((await custody.chain.status('ETHEREUM', [ref])).get(transferKey(ref))).toEqual({ state: 'SEEN', blockHeight: null, confirmations: 0 });
      expect((await anvil.publicClient.getTransaction({ hash })).blockNumber).toBeNull();
      await anvil.mine(1);
    } finally {
      await anvil.testClient.setAutomine(true);
    }
    await settled([w.id]);
    expect((await row(w.id))?.state).toBe('COMPLETED');
    expect(await anvil.publicClient.getBalance({ address: to })).toBe(parseEther('0.099'));
  });

  it('has the worker replace a withdrawal unmined after REPLACE_AFTER_BLOCKS: same nonce, higher caps, mined once, its real fee booked', async () => {
    const accountId = await fundedUser({ ETH: parseEther('1') });
    const to = stranger();
    const w = await withdraw(accountId, 'ETH', '0.2', to);
    const nonceBefore = await anvil.publicClient.getTransactionCount({ address: hot });
    await anvil.testClient.setAutomine(false);
    try {
      await signWithdrawals(database.pool, custody.chain, quietLog);
      await broadcastWithdrawals(database.pool, custody.chain, quietLog);
      const first = await row(w.id);
      expect(first?.state).toBe('BROADCAST');
      // Twelve blocks too small for any transfer (REPLACE_AFTER_BLOCKS' default): the worker replaces it.
      await anvil.testClient.setBlockGasLimit({ gasLimit: 20_000n });
      await anvil.mine(12);
      await anvil.testClient.setBlockGasLimit({ gasLimit: 30_000_000n });
      await confirmWithdrawals(database.pool, custody.chain, quietLog);
      const replaced = await database.pool.query<{ tx_hash: string; raw_tx: string; replaced_tx_hashes: string[] }>('SELECT tx_hash, raw_tx, replaced_tx_hashes FROM withdrawals WHERE id = $1', [w.id]);
      const now = replaced.rows[0];
      expect(now?.replaced_tx_hashes).toEqual([first?.tx_hash]);
      expect(now?.tx_hash).not.toBe(first?.tx_hash);
      const [a, b] = [parseTransaction(first?.raw_tx as Hex), parseTransaction(now?.raw_tx as Hex)];
      expect(b.nonce).toBe(a.nonce);
      expect(b.maxFeePerGas! * 10n).toBeGreaterThanOrEqual(a.maxFeePerGas! * 11n);
      await anvil.mine(1);
    } finally {
      await anvil.testClient.setAutomine(true);
    }
    await settled([w.id]);
    const done = await database.pool.query<{ state: string; tx_hash: string; network_fee: string }>('SELECT state, tx_hash, network_fee::text FROM withdrawals WHERE id = $1', [w.id]);
    const receipt = await anvil.publicClient.getTransactionReceipt({ hash: done.rows[0]?.tx_hash as Hex });
    expect(done.rows[0]).toMatchObject({ state: 'COMPLETED', network_fee: (receipt.gasUsed * receipt.effectiveGasPrice).toString() });
    expect(await anvil.publicClient.getBalance({ address: to })).toBe(parseEther('0.199'));
    expect(await anvil.publicClient.getTransactionCount({ address: hot })).toBe(nonceBefore + 1);
  });

  it('replaces a transaction stuck below the base fee with the same nonce and a higher fee, mined once', async () => {
    const accountId = await fundedUser({ ETH: parseEther('1') });
    const to = stranger();
    const w = await withdraw(accountId, 'ETH', '0.3', to);
    await anvil.testClient.setAutomine(false);
    try {
      await signWithdrawals(database.pool, custody.chain, quietLog);
      await broadcastWithdrawals(database.pool, custody.chain, quietLog);
      const stuck = await row(w.id);
      expect(stuck?.state).toBe('BROADCAST');
      // Blocks too small for any transfer go by: the transaction waits in the mempool.
      await anvil.testClient.setBlockGasLimit({ gasLimit: 20_000n });
      await anvil.mine(3);
      const ref = { txHash: stuck?.tx_hash ?? '', outputIndex: 0 };
      expect((await custody.chain.status('ETHEREUM', [ref])).get(transferKey(ref))).toEqual({ state: 'SEEN', blockHeight: null, confirmations: 0 });

      await anvil.testClient.setBlockGasLimit({ gasLimit: 30_000_000n });
      const order = { reference: w.id, network: 'ETHEREUM' as const, currency: 'ETH', toAddress: to, amount: unitsOf(parseEther('0.299')) };
      const signed = { rawTx: stuck?.raw_tx ?? '', txHash: stuck?.tx_hash ?? '', fromAddress: hot };
      const fee = await custody.chain.estimateFee({ network: 'ETHEREUM', currency: 'ETH', toAddress: to, amount: unitsOf(order.amount) });
      const replacement = await custody.chain.replaceByFee({ order, signed, fee: { network: 'ETHEREUM', currency: 'ETH', amount: unitsOf(0n), rate: parseTransaction(signed.rawTx as Hex).maxFeePerGas } }, fee);
      expect(replacement.txHash).not.toBe(signed.txHash);
      const [a, b] = [parseTransaction(signed.rawTx as Hex), parseTransaction(replacement.rawTx as Hex)];
      expect(b.nonce).toBe(a.nonce);
      expect(b.maxFeePerGas! * 10n).toBeGreaterThanOrEqual(a.maxFeePerGas! * 11n);
      expect(b.maxPriorityFeePerGas! * 10n).toBeGreaterThanOrEqual(a.maxPriorityFeePerGas! * 11n);
      // Idempotent: the same replacement again is the same transaction, and sending it twice is fine.
      expect((await custody.chain.replaceByFee({ order, signed, fee: { network: 'ETHEREUM', currency: 'ETH', amount: unitsOf(0n), rate: a.maxFeePerGas } }, fee)).txHash).toBe(replacement.txHash);
      await custody.chain.broadcast('ETHEREUM', replacement.rawTx);
      await custody.chain.broadcast('ETHEREUM', replacement.rawTx);
      await anvil.mine(1);
      const replaced = { txHash: replacement.txHash, outputIndex: 0 };
      expect((await custody.chain.status('ETHEREUM', [replaced])).get(transferKey(replaced))).toMatchObject({ state: 'SEEN', confirmations: 1, fee: expect.any(BigInt) });
      expect((await custody.chain.status('ETHEREUM', [ref])).get(transferKey(ref))).toEqual({ state: 'DROPPED' });
      await anvil.mine(3);
      expect(await anvil.publicClient.getBalance({ address: to })).toBe(parseEther('0.299'));
    } finally {
      await anvil.testClient.setAutomine(true);
    }
  });
  it("charges a USDT withdrawal what its gas costs at a high base fee, above the 5 USDT floor, as the preliminary fee quoted it", async () => {
    const accountId = await fundedUser({ USDT_ETH: 200_000_000n });
    const to = stranger();
    const usdt = custody.catalogue.coins.find((coin) => coin.currency === 'USDT_ETH');
    if (!usdt) throw new Error('USDT_ETH is not in the catalogue');
    const gasPriced = createWithdrawalService({
      pool: database.pool,
      chain: custody.chain,
      rates: prices,
      addresses: custody.addresses,
      catalogue: custody.catalogue,
      settings: { fees: { ETH: '0.001', USDT_ETH: '5', USDC_ETH: '5' }, blockedAddresses: [], feeMarginBps: 2000 },
    });
    const floorOnly = await gasPriced.preliminaryFee(accountId, { currency: 'USDT_ETH', amount: '100', depositAddress: to });
    // At anvil's base fee of about a gwei a token transfer costs cents: the floor is the fee.
    expect(floorOnly.fee).toBe('5');
    await anvil.testClient.setNextBlockBaseFeePerGas({ baseFeePerGas: 50_000_000_000n });
    await anvil.mine(1);
    try {
      // The estimate of a few seconds ago is cached per recipient: another one is asked anew.
      const other = stranger();
      const estimate = await custody.chain.estimateFee({ network: 'ETHEREUM', currency: 'USDT_ETH', toAddress: other, amount: unitsOf(100_000_000n) });
      const expected = withdrawalFee({ floor: 5_000_000n, estimateInAsset: estimateInAsset(estimate, usdt, await prices.prices()), marginBps: 2000, coin: usdt });
      expect(expected).toBeGreaterThan(5_000_000n);
      const quoted = await gasPriced.preliminaryFee(accountId, { currency: 'USDT_ETH', amount: '100', depositAddress: other });
      expect(quoted).toMatchObject({ fee: formatUnits(expected, 6), feeQuoteId: expect.any(String), expiresAt: expect.any(String) });
      const w = await gasPriced.create(accountId, { currency: 'USDT_ETH', amount: '100', depositAddress: other, idempotencyKey: randomUUID(), feeQuoteId: quoted.feeQuoteId ?? undefined });
      expect(w).toMatchObject({ fee: quoted.fee, receiveAmount: formatUnits(100_000_000n - expected, 6) });
      await settled([w.id]);
      expect((await row(w.id))?.state).toBe('COMPLETED');
      expect(await anvil.balanceOf(tokens.USDT_ETH, other)).toBe(100_000_000n - expected);
      expect(await balances(accountId)).toMatchObject({ USDT_ETH: { available: '100', onHold: '0' } });
    } finally {
      // Later cases price ETH withdrawals by gas too: back to anvil's usual base fee.
      await anvil.testClient.setNextBlockBaseFeePerGas({ baseFeePerGas: 1_000_000_000n });
      await anvil.mine(1);
    }
  });
});
