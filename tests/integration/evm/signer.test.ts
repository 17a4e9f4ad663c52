import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeFunctionData, parseEther, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { anvilAccount, mintCall, startAnvil, tokenAbi, type Anvil } from '../../support/anvil.ts';
import { auditFailures, createWalletAccount, quietLog, TEST_MNEMONIC, TEST_SECRETS_KEY, waitFor } from '../../support/custody.ts';
import { depositAddressOf, deployTestTokens, type EvmTokens } from '../../support/evm-custody.ts';
import { fixedRates } from '../../support/prices.ts';
import { loadConfig } from '../../../src/server/config.ts';
import { openCustody, type Custody } from '../../../src/server/custody.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import { confirmDeposits, scanDeposits } from '../../../src/server/domain/deposits.ts';
import { fundGasFromChain } from '../../../src/server/domain/gas-float.ts';
import { collectDeposits } from '../../../src/server/domain/sweeps.ts';
import { createWithdrawalService } from '../../../src/server/domain/withdrawals/requests.ts';
import { confirmWithdrawals, processWithdrawals } from '../../../src/server/domain/withdrawals/worker.ts';
import { connectSigner, type Signer } from '../../../src/server/signer/remote.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CONFIRMATIONS = 2;
/** HOT_WALLET_MAX of ETHEREUM here: 50 ETH. */
const CEILING = parseEther('50');

/**
 * Issue 31 on anvil: the signer is a process of its own (`npm run signer`) with the seed; the worker's custody holds
 * public keys only. A withdrawal, a token deposit's sweep with its gas top-up, and the sweep above HOT_WALLET_MAX to
 * the cold address are each signed by the signer process and land on chain.
 */
describe('the signer process on anvil', { timeout: 300_000 }, () => {
  const token = randomBytes(32).toString('hex');
  let anvil: Anvil;
  let tokens: EvmTokens;
  let testDatabase: TestDatabase;
  let database: Database;
  let remote: Custody;
  let signer: Signer;
  let signerProcess: ChildProcess | undefined;
  let hot: Address;
  let cold: Address;
  let signerOutput = '';

  const stranger = () => privateKeyToAccount(generatePrivateKey()).address;

  beforeAll(async () => {
    anvil = await startAnvil();
    tokens = await deployTestTokens(anvil);
    await anvil.send({ to: tokens.USDT_ETH, data: mintCall(anvilAccount.address, 10_000_000_000n) });
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: await mkdtemp(join(tmpdir(), 'evm-signer-db-')) }, quietLog);
    cold = stranger();
    const dir = await mkdtemp(join(tmpdir(), 'evm-signer-'));
    const socket = join(dir, 'signer.sock');
    const env: Record<string, string> = {
      DATABASE_URL: testDatabase.url,
      SECRETS_KEY: TEST_SECRETS_KEY,
      RATES_WALK_MS: '0',
      CHAIN_ENV: 'regtest',
      ETHEREUM_RPC_URL: anvil.url,
      ETHEREUM_TOKENS: JSON.stringify(tokens),
      CONFIRMATIONS: `ETHEREUM:${CONFIRMATIONS}`,
      HOT_WALLET_MAX: 'ETHEREUM:50',
      COLD_WALLET: `ETHEREUM:${cold}`,
      SIGNER: 'external',
      SIGNER_SOCKET: socket,
      SIGNER_TOKEN: token,
    };
    signer = connectSigner({ path: socket, token });
    const child = spawn(process.execPath, ['src/server/signer/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env, WALLET_SEED: TEST_MNEMONIC, DATA_DIR: dir, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr?.on('data', (chunk: Buffer) => (signerOutput += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => (signerOutput += chunk.toString()));
    signerProcess = child;
    await waitFor('the signer answers', async () => {
      if (child.exitCode !== null) throw new Error(`the signer exited: ${signerOutput}`);
      return signer.call({ op: 'hello' }).then(
        () => true,
        () => false,
      );
    }, 120_000);
    // The worker as jobs/main.ts composes it: no seed, the signer's channel.
    const config = loadConfig({ ...env, DATA_DIR: await mkdtemp(join(tmpdir(), 'evm-signer-worker-')), WORKERS: 'off' }, '0.0.0-test');
    expect(config.walletSeed).toBeUndefined();
    remote = await openCustody(config, quietLog, database.pool, { owner: false, signing: 'signer' });
    expect(remote.keys.signing).toBe(false);
    hot = (await remote.chain.hotWalletAddress('ETHEREUM')) as Address;
    // The operator's float: 100 ETH in the hot wallet, 10 of it recorded as the gas float (custody fund-gas).
    await anvil.testClient.setBalance({ address: hot, value: parseEther('100') });
    await fundGasFromChain(database.pool, remote.chain, { network: 'ETHEREUM', amount: '10' });
  }, 300_000);
  afterEach(async () => {
    expect(await auditFailures(database.pool)).toEqual([]);
  });
  afterAll(async () => {
    if (signerProcess && signerProcess.exitCode === null) signerProcess.kill('SIGKILL');
    await remote?.close();
    await database?.close();
    await testDatabase?.drop();
    anvil?.stop();
  });

  const job = (name: string) => {
    const found = remote.jobs.find((j) => j.name === name);
    if (!found) throw new Error(`the worker has no job ${name}`);
    return found;
  };
  /** A wallet account credited with a real deposit of `currency` from anvil's account, to a fresh deposit address. */
  const funded = async (currency: 'ETH' | 'USDT_ETH', amount: bigint) => {
    const { accountId } = await createWalletAccount(database.pool);
    const address = await depositAddressOf(remote, database, accountId, currency);
    if (currency === 'ETH') await anvil.send({ to: address, value: amount });
    else await anvil.send({ to: tokens.USDT_ETH, data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [address, amount] }) });
    await anvil.mine(CONFIRMATIONS);
    await waitFor('deposit credited', async () => {
      await scanDeposits(database.pool, remote.chain, 'ETHEREUM');
      await confirmDeposits(database.pool, remote.chain, quietLog);
      return (await database.pool.query(`SELECT 1 FROM chain_deposits WHERE state = 'PENDING' AND to_address = $1`, [address])).rowCount === 0;
    });
    return { accountId, address };
  };
  const signedBySigner = async (reference: string) => (await database.pool.query<{ tx_hash: string }>('SELECT tx_hash FROM evm_transactions WHERE reference = $1', [reference])).rows[0]?.tx_hash;

  it('pays a withdrawal signed by the signer process', async () => {
    const { accountId } = await funded('ETH', parseEther('2'));
    const service = createWithdrawalService({
      pool: database.pool,
      chain: remote.chain,
      rates: fixedRates({ ETH: '3200', USDT: '1', USDC: '1' }),
      addresses: remote.addresses,
      catalogue: remote.catalogue,
      approvalSeal: remote.approvalSeal,
      settings: { fees: { ETH: '0.001', USDT_ETH: '1', USDC_ETH: '1' }, blockedAddresses: [], feeMarginBps: 2000 },
    });
    const to = stranger();
    const made = await service.create(accountId, { currency: 'ETH', amount: '0.5', depositAddress: to, idempotencyKey: randomUUID() });
    await waitFor('withdrawal completed', async () => {
      await processWithdrawals(database.pool, remote.chain, quietLog);
      await anvil.mine(1);
      await confirmWithdrawals(database.pool, remote.chain, quietLog);
      return (await database.pool.query(`SELECT 1 FROM withdrawals WHERE id = $1 AND state = 'COMPLETED'`, [made.id])).rowCount === 1;
    }, 30_000);
    expect(await anvil.publicClient.getBalance({ address: to })).toBe(parseEther('0.499'));
    const txHash = (await database.pool.query<{ tx_hash: string }>('SELECT tx_hash FROM withdrawals WHERE id = $1', [made.id])).rows[0]?.tx_hash;
    expect(await signedBySigner(`withdrawal:${made.id}`)).toBe(txHash);
    expect((await anvil.publicClient.getTransaction({ hash: txHash as Hex })).from.toLowerCase()).toBe(hot.toLowerCase());
  });

  it('sweeps a token deposit into the hot wallet after a gas top-up, both signed by the signer process', async () => {
    const { address } = await funded('USDT_ETH', 25_000_000n);
    expect(await anvil.publicClient.getBalance({ address })).toBe(0n);
    const hotBefore = await anvil.balanceOf(tokens.USDT_ETH, hot);
    const sweep = await waitFor('sweep confirmed', async () => {
      await collectDeposits(database.pool, remote.chain, quietLog);
      await anvil.mine(1);
      const row = (await database.pool.query<{ id: string; state: string; top_ups: number; tx_hash: string; top_up_tx_hash: string }>('SELECT id, state, top_ups, tx_hash, top_up_tx_hash FROM sweeps WHERE address = $1', [address])).rows[0];
      return row?.state === 'CONFIRMED' && row;
    }, 30_000);
    expect(sweep.top_ups).toBe(1);
    expect(await anvil.balanceOf(tokens.USDT_ETH, address)).toBe(0n);
    expect(await anvil.balanceOf(tokens.USDT_ETH, hot)).toBe(hotBefore + 25_000_000n);
    // The top-up came from the hot wallet, the sweep from the deposit address: both signed under their references.
    const topUp = await anvil.publicClient.getTransaction({ hash: sweep.top_up_tx_hash as Hex });
    expect(topUp.from.toLowerCase()).toBe(hot.toLowerCase());
    expect(topUp.to?.toLowerCase()).toBe(address.toLowerCase());
    expect(await signedBySigner(`sweep:${sweep.id}:top-up:1`)).toBe(sweep.top_up_tx_hash);
    expect((await anvil.publicClient.getTransaction({ hash: sweep.tx_hash as Hex })).from.toLowerCase()).toBe(address.toLowerCase());
    expect(await signedBySigner(`sweep:${sweep.id}`)).toBe(sweep.tx_hash);
  });

  it('sweeps the excess above HOT_WALLET_MAX to the cold address on chain, signed by the signer process', async () => {
    // Deposits are swept first (so the hot wallet can pay what the holdings count).
    await waitFor('sweeps closed', async () => {
      await collectDeposits(database.pool, remote.chain, quietLog);
      await anvil.mine(1);
      return (await database.pool.query(`SELECT 1 FROM sweeps WHERE state NOT IN ('CONFIRMED', 'SKIPPED', 'FAILED')`)).rowCount === 0;
    }, 30_000);
    const held = (await remote.chain.holdings('ETHEREUM')).ETH ?? 0n;
    expect(held).toBeGreaterThan(CEILING + parseEther('40'));
    await job('custody.hot-cold:ETHEREUM').run();
    const movement = async () =>
      (await database.pool.query<{ id: string; state: string; amount: string; to_address: string; tx_hash: string }>(`SELECT id, state, amount::text, to_address, tx_hash FROM custody_movements WHERE kind = 'COLD'`)).rows;
    const [sweep, ...more] = await movement();
    expect(more).toEqual([]);
    expect(sweep).toMatchObject({ state: 'BROADCAST', to_address: cold, amount: (held - CEILING).toString() });
    expect(await signedBySigner(`withdrawal:cold:${sweep?.id}`)).toBe(sweep?.tx_hash);
    await waitFor('cold sweep booked', async () => {
      await anvil.mine(1);
      await job('custody.movements:ETHEREUM').run();
      return (await movement())[0]?.state === 'COMPLETED';
    }, 30_000);
    expect(await anvil.publicClient.getBalance({ address: cold })).toBe(held - CEILING);
    const after = (await remote.chain.holdings('ETHEREUM')).ETH ?? 0n;
    expect(after).toBeLessThan(CEILING);
    expect(after).toBeGreaterThan(CEILING - parseEther('0.01'));
    expect(signerOutput).not.toContain('signer refused');
  });
});
