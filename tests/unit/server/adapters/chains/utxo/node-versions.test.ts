import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mnemonicToSeedSync } from '@scure/bip39';
import { HDKey } from '@scure/bip32';
import { hex } from '@scure/base';
import { RawTx } from '@scure/btc-signer';
import { chainAddressing } from '../../../../../../src/server/domain/addresses.ts';
import { checkNode } from '../../../../../../src/server/adapters/chains/utxo/adapter.ts';
import { keyAddress, signTransaction } from '../../../../../../src/server/adapters/chains/utxo/builder.ts';
import { feeRates } from '../../../../../../src/server/adapters/chains/utxo/fees.ts';
import { utxoProfile } from '../../../../../../src/server/adapters/chains/utxo/networks.ts';
import { readBlock } from '../../../../../../src/server/adapters/chains/utxo/reader.ts';
import { createRpc, RpcError } from '../../../../../../src/server/adapters/chains/utxo/rpc.ts';
import { loadFixture, startRecordedNode, type RecordedNode } from './recorded-node.ts';
import { unitsOf } from '../../../../../../src/lib/money.ts';

/**
 * The adapter's RPC layer against recorded answers of the node versions people run but this machine does not have:
 * Dogecoin Core 1.14 before 1.14.7 (a boolean `getblock`, no segwit, no fee estimation) and Bitcoin Core 28.0
 * (testnet4 and signet, v28's field lists). The recorded node refuses parameters of the wrong type as those
 * versions do, so a call in the wrong dialect fails here as it would there.
 */
const seed = mnemonicToSeedSync('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const DOGE_BLOCK = 212;
const BTC_BLOCK = 72140;

const answerOf = (fixture: string, method: string) => loadFixture(fixture).answers.find((a) => a.method === method)?.result as Record<string, unknown>;

describe('Dogecoin Core 1.14.6 (recorded answers)', () => {
  const fixture = 'dogecoin-1.14.6-regtest.json';
  const addressing = chainAddressing('regtest');
  const profile = utxoProfile('DOGECOIN', 'regtest', addressing.utxoParams('DOGECOIN'));
  let node: RecordedNode;
  beforeAll(async () => {
    node = await startRecordedNode(fixture);
  });
  afterEach(() => {
    // No call the adapter made was refused for its types or went unanswered.
    expect(node.refused).toEqual([]);
    expect(node.unexpected).toEqual([]);
  });
  afterAll(async () => node.close());

  it('refuses an integer verbosity as Dogecoin Core does, so the start-up check asks getblock with a boolean', async () => {
    const rpc = createRpc(node.url);
    const hash = await rpc.call<string>('getblockhash', DOGE_BLOCK);
    await expect(rpc.call('getblock', hash, 1)).rejects.toMatchObject({ code: -1, message: 'getblock: JSON value is not a boolean as expected (code -1)' });
    node.refused.length = 0;
    await expect(checkNode(rpc, 'DOGECOIN', profile)).resolves.toBeUndefined();
    expect(node.calls.slice(-4)).toEqual(['getblockchaininfo([])', `getblockhash([${DOGE_BLOCK}])`, `getblock(["${hash}",true])`, expect.stringMatching(/^getrawtransaction\(\["[0-9a-f]{64}",true\]\)$/)]);
  });

  it("reads a block's transactions by hash after getblock <hash> true, addresses from scriptPubKey.addresses", async () => {
    const rpc = createRpc(node.url);
    const hash = await rpc.call<string>('getblockhash', DOGE_BLOCK);
    node.calls.length = 0;
    const block = await readBlock(rpc, hash, profile);
    const deposit = await addressing.derive(seed, 'DOGECOIN', 0);
    expect(block.height).toBe(DOGE_BLOCK);
    expect(block.tx).toHaveLength(2);
    const payment = block.tx[1];
    expect(payment?.vout[0]).toMatchObject({ n: 0, value: '25.00000000', scriptPubKey: { addresses: [deposit] } });
    expect(node.calls.filter((c) => c.startsWith('getblock('))).toEqual([`getblock(["${hash}",true])`]);
    expect(node.calls.filter((c) => c.startsWith('getrawtransaction('))).toEqual(block.tx.map((t) => `getrawtransaction(["${t.txid}",true])`));
  });

  it('takes no estimate from a node before 1.14.7 (feerate -1, or a number it did not really estimate): FEE_RATE_FALLBACK over the relay minimum', async () => {
    const rpc = createRpc(node.url);
    const policy = { fallback: profile.defaultFallbackRate, ceiling: profile.defaultMaxFeeRate, estimatesFromVersion: profile.estimatesFromVersion };
    // relayfee 0.001 DOGE/kB = 100 koinu/vB, incrementalfee 0.0001 = 10.
    expect(await feeRates(rpc, policy)).toEqual({ rate: 1000n, wanted: 1000n, floor: 100n, incremental: 10n, estimated: false, ceiling: 100_000n });
    node.answer('estimatesmartfee', [6], { result: { feerate: 0.02, blocks: 2 } });
    expect((await feeRates(rpc, policy)).estimated).toBe(false);
    // Dogecoin Core 1.14.7 ported fee estimation: its estimate is used.
    node.answer('getnetworkinfo', [], { result: { ...answerOf(fixture, 'getnetworkinfo'), version: 1140700, subversion: '/Shibetoshi:1.14.7/' } });
    expect(await feeRates(rpc, policy)).toMatchObject({ rate: 2000n, estimated: true });
  });

  it('derives legacy P2PKH addresses and signs transactions without a witness (Dogecoin has no segwit)', async () => {
    const deposit = await addressing.derive(seed, 'DOGECOIN', 0);
    expect(deposit).toMatch(/^[mn][1-9A-HJ-NP-Za-km-z]{25,34}$/);
    const key = HDKey.fromMasterSeed(seed).derive(addressing.path('DOGECOIN', 0));
    if (!key.publicKey || !key.privateKey) throw new Error('no key');
    expect(keyAddress(profile, key.publicKey)).toBe(deposit);
    expect(utxoProfile('DOGECOIN', 'mainnet', chainAddressing('mainnet').utxoParams('DOGECOIN')).segwit).toBe(false);
    expect(keyAddress(utxoProfile('DOGECOIN', 'mainnet', chainAddressing('mainnet').utxoParams('DOGECOIN')), key.publicKey)).toMatch(/^D/);
    const coin = { txHash: 'ab'.repeat(32), vout: 0, amount: unitsOf(5_000_000_000n), keyChain: 0, keyIndex: 0, privateKey: key.privateKey, publicKey: key.publicKey };
    const signed = signTransaction(profile, [coin], [{ address: deposit, amount: unitsOf(4_000_000_000n) }]);
    const decoded = RawTx.decode(hex.decode(signed.rawTx));
    expect(decoded.segwitFlag).toBe(false);
    expect(signed.vsize).toBe(signed.rawTx.length / 2);
  });
});

describe('Bitcoin Core 28.0 (recorded answers)', () => {
  const fixture = 'bitcoin-core-28.0-testnet4.json';
  const params = chainAddressing('testnet').utxoParams('BITCOIN');
  let node: RecordedNode;
  beforeAll(async () => {
    node = await startRecordedNode(fixture);
  });
  afterEach(() => {
    expect(node.refused).toEqual([]);
    expect(node.unexpected).toEqual([]);
  });
  afterAll(async () => node.close());

  it('accepts a testnet4 node under CHAIN_ENV=testnet4 and a signet node under CHAIN_ENV=signet, and says which chain is wrong otherwise', async () => {
    const rpc = createRpc(node.url);
    await expect(checkNode(rpc, 'BITCOIN', utxoProfile('BITCOIN', 'testnet', params, 'testnet4'))).resolves.toBeUndefined();
    expect(node.calls).toContain(`getblock(["${await rpc.call<string>('getblockhash', BTC_BLOCK)}",1])`);
    await expect(checkNode(rpc, 'BITCOIN', utxoProfile('BITCOIN', 'testnet', params, 'test'))).rejects.toThrow('the BITCOIN node is on chain "testnet4" but CHAIN_ENV wants "test"');
    await expect(checkNode(rpc, 'BITCOIN', utxoProfile('BITCOIN', 'mainnet', chainAddressing('mainnet').utxoParams('BITCOIN')))).rejects.toThrow(/wants "main"/);
    // The same node on signet (Bitcoin Core reports "signet"); testnet4 and signet are Bitcoin's: Litecoin stays on "test".
    node.answer('getblockchaininfo', [], { result: { ...answerOf(fixture, 'getblockchaininfo'), chain: 'signet' } });
    await expect(checkNode(rpc, 'BITCOIN', utxoProfile('BITCOIN', 'testnet', params, 'signet'))).resolves.toBeUndefined();
    await expect(checkNode(rpc, 'BITCOIN', utxoProfile('BITCOIN', 'testnet', params, 'testnet4'))).rejects.toThrow(/on chain "signet" but CHAIN_ENV wants "testnet4"/);
    expect(utxoProfile('LITECOIN', 'testnet', chainAddressing('testnet').utxoParams('LITECOIN'), 'signet').nodeChains).toEqual(['test']);
  });

  it('reads a block with its transactions in one getblock verbosity 2, addresses from scriptPubKey.address', async () => {
    const rpc = createRpc(node.url);
    const hash = await rpc.call<string>('getblockhash', BTC_BLOCK);
    node.calls.length = 0;
    const block = await readBlock(rpc, hash, utxoProfile('BITCOIN', 'testnet', params, 'testnet4'));
    expect(block.tx.map((t) => t.txid)).toEqual(answerOf(fixture, 'getblock').tx);
    expect(block.tx[1]?.vout[0]).toMatchObject({ value: '0.01500000', scriptPubKey: { address: 'tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl' } });
    expect(node.calls.filter((c) => c.startsWith('getblock(') || c.startsWith('getrawtransaction('))).toEqual([`getblock(["${hash}",2])`]);
  });

  it("estimates from estimatesmartfee's feerate, falls back on its errors, and never passes MAX_FEE_RATE", async () => {
    const rpc = createRpc(node.url);
    // 0.00003012 BTC/kvB → 4 sat/vB (rounded up); relayfee and incrementalfee 0.00001 → 1.
    expect(await feeRates(rpc, { fallback: 20n, ceiling: 500n })).toEqual({ rate: 4n, wanted: 4n, floor: 1n, incremental: 1n, estimated: true, ceiling: 500n });
    expect(await feeRates(rpc, { fallback: 20n, ceiling: 3n })).toMatchObject({ rate: 3n, wanted: 4n });
    node.answer('estimatesmartfee', [6], { result: { errors: ['Insufficient data or no feerate found'], blocks: 0 } });
    expect(await feeRates(rpc, { fallback: 20n, ceiling: 500n })).toMatchObject({ rate: 20n, estimated: false });
  });

  it('answers a wrongly typed argument as Bitcoin Core 28 does', async () => {
    const rpc = createRpc(node.url);
    const refused = await rpc.call('estimatesmartfee', '6').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RpcError);
    expect(refused).toMatchObject({ code: -3 });
    node.refused.length = 0;
  });
});
