import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mnemonicToSeedSync } from '@scure/bip39';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createWalletAccount, quietLog, TEST_MNEMONIC } from '../../support/custody.ts';
import { startLitecoind, type Litecoind } from '../../support/litecoind.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import { chainAddressing } from '../../../src/server/domain/addresses.ts';
import { createUtxoAdapter } from '../../../src/server/adapters/chains/utxo/adapter.ts';
import { BroadcastRejectedError, transferKey, type ChainAdapter } from '../../../src/server/adapters/chains/port.ts';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unitsOf } from '../../../src/lib/money.ts';

/**
 * The UTXO adapter on its own against Litecoin Core -regtest: blocks walked into the custody's output index,
 * Pending from the mempool, status by hash, a signed P2WPKH withdrawal the node accepts (exact amount, change back
 * to the custody), the same reference signing the same transaction, RBF replacing it (offered to the node before it
 * is handed back), and a reorganisation unwound.
 */
const seed = mnemonicToSeedSync(TEST_MNEMONIC);
const addressing = chainAddressing('regtest');

describe('the UTXO adapter on Litecoin Core regtest', () => {
  let node: Litecoind;
  let testDatabase: TestDatabase;
  let database: Database;
  let chain: ChainAdapter;
  let cursor: string | null = null;
  let deposit = '';

  const scan = async () => {
    const batch = await chain.scan('LITECOIN', cursor, 500);
    cursor = batch.cursor ?? cursor;
    return batch;
  };
  const held = async () => (await chain.holdings('LITECOIN')).LTC;

  beforeAll(async () => {
    node = await startLitecoind();
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: await mkdtemp(join(tmpdir(), 'utxo-test-')) }, quietLog);
    chain = createUtxoAdapter(database.pool, {
      env: 'regtest',
      seed,
      addresses: addressing,
      nodes: { LITECOIN: node.url },
      confirmations: { LITECOIN: 2 },
      feeRateFallback: { LITECOIN: 5n },
      rbfAfterBlocks: 2,
    });
    deposit = await addressing.derive(seed, 'LITECOIN', 0);
    expect(deposit).toMatch(/^rltc1q/);
    const { accountId } = await createWalletAccount(database.pool);
    await database.pool.query(`INSERT INTO deposit_addresses (network, address, wallet_account_id, derivation_index) VALUES ('LITECOIN', $1, $2, 0)`, [deposit, accountId]);
  }, 120_000);
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
    await node?.stop();
  });

  it('sees a deposit in the mempool, then in its block, and counts it held after the confirmations', async () => {
    await scan();
    const txHash = await node.send(deposit, '1.5');
    const pending = await scan();
    expect(pending.transfers).toEqual([expect.objectContaining({ txHash, toAddress: deposit, amount: 150_000_000n, currency: 'LTC', blockHeight: null })]);
    const ref = { txHash, outputIndex: pending.transfers[0]?.outputIndex ?? 0 };
    expect((await chain.status('LITECOIN', [ref])).get(transferKey(ref))).toEqual({ state: 'SEEN', blockHeight: null, confirmations: 0 });
    const height = await node.mine(1);
    const mined = await scan();
    expect(mined.transfers).toEqual([expect.objectContaining({ txHash, amount: 150_000_000n, blockHeight: height })]);
    expect(await held()).toBe(0n);
    await node.mine(1);
    await scan();
    expect((await chain.status('LITECOIN', [ref])).get(transferKey(ref))).toEqual({ state: 'SEEN', blockHeight: height, confirmations: 2 });
    expect(await held()).toBe(150_000_000n);
    expect((await chain.status('LITECOIN', [{ txHash: '00'.repeat(32), outputIndex: 0 }])).get(`${'00'.repeat(32)}:0`)).toEqual({ state: 'DROPPED' });
  });

  it('signs a withdrawal once per reference, the node takes it, the recipient gets the exact amount and change comes back', async () => {
    const to = await node.newAddress();
    const order = { reference: 'w-1', network: 'LITECOIN' as const, currency: 'LTC', toAddress: to, amount: unitsOf(40_000_000n) };
    expect(await chain.signedBefore?.('LITECOIN', order.reference)).toBe(false);
    const signed = await chain.signWithdrawal(order);
    // The signer asks this before it re-checks a cold sweep: signed once, its inputs are taken.
    expect(await chain.signedBefore?.('LITECOIN', order.reference)).toBe(true);
    // Signed again (a worker that died before recording it): the very same transaction.
    expect(await chain.signWithdrawal(order)).toEqual(signed);
    // A second withdrawal cannot spend the reserved output: there is nothing else.
    await expect(chain.signWithdrawal({ ...order, reference: 'w-2' })).rejects.toThrow(/cannot pay/);
    expect(await chain.broadcast('LITECOIN', signed.rawTx)).toEqual({ txHash: signed.txHash });
    expect(await chain.broadcast('LITECOIN', signed.rawTx)).toEqual({ txHash: signed.txHash });
    const decoded = await node.rpc.call<{ vin: { sequence: number }[]; vout: { n: number }[] }>('decoderawtransaction', signed.rawTx);
    expect(decoded.vin.every((i) => i.sequence === 0xfffffffd)).toBe(true);
    await node.mine(2);
    await scan();
    expect(await node.received(to)).toBe(40_000_000n);
    const ref = { txHash: signed.txHash, outputIndex: 0 };
    const status = (await chain.status('LITECOIN', [ref])).get(transferKey(ref));
    expect(status).toMatchObject({ state: 'SEEN', confirmations: 2, fee: expect.any(BigInt) });
    const fee = status?.state === 'SEEN' ? (status.fee ?? 0n) : 0n;
    expect(fee).toBeGreaterThan(0n);
    // What the chain shows the custody holding: the deposit less what left, to the litoshi.
    expect(await held()).toBe(150_000_000n - 40_000_000n - fee);
    expect(await chain.broadcast('LITECOIN', signed.rawTx)).toEqual({ txHash: signed.txHash });
  });

  it('replaces an unmined withdrawal by fee; only one of the two is mined', async () => {
    const to = await node.newAddress();
    const order = { reference: 'w-rbf', network: 'LITECOIN' as const, currency: 'LTC', toAddress: to, amount: unitsOf(10_000_000n) };
    const first = await chain.signWithdrawal(order);
    await chain.broadcast('LITECOIN', first.rawTx);
    const estimate = await chain.estimateFee(order);
    const second = await chain.replaceByFee({ order, signed: first, fee: estimate }, estimate);
    expect(second.txHash).not.toBe(first.txHash);
    expect(await chain.replaceByFee({ order, signed: first, fee: estimate }, estimate)).toEqual(second);
    await chain.broadcast('LITECOIN', second.rawTx);
    const refs = [first, second].map((s) => ({ txHash: s.txHash, outputIndex: 0 }));
    // The replaced one is not in the mempool, but its inputs are unspent on the chain: ours, it is never given up
    // then (the node refuses it again for its lower fee, and it waits); once the replacement is mined it is DROPPED.
    expect([...(await chain.status('LITECOIN', refs)).values()].map((s) => s.state)).toEqual(['SEEN', 'SEEN']);
    await node.mine(2);
    await scan();
    const statuses = await chain.status('LITECOIN', refs);
    expect(statuses.get(transferKey(refs[0]!))).toEqual({ state: 'DROPPED' });
    expect(statuses.get(transferKey(refs[1]!))).toMatchObject({ state: 'SEEN', confirmations: 2 });
    expect(await node.received(to)).toBe(10_000_000n);
  });

  it('unwinds the outputs of blocks a reorganisation replaced', async () => {
    const before = await held();
    const txHash = await node.send(deposit, '0.25');
    const [height] = [await node.mine(1)];
    await scan();
    const blockHash = await node.rpc.call<string>('getblockhash', height);
    await node.rpc.call('invalidateblock', blockHash);
    // The transaction is back in the mempool: seen, unmined.
    const ref = { txHash, outputIndex: 0 };
    expect((await chain.status('LITECOIN', [ref])).get(transferKey(ref))).toMatchObject({ state: 'SEEN', blockHeight: null });
    // Keep it out of the replacing blocks, then mine past the old tip.
    await node.rpc.call('prioritisetransaction', txHash, 0, -100_000_000);
    await node.mine(3);
    const batch = await scan();
    expect(batch.reorg).toMatchObject({ orphaned: { height, hash: blockHash } });
    expect(await held()).toBe(before);
    const count = await database.pool.query('SELECT 1 FROM utxo_outputs WHERE tx_hash = $1', [txHash]);
    expect(count.rowCount).toBe(0);
  });

  it('keeps the reservations of signed transactions when blocks are read again', async () => {
    const to = await node.newAddress();
    const signed = await chain.signWithdrawal({ reference: 'w-keep', network: 'LITECOIN', currency: 'LTC', toAddress: to, amount: unitsOf(1_000_000n) });
    const reserved = async () => (await database.pool.query<{ tx_hash: string; vout: number }>('SELECT tx_hash, vout FROM utxo_outputs WHERE reserved_by = $1', ['w-keep'])).rows;
    const before = await reserved();
    expect(before.length).toBeGreaterThan(0);
    // Read the last 20 blocks again, as after a crash before the cursor was saved.
    const tip = await node.rpc.call<number>('getblockcount');
    await chain.scan('LITECOIN', `${tip - 20}:${await node.rpc.call<string>('getblockhash', tip - 20)}`, 500);
    expect(await reserved()).toEqual(before);
    await chain.broadcast('LITECOIN', signed.rawTx);
    await node.mine(1);
    expect(await node.received(to)).toBe(1_000_000n);
  });

  it('refuses a dust payment for good at broadcast and frees its inputs for the next withdrawal', async () => {
    // The change of the previous withdrawal gets its confirmations and is indexed.
    await node.mine(2);
    await scan();
    const to = await node.newAddress();
    const dust = await chain.signWithdrawal({ reference: 'w-dust', network: 'LITECOIN', currency: 'LTC', toAddress: to, amount: unitsOf(100n) });
    await expect(chain.broadcast('LITECOIN', dust.rawTx)).rejects.toThrow(BroadcastRejectedError);
    expect((await database.pool.query('SELECT 1 FROM utxo_outputs WHERE reserved_by = $1', ['w-dust'])).rowCount).toBe(0);
    const next = await chain.signWithdrawal({ reference: 'w-after-dust', network: 'LITECOIN', currency: 'LTC', toAddress: to, amount: unitsOf(2_000_000n) });
    expect(await chain.broadcast('LITECOIN', next.rawTx)).toEqual({ txHash: next.txHash });
    await node.mine(1);
    expect(await node.received(to)).toBe(2_000_000n);
  });

  it('never calls a paid withdrawal DROPPED when its replacement was taken by the node but not recorded by the caller', async () => {
    await node.send(deposit, '0.5');
    await node.mine(2);
    await scan();
    const to = await node.newAddress();
    const order = { reference: 'w-unrecorded', network: 'LITECOIN' as const, currency: 'LTC', toAddress: to, amount: unitsOf(5_000_000n) };
    const first = await chain.signWithdrawal(order);
    await chain.broadcast('LITECOIN', first.rawTx);
    const estimate = await chain.estimateFee(order);
    // The adapter offers the replacement to the node itself; the caller dies before recording it.
    const second = await chain.replaceByFee({ order, signed: first, fee: estimate }, estimate);
    expect(await node.rpc.call<string[]>('getrawmempool')).toContain(second.txHash);
    await node.mine(2);
    await scan();
    const ref = { txHash: first.txHash, outputIndex: 0 };
    // Asked alone (the caller knows only the first hash): unmined, not DROPPED, so the withdrawal is not failed and paid again.
    expect((await chain.status('LITECOIN', [ref])).get(transferKey(ref))).toEqual({ state: 'SEEN', blockHeight: null, confirmations: 0 });
    // The next bump hands the mined replacement over; asked with it, the first is DROPPED and the replacement mined.
    expect(await chain.replaceByFee({ order, signed: first, fee: estimate }, estimate)).toEqual(second);
    const both = await chain.status('LITECOIN', [ref, { txHash: second.txHash, outputIndex: 0 }]);
    expect(both.get(transferKey(ref))).toEqual({ state: 'DROPPED' });
    expect(both.get(`${second.txHash}:0`)).toMatchObject({ state: 'SEEN', confirmations: 2 });
    expect(await node.received(to)).toBe(5_000_000n);
  });
});
