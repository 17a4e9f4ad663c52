import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import { mnemonicToSeedSync } from '@scure/bip39';
import { utils } from 'tronweb';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { auditFailures, createWalletAccount, openTestCustody, quietLog, TEST_MNEMONIC, TEST_SECRETS_KEY, waitFor, type TestCustody } from '../../support/custody.ts';
import { startTronStandIn, type TronStandIn } from '../../support/tron-node.ts';
import { launchWorker, type LaunchedWorker } from '../../support/server.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { chainsConfig } from '../../../src/server/config-chains.ts';
import { BroadcastRejectedError, ChainUnsupportedError, transferKey, type ChainAdapter } from '../../../src/server/adapters/chains/port.ts';
import { createTronAdapter } from '../../../src/server/adapters/chains/tron/adapter.ts';
import { chainAddressing, deriveAddress } from '../../../src/server/domain/addresses.ts';
import { addAssets, listAssets } from '../../../src/server/domain/assets.ts';
import { confirmDeposits, scanDeposits } from '../../../src/server/domain/deposits.ts';
import { createWithdrawalService } from '../../../src/server/domain/withdrawals/requests.ts';
import { approvalSealer } from '../../../src/server/domain/signing.ts';
import { parseDecimal } from '../../../src/lib/amount.ts';
import { unitsOf } from '../../../src/lib/money.ts';

const CHAIN_ADDRESSING = chainAddressing('mainnet');

/**
 * The TRON adapter against the full-node stand-in (tests/support/tron-node.ts), which checks every transaction it is
 * sent with tronweb (encoding, txID, signature against the owner, TAPOS, expiration, TRC-20 call data by ABI) before
 * it mines it. Deposits read from its blocks, withdrawals and sweeps signed here, and a worker killed with SIGKILL
 * between signing and sending (and between sending and recording) that never sends a transaction twice.
 */
const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');
const outside = (index: number) => deriveAddress(OUTSIDE_SEED, 'TRON', index, 'mainnet');
/** The USDT contract of the stand-in: an address nobody deploys anything to outside these tests. */
const USDT = utils.crypto.pkToAddress('0e'.repeat(32));
const TRX = (units: number) => BigInt(units) * 1_000_000n;

describe('the TRON adapter against a checking full-node stand-in', () => {
  let node: TronStandIn;
  let testDatabase: TestDatabase;
  let database: Database;
  let custody: TestCustody;
  let tron: ChainAdapter;
  let hot: string;

  const addressOf = async (accountId: string, currency: string) => (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === currency)?.depositAddress ?? '';
  const balance = async (accountId: string, currency: string) => (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === currency)?.totalAvailable;
  const deposits = async () =>
    (await database.pool.query<{ tx_hash: string; output_index: number; currency: string; amount: string; state: string }>('SELECT tx_hash, output_index, currency, amount, state FROM chain_deposits ORDER BY amount')).rows;
  /** The txID as the node computes it: sha256 of the raw_data's protobuf bytes, re-encoded from the JSON by tronweb. */
  const txIdOf = (rawTx: string) => {
    const tx = JSON.parse(rawTx) as { raw_data: unknown };
    return Buffer.from(sha256(Buffer.from(utils.transaction.txPbToRawDataHex(utils.transaction.txJsonToPb({ raw_data: tx.raw_data, visible: false })), 'hex'))).toString('hex');
  };

  beforeAll(async () => {
    node = await startTronStandIn({ tokens: { USDT_TRX: USDT } });
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    const chains = chainsConfig({ DEVNET_BLOCK_MS: 100, CONFIRMATIONS: 'TRON:3', TRON_API_URL: node.url, TRON_API_KEY: node.apiKey, TRON_TOKENS: { USDT_TRX: USDT } }, 'devnet');
    ({ database, custody } = await openTestCustody(testDatabase.url, { chains }));
    tron = createTronAdapter(database.pool, { ...chains.tron, apiUrl: node.url, confirmations: 3, env: 'mainnet', keys: custody.keys, addresses: CHAIN_ADDRESSING });
    hot = await tron.hotWalletAddress('TRON');
  });
  afterAll(async () => {
    expect(node?.problems).toEqual([]);
    await database?.close();
    await testDatabase?.drop();
    await node?.close();
  });

  it('runs TRON when TRON_API_URL is set, with the hot wallet the devnet had', async () => {
    expect(custody.chainAdapters.TRON).toBe('tron');
    expect(custody.chainAdapters.BITCOIN).toBe('devnet');
    expect(hot).toBe(await custody.devnet.hotWalletAddress('TRON'));
    expect(tron.explorerUrl('TRON')).toBe('https://tronscan.org/#/transaction/{tx}');
    await expect(tron.replaceByFee({} as never, {} as never)).rejects.toBeInstanceOf(ChainUnsupportedError);
  });

  it('finds TRX and USDT_TRX deposits in blocks, pending until the confirmations, credited once; a reverted token call is no deposit', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    await addAssets(database.pool, accountId, ['TRX', 'USDT_TRX'], custody.catalogue, custody);
    const address = await addressOf(accountId, 'TRX');
    expect(await addressOf(accountId, 'USDT_TRX')).toBe(address);
    // A stranger with TRX but no USDT: its transfer reverts on the chain, its fee is burnt, nothing arrives.
    const stranger = utils.crypto.pkToAddress('0d'.repeat(32));
    await node.send({ to: stranger, amount: TRX(50) });
    node.mine();
    expect(await scanDeposits(database.pool, tron, 'TRON')).toBe(0);

    const trxTx = await node.send({ to: address, amount: 5_250_000n });
    const usdtTx = await node.send({ to: address, amount: 12_345_678n, token: USDT });
    await node.send({ to: await outside(1), amount: 1_000_000n, token: USDT });
    const reverted = await node.send({ to: address, amount: 1n, token: USDT, from: '0d'.repeat(32) });
    node.mine();
    expect(await scanDeposits(database.pool, tron, 'TRON')).toBe(2);
    expect(await deposits()).toEqual([
      { tx_hash: trxTx, output_index: 0, currency: 'TRX', amount: '5250000', state: 'PENDING' },
      { tx_hash: usdtTx, output_index: 0, currency: 'USDT_TRX', amount: '12345678', state: 'PENDING' },
    ]);
    await confirmDeposits(database.pool, tron, quietLog);
    expect((await deposits()).map((d) => d.state)).toEqual(['PENDING', 'PENDING']);
    const revertedStatus = (await tron.status('TRON', [{ txHash: reverted, outputIndex: 0 }])).get(transferKey({ txHash: reverted, outputIndex: 0 }));
    expect(revertedStatus).toMatchObject({ state: 'FAILED', reason: expect.stringContaining('REVERT'), fee: BigInt(node.info(reverted)?.fee ?? -1) });

    node.mine(2);
    expect(await scanDeposits(database.pool, tron, 'TRON')).toBe(0);
    await confirmDeposits(database.pool, tron, quietLog);
    expect((await deposits()).map((d) => d.state)).toEqual(['CREDITED', 'CREDITED']);
    expect(await balance(accountId, 'TRX')).toBe('5.25');
    expect(await balance(accountId, 'USDT_TRX')).toBe('12.345678');
    expect((await tron.status('TRON', [{ txHash: usdtTx, outputIndex: 0 }])).get(transferKey({ txHash: usdtTx, outputIndex: 0 }))).toMatchObject({ state: 'SEEN', confirmations: 3 });
    // Read again from the start: the same outputs, recorded once.
    await database.pool.query('DELETE FROM chain_cursors');
    expect(await scanDeposits(database.pool, tron, 'TRON')).toBe(0);
    expect(await auditFailures(database.pool)).toEqual([]);
  });

  it('signs TRX and USDT_TRX withdrawals the node verifies, the same bytes for the same reference, and reports their fees', async () => {
    await node.send({ to: hot, amount: TRX(1000) });
    await node.send({ to: hot, amount: TRX(500), token: USDT });
    node.mine();
    const [toA, toB] = [await outside(2), await outside(3)];
    const trxOrder = { reference: randomUUID(), network: 'TRON' as const, currency: 'TRX', toAddress: toA, amount: unitsOf(1_234_567n) };
    const usdtOrder = { reference: randomUUID(), network: 'TRON' as const, currency: 'USDT_TRX', toAddress: toB, amount: unitsOf(7_654_321n) };
    const fee = await tron.estimateFee(usdtOrder);
    expect(fee).toEqual({ network: 'TRON', currency: 'TRX', amount: 130_285n * 100n + 350n * 1000n, rate: 100n });

    const trxSigned = await tron.signWithdrawal(trxOrder);
    const usdtSigned = await tron.signWithdrawal(usdtOrder);
    expect(await tron.signWithdrawal(trxOrder)).toEqual(trxSigned);
    for (const signed of [trxSigned, usdtSigned]) {
      expect(signed.fromAddress).toBe(hot);
      expect(signed.txHash).toBe(txIdOf(signed.rawTx));
    }
    expect(node.received(trxSigned.txHash)).toBe(0);
    expect(await tron.broadcast('TRON', trxSigned.rawTx)).toEqual({ txHash: trxSigned.txHash });
    await tron.broadcast('TRON', usdtSigned.rawTx);
    // Sent again: the node already has it, nothing changes.
    expect(await tron.broadcast('TRON', usdtSigned.rawTx)).toEqual({ txHash: usdtSigned.txHash });
    expect(node.verified.slice(-2)).toEqual([
      { txID: trxSigned.txHash, type: 'TransferContract', owner: hot, to: toA, amount: 1_234_567n },
      { txID: usdtSigned.txHash, type: 'TriggerSmartContract', owner: hot, to: toB, amount: 7_654_321n, token: USDT, feeLimit: Number((fee.amount * 150n + 99n) / 100n) },
    ]);
    const ref = { txHash: usdtSigned.txHash, outputIndex: 0 };
    expect((await tron.status('TRON', [ref])).get(transferKey(ref))).toEqual({ state: 'SEEN', blockHeight: null, confirmations: 0 });
    node.mine();
    expect(node.trx(toA)).toBe(1_234_567n);
    expect(node.token(USDT, toB)).toBe(7_654_321n);
    const statuses = await tron.status('TRON', [ref, { txHash: trxSigned.txHash, outputIndex: 0 }]);
    // The hot wallet's first transfer fits its free bandwidth; the second burns it, the token call burns its energy.
    expect(statuses.get(transferKey(ref))).toEqual({ state: 'SEEN', blockHeight: node.head().block_header.raw_data.number, confirmations: 1, fee: BigInt(node.info(usdtSigned.txHash)?.fee ?? -1) });
    expect(node.info(usdtSigned.txHash)?.fee).toBeGreaterThan(13_000_000);
    expect(statuses.get(transferKey({ txHash: trxSigned.txHash, outputIndex: 0 }))).toMatchObject({ state: 'SEEN', fee: 1_100_000n });
    expect(await tron.holdings('TRON')).toEqual({ TRX: node.trx(hot) + 5_250_000n, USDT_TRX: node.token(USDT, hot) + 12_345_678n });
  });

  it('reports a token withdrawal the contract reverted as FAILED with the fee it burnt', async () => {
    const signed = await tron.signWithdrawal({ reference: randomUUID(), network: 'TRON', currency: 'USDT_TRX', toAddress: await outside(4), amount: unitsOf(TRX(10_000)) });
    await tron.broadcast('TRON', signed.rawTx);
    node.mine();
    const ref = { txHash: signed.txHash, outputIndex: 0 };
    expect((await tron.status('TRON', [ref])).get(transferKey(ref))).toMatchObject({ state: 'FAILED', fee: BigInt(node.info(signed.txHash)?.fee ?? -1), reason: expect.stringContaining('REVERT') });
  });

  it('sweeps a TRC-20 deposit after topping the address up with the TRX its energy needs', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    await addAssets(database.pool, accountId, ['USDT_TRX'], custody.catalogue, custody);
    const address = await addressOf(accountId, 'USDT_TRX');
    const index = (await database.pool.query<{ derivation_index: number }>('SELECT derivation_index FROM deposit_addresses WHERE address = $1', [address])).rows[0]?.derivation_index ?? -1;
    await node.send({ to: address, amount: 40_000_000n, token: USDT });
    node.mine();
    const source = { network: 'TRON' as const, currency: 'USDT_TRX', address, index, amount: unitsOf(40_000_000n), reference: randomUUID() };

    // The address never had TRX: it does not exist on the chain and cannot pay anything, not even its bandwidth.
    const first = await tron.collection.sweep(source);
    expect(first).toEqual({ state: 'NEEDS_GAS', gas: { network: 'TRON', currency: 'TRX', amount: (64_285n * 100n * 120n + 99n) / 100n + 350n * 1000n, rate: 100n } });
    if (first.state !== 'NEEDS_GAS') return;
    const topUp = { network: 'TRON' as const, address, amount: first.gas.amount, reference: randomUUID() };
    const gas = await tron.collection.topUpGas(topUp);
    expect(await tron.collection.topUpGas(topUp)).toEqual(gas);
    expect(node.verified.at(-1)).toEqual({ txID: gas.txHash, type: 'TransferContract', owner: hot, to: address, amount: first.gas.amount });
    node.mine();
    expect(node.trx(address)).toBe(first.gas.amount);
    // The top-up is the custody's own transfer, not a deposit of the user's.
    await scanDeposits(database.pool, tron, 'TRON');
    expect((await deposits()).filter((d) => d.tx_hash === gas.txHash)).toEqual([]);

    const hotUsdt = node.token(USDT, hot);
    const swept = await tron.collection.sweep(source);
    expect(swept).toMatchObject({ state: 'SENT', fee: { network: 'TRON', currency: 'TRX', amount: 64_285n * 100n } });
    if (swept.state !== 'SENT') return;
    expect(swept.signed).toMatchObject({ fromAddress: address, txHash: txIdOf(swept.signed.rawTx) });
    expect(node.verified.at(-1)).toMatchObject({ txID: swept.signed.txHash, type: 'TriggerSmartContract', owner: address, to: hot, amount: 40_000_000n, token: USDT });
    // Swept again by the same reference: the same transaction, taken once.
    expect(await tron.collection.sweep(source)).toEqual(swept);
    node.mine();
    expect(node.token(USDT, address)).toBe(0n);
    expect(node.token(USDT, hot)).toBe(hotUsdt + 40_000_000n);
    const ref = { txHash: swept.signed.txHash, outputIndex: 0 };
    expect((await tron.status('TRON', [ref])).get(transferKey(ref))).toMatchObject({ state: 'SEEN', fee: 64_285n * 100n });
    expect(node.received(swept.signed.txHash)).toBe(2);
    expect(node.verified.filter((v) => v.txID === swept.signed.txHash)).toHaveLength(1);
  });

  it('sweeps a TRX deposit whole while the address has free bandwidth', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    await addAssets(database.pool, accountId, ['TRX'], custody.catalogue, custody);
    const address = await addressOf(accountId, 'TRX');
    const index = (await database.pool.query<{ derivation_index: number }>('SELECT derivation_index FROM deposit_addresses WHERE address = $1', [address])).rows[0]?.derivation_index ?? -1;
    await node.send({ to: address, amount: 3_333_333n });
    node.mine();
    const hotTrx = node.trx(hot);
    const swept = await tron.collection.sweep({ network: 'TRON', currency: 'TRX', address, index, amount: unitsOf(3_333_333n), reference: randomUUID() });
    expect(swept).toMatchObject({ state: 'SENT', fee: { amount: 0n } });
    if (swept.state !== 'SENT') return;
    expect(node.verified.at(-1)).toEqual({ txID: swept.signed.txHash, type: 'TransferContract', owner: address, to: hot, amount: 3_333_333n });
    node.mine();
    expect(node.trx(address)).toBe(0n);
    expect(node.trx(hot)).toBe(hotTrx + 3_333_333n);
    expect(await tron.collection.sweep({ network: 'TRON', currency: 'TRX', address, index, amount: unitsOf(1n), reference: randomUUID() })).toMatchObject({ state: 'NOT_NEEDED' });
  });

  it('notices a reorganisation: a deposit whose block left the chain is DROPPED, one mined again is found at its new height', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    await addAssets(database.pool, accountId, ['TRX'], custody.catalogue, custody);
    const address = await addressOf(accountId, 'TRX');
    let cursor: string | null = null;
    for (let tip = -1; tip !== node.head().block_header.raw_data.number; ) {
      tip = node.head().block_header.raw_data.number;
      cursor = (await tron.scan('TRON', cursor, 100)).cursor;
    }
    const lost = await node.send({ to: address, amount: 1_000_001n });
    const kept = await node.send({ to: address, amount: 2_000_002n });
    const [orphan] = node.mine();
    const before = await tron.scan('TRON', cursor, 100);
    expect(before.transfers.map((t) => [t.txHash, t.blockHeight])).toEqual([
      [lost, orphan?.block_header.raw_data.number],
      [kept, orphan?.block_header.raw_data.number],
    ]);

    node.reorg(1, [lost]);
    const [replacement] = node.mine(2);
    const after = await tron.scan('TRON', before.cursor, 100);
    expect(after.reorg).toEqual({ orphaned: { height: orphan?.block_header.raw_data.number, hash: orphan?.blockID }, rescanFrom: expect.any(Number) });
    expect(after.transfers.filter((t) => t.toAddress === address).map((t) => [t.txHash, t.blockHeight])).toEqual([[kept, replacement?.block_header.raw_data.number]]);
    expect(after.cursor).toBe(`${node.head().block_header.raw_data.number}:${node.head().blockID}`);
    const statuses = await tron.status('TRON', [
      { txHash: lost, outputIndex: 0 },
      { txHash: kept, outputIndex: 0 },
    ]);
    expect(statuses.get(transferKey({ txHash: lost, outputIndex: 0 }))).toEqual({ state: 'DROPPED' });
    expect(statuses.get(transferKey({ txHash: kept, outputIndex: 0 }))).toMatchObject({ state: 'SEEN', confirmations: 2 });
  });

  it('keeps a signed transaction until the chain proves it expired and absent, then signs a new one', async () => {
    const short = createTronAdapter(database.pool, { apiUrl: node.url, apiKey: node.apiKey, tokens: { USDT_TRX: USDT }, env: 'mainnet', keys: custody.keys, addresses: CHAIN_ADDRESSING, expirationMs: 5_000 });
    const order = { reference: randomUUID(), network: 'TRON' as const, currency: 'TRX', toAddress: await outside(5), amount: unitsOf(1_000_000n) };
    const signed = await short.signWithdrawal(order);
    const ref = { txHash: signed.txHash, outputIndex: 0 };
    // Not on the chain, and it may still be: no status, so a worker sends it.
    expect((await short.status('TRON', [ref])).has(transferKey(ref))).toBe(false);
    node.mine(2);
    expect((await short.status('TRON', [ref])).get(transferKey(ref))).toEqual({ state: 'DROPPED' });
    await expect(short.broadcast('TRON', signed.rawTx)).rejects.toBeInstanceOf(BroadcastRejectedError);
    const again = await short.signWithdrawal(order);
    expect(again.txHash).not.toBe(signed.txHash);
    await short.broadcast('TRON', again.rawTx);
    node.mine(3);
    // Landed: kept after its expiration, never signed anew, and not sent again (the node would call it expired).
    expect(await short.signWithdrawal(order)).toEqual(again);
    const topUp = { network: 'TRON' as const, address: await outside(6), amount: unitsOf(2_000_000n), reference: randomUUID() };
    const gas = await short.collection.topUpGas(topUp);
    node.mine(3);
    expect(await short.collection.topUpGas(topUp)).toEqual(gas);
    expect(node.received(gas.txHash)).toBe(1);
    expect(node.received(signed.txHash)).toBe(1);
  });
});

describe('a worker killed with SIGKILL around sending a TRON withdrawal', () => {
  let node: TronStandIn;
  let testDatabase: TestDatabase;
  let database: Database;
  let custody: TestCustody;
  let worker: LaunchedWorker | undefined;
  let stopMining = () => {};
  let dataDir = '';
  const SIGNER_TOKEN = 's'.repeat(64);
  const ENV = () => ({
    DATABASE_URL: testDatabase.url,
    WALLET_SEED: TEST_MNEMONIC,
    SECRETS_KEY: TEST_SECRETS_KEY,
    DEVNET_BLOCK_MS: '150',
    CONFIRMATIONS: 'TRON:2',
    WORKER_POLL_MS: '100',
    RATES_WALK_MS: '0',
    TRON_API_URL: node.url,
    TRON_API_KEY: node.apiKey,
    TRON_TOKENS: JSON.stringify({ USDT_TRX: USDT }),
    LOG_LEVEL: 'info',
    // The worker's embedded signer signs only what is sealed with its token's key, as the gateway seals it.
    SIGNER_TOKEN,
    DATA_DIR: dataDir,
  });
  const start = async () => {
    worker = launchWorker(ENV());
  };
  const kill = async () => worker?.stop('SIGKILL');
  const row = async (id: string) => (await database.pool.query<{ state: string; tx_hash: string | null }>('SELECT state, tx_hash FROM withdrawals WHERE id = $1', [id])).rows[0];

  beforeAll(async () => {
    node = await startTronStandIn({ tokens: { USDT_TRX: USDT } });
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    const chains = chainsConfig({ DEVNET_BLOCK_MS: 150, CONFIRMATIONS: 'TRON:2', TRON_API_URL: node.url, TRON_API_KEY: node.apiKey, TRON_TOKENS: { USDT_TRX: USDT } }, 'devnet');
    ({ database, custody } = await openTestCustody(testDatabase.url, { chains }));
    dataDir = await mkdtemp(join(tmpdir(), 'tron-worker-'));
  });
  afterAll(async () => {
    stopMining();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    await kill();
    expect(node?.problems).toEqual([]);
    await database?.close();
    await testDatabase?.drop();
    await node?.close();
  });

  it('sends the withdrawal once though one worker died after signing it and the next after sending it, before recording it', { timeout: 150_000 }, async () => {
    const tron = createTronAdapter(database.pool, { apiUrl: node.url, apiKey: node.apiKey, tokens: { USDT_TRX: USDT }, confirmations: 2, env: 'mainnet', keys: custody.keys, addresses: CHAIN_ADDRESSING });
    const { accountId } = await createWalletAccount(database.pool);
    await addAssets(database.pool, accountId, ['TRX'], custody.catalogue, custody);
    const address = (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === 'TRX')?.depositAddress ?? '';
    await node.send({ to: address, amount: TRX(30) });
    await node.send({ to: await tron.hotWalletAddress('TRON'), amount: TRX(1000) });
    node.mine(3);
    await scanDeposits(database.pool, tron, 'TRON');
    await confirmDeposits(database.pool, tron, quietLog);
    const service = createWithdrawalService({ pool: database.pool, chain: tron, rates: custody.rates, addresses: CHAIN_ADDRESSING, catalogue: custody.catalogue, settings: { fees: { TRX: '1' }, blockedAddresses: [], feeMarginBps: 2000 }, approvalSeal: approvalSealer(SIGNER_TOKEN) });
    const withdraw = async (index: number) => service.create(accountId, { currency: 'TRX', amount: '6', depositAddress: await outside(index), idempotencyKey: randomUUID() });

    // 1. Dies once the transaction is signed and recorded, before it is sent (held at the node's status answer for a
    // hash it was never sent: the worker asks for it before sending it).
    const first = await withdraw(10);
    const status = node.hold('/wallet/gettransactioninfobyid', 'unknown');
    await start();
    await status.reached;
    const signed = await row(first.id);
    expect(signed).toMatchObject({ state: 'SIGNED', tx_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const hash = signed?.tx_hash ?? '';
    await kill();
    status.release();
    expect(node.received(hash)).toBe(0);

    // 2. The next worker sends it and dies after the node took it, before it heard so and recorded it.
    const sending = node.hold('/wallet/broadcasttransaction', hash);
    await start();
    await sending.reached;
    await kill();
    sending.release();
    expect(await row(first.id)).toEqual({ state: 'SIGNED', tx_hash: hash });
    expect(node.received(hash)).toBe(1);

    // 3. A new worker finds it on the chain by its hash and never sends it again; another withdrawal goes as usual.
    const second = await withdraw(11);
    stopMining = node.autoMine(150);
    await start();
    await waitFor('both withdrawals completed', async () => (await row(first.id))?.state === 'COMPLETED' && (await row(second.id))?.state === 'COMPLETED', 45_000);
    expect(worker?.output()).toContain("reconciled by its hash");
    const hot = await tron.hotWalletAddress('TRON');
    for (const [sent, to] of [
      [first, await outside(10)],
      [second, await outside(11)],
    ] as const) {
      const txHash = (await row(sent.id))?.tx_hash ?? '';
      // The recipient gets the 6 TRX less the fee, which follows the network's (activating a new account costs TRX).
      const received = TRX(6) - parseDecimal(sent.fee, 6);
      expect(node.received(txHash)).toBe(1);
      expect(node.verified.filter((v) => v.txID === txHash)).toEqual([{ txID: txHash, type: 'TransferContract', owner: hot, to, amount: received }]);
      expect(node.trx(to)).toBe(received);
    }
    expect((await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === 'TRX')).toMatchObject({ totalAvailable: '18', onHold: '0' });
    expect(await auditFailures(database.pool)).toEqual([]);
  });
});
