import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mnemonicToSeedSync } from '@scure/bip39';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createWalletAccount, quietLog, TEST_MNEMONIC } from '../../support/custody.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import { chainAddressing } from '../../../src/server/domain/addresses.ts';
import { createUtxoAdapter } from '../../../src/server/adapters/chains/utxo/adapter.ts';
import { transferKey, type ChainAdapter } from '../../../src/server/adapters/chains/port.ts';
import { loadFixture, startRecordedNode, type RecordedNode } from '../../unit/server/adapters/chains/utxo/recorded-node.ts';
import { unitsOf } from '../../../src/lib/money.ts';

/**
 * The whole UTXO adapter (start-up check, block walk into the output index, deposits, status, fees, hot wallet
 * address) on recorded answers of Dogecoin Core 1.14.6 and Bitcoin Core 28.0 (testnet4): the node versions this
 * machine cannot run. The recorded node refuses wrongly typed parameters as those versions do.
 */
const seed = mnemonicToSeedSync(TEST_MNEMONIC);

const cursorBelow = (fixture: string, height: number) => {
  const hash = loadFixture(fixture).answers.find((a) => a.method === 'getblockhash' && a.params[0] === height)?.result;
  return `${height}:${String(hash)}`;
};

describe('the UTXO adapter on recorded answers of Dogecoin Core 1.14.6 and Bitcoin Core 28.0', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  const nodes: RecordedNode[] = [];
  const deposit = async (network: 'DOGECOIN' | 'BITCOIN', address: string) => {
    const { accountId } = await createWalletAccount(database.pool);
    await database.pool.query(`INSERT INTO deposit_addresses (network, address, wallet_account_id, derivation_index) VALUES ($1, $2, $3, 0)`, [network, address, accountId]);
  };

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: await mkdtemp(join(tmpdir(), 'utxo-versions-')) }, quietLog);
  });
  afterEach(() => {
    for (const node of nodes) {
      expect(node.refused, node.node).toEqual([]);
      expect(node.unexpected, node.node).toEqual([]);
    }
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
    await database?.close();
    await testDatabase?.drop();
  });

  it('walks a Dogecoin Core 1.14.6 block into the index (getblock with a boolean) and sees the deposit to a P2PKH address', async () => {
    const fixture = 'dogecoin-1.14.6-regtest.json';
    const node = await startRecordedNode(fixture);
    nodes.push(node);
    const addressing = chainAddressing('regtest');
    const address = await addressing.derive(seed, 'DOGECOIN', 0);
    await deposit('DOGECOIN', address);
    const chain: ChainAdapter = createUtxoAdapter(database.pool, { env: 'regtest', seed, addresses: addressing, nodes: { DOGECOIN: node.url }, confirmations: { DOGECOIN: 1 }, feeRateFallback: {}, rbfAfterBlocks: 6 });
    const batch = await chain.scan('DOGECOIN', cursorBelow(fixture, 211), 50);
    expect(batch.transfers).toEqual([expect.objectContaining({ network: 'DOGECOIN', currency: 'DOGE', toAddress: address, amount: 2_500_000_000n, blockHeight: 212 })]);
    expect(batch.cursor).toMatch(/^212:/);
    expect(node.calls.some((c) => /^getblock\(\["[0-9a-f]{64}",(1|2)\]\)$/.test(c))).toBe(false);
    const ref = { txHash: batch.transfers[0]?.txHash ?? '', outputIndex: 0 };
    expect((await chain.status('DOGECOIN', [ref])).get(transferKey(ref))).toEqual({ state: 'SEEN', blockHeight: 212, confirmations: 1 });
    expect(await chain.holdings('DOGECOIN')).toEqual({ DOGE: 2_500_000_000n });
    // No estimate from 1.14.6: FEE_RATE_FALLBACK's 1000 koinu/vB for two P2PKH inputs and two outputs.
    expect(await chain.estimateFee({ network: 'DOGECOIN', currency: 'DOGE', toAddress: address, amount: unitsOf(1n) })).toEqual({ network: 'DOGECOIN', currency: 'DOGE', amount: 1000n * (10n + 2n * 148n + 2n * 34n), rate: 1000n });
    expect(await chain.hotWalletAddress('DOGECOIN')).toMatch(/^[mn]/);
  });

  it('accepts a Bitcoin Core 28.0 node on testnet4 under CHAIN_ENV=testnet4 and reads its block with verbosity 2', async () => {
    const fixture = 'bitcoin-core-28.0-testnet4.json';
    const node = await startRecordedNode(fixture);
    nodes.push(node);
    const addressing = chainAddressing('testnet');
    const address = await addressing.derive(seed, 'BITCOIN', 0);
    expect(address).toBe('tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl');
    await deposit('BITCOIN', address);
    const options = { env: 'testnet' as const, seed, addresses: addressing, nodes: { BITCOIN: node.url }, confirmations: { BITCOIN: 1 }, feeRateFallback: {}, rbfAfterBlocks: 6 };
    // CHAIN_ENV=testnet wants testnet3's "test": the node is refused with both names.
    await expect(createUtxoAdapter(database.pool, options).scan('BITCOIN', null, 50)).rejects.toThrow('the BITCOIN node is on chain "testnet4" but CHAIN_ENV wants "test"');
    const chain = createUtxoAdapter(database.pool, { ...options, testChain: 'testnet4' });
    const batch = await chain.scan('BITCOIN', cursorBelow(fixture, 72139), 50);
    expect(batch.transfers).toEqual([expect.objectContaining({ toAddress: address, amount: 1_500_000n, blockHeight: 72140, currency: 'BTC' })]);
    expect(node.calls.filter((c) => c.startsWith('getrawtransaction(')).length).toBe(1);
    const ref = { txHash: batch.transfers[0]?.txHash ?? '', outputIndex: 0 };
    expect((await chain.status('BITCOIN', [ref])).get(transferKey(ref))).toEqual({ state: 'SEEN', blockHeight: 72140, confirmations: 1 });
    // estimatesmartfee 0.00003012 BTC/kvB → 4 sat/vB; MAX_FEE_RATE caps it.
    expect((await chain.estimateFee({ network: 'BITCOIN', currency: 'BTC', toAddress: address, amount: unitsOf(1n) })).rate).toBe(4n);
    const capped = createUtxoAdapter(database.pool, { ...options, testChain: 'testnet4', maxFeeRate: { BITCOIN: 3n } });
    expect((await capped.estimateFee({ network: 'BITCOIN', currency: 'BTC', toAddress: address, amount: unitsOf(1n) })).rate).toBe(3n);
    expect(await chain.hotWalletAddress('BITCOIN')).toMatch(/^tb1q/);
  });
});
