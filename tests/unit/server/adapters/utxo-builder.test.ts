import { describe, expect, it } from 'vitest';
import * as bitcoinjs from 'bitcoinjs-lib';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { keyAddress, RBF_SEQUENCE, selectCoins, signTransaction, virtualSize, type Coin } from '../../../../src/server/adapters/chains/utxo/builder.ts';
import { perVbyte } from '../../../../src/server/adapters/chains/utxo/fees.ts';
import { changePath, utxoProfile } from '../../../../src/server/adapters/chains/utxo/networks.ts';
import { chainAddressing } from '../../../../src/server/domain/addresses.ts';
import { readBlock } from '../../../../src/server/adapters/chains/utxo/reader.ts';
import { coinsToUnits, RpcError, type Rpc } from '../../../../src/server/adapters/chains/utxo/rpc.ts';
import { unitsOf } from '../../../../src/lib/money.ts';

/**
 * The UTXO adapter's transaction builder without a node: a Dogecoin P2PKH transaction that bitcoinjs-lib decodes
 * with Dogecoin's own parameters, a Litecoin P2WPKH one, coin selection that avoids dust change, exact amounts.
 */
const DOGECOIN = { messagePrefix: '\x19Dogecoin Signed Message:\n', bech32: 'doge', bip32: { public: 0x02facafd, private: 0x02fac398 }, pubKeyHash: 0x1e, scriptHash: 0x16, wif: 0x9e };
const master = HDKey.fromMasterSeed(mnemonicToSeedSync('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'));
const keyAt = (path: string) => {
  const key = master.derive(path);
  if (!key.privateKey || !key.publicKey) throw new Error('no key');
  return { privateKey: key.privateKey, publicKey: key.publicKey };
};
const coin = (amount: bigint, vout = 0): Coin => ({ txHash: 'ab'.repeat(32), vout, amount: unitsOf(amount), keyChain: 0, keyIndex: 0 });

describe('the UTXO transaction builder', () => {
  it('signs a Dogecoin P2PKH transaction that bitcoinjs-lib decodes with Dogecoin parameters, amounts exact', () => {
    const profile = utxoProfile('DOGECOIN', 'mainnet', chainAddressing('mainnet').utxoParams('DOGECOIN'));
    const key = keyAt("m/44'/3'/0'/0/0");
    const change = keyAt(changePath("m/44'/3'/0'/0/0", 7));
    const from = keyAddress(profile, key.publicKey);
    expect(from).toMatch(/^D/);
    const recipient = bitcoinjs.payments.p2pkh({ pubkey: Buffer.from(keyAt("m/44'/3'/0'/0/5").publicKey), network: DOGECOIN }).address ?? '';
    const changeAddress = keyAddress(profile, change.publicKey);
    const signed = signTransaction(profile, [{ ...coin(50_000_000_000n), ...key }], [
      { address: recipient, amount: unitsOf(12_345_678_901n) },
      { address: changeAddress, amount: unitsOf(37_000_000_000n) },
    ]);
    const tx = bitcoinjs.Transaction.fromHex(signed.rawTx);
    expect(tx.getId()).toBe(signed.txHash);
    expect(tx.hasWitnesses()).toBe(false);
    expect(tx.ins).toHaveLength(1);
    expect(tx.ins[0]?.sequence).toBe(RBF_SEQUENCE);
    expect(Buffer.from(tx.ins[0]?.hash ?? []).reverse().toString('hex')).toBe('ab'.repeat(32));
    expect(tx.outs.map((o) => [bitcoinjs.address.fromOutputScript(o.script, DOGECOIN), BigInt(o.value)])).toEqual([
      [recipient, 12_345_678_901n],
      [changeAddress, 37_000_000_000n],
    ]);
    // The input's script is a signature and the key that hashes to the spent P2PKH output.
    const input = bitcoinjs.payments.p2pkh({ input: tx.ins[0]?.script, network: DOGECOIN });
    expect(input.address).toBe(from);
    expect(signed.vsize).toBeLessThanOrEqual(Number(virtualSize(profile, 1, [25, 25])));
  });

  it('signs a Litecoin P2WPKH transaction with witnesses, the same one each time', () => {
    const profile = utxoProfile('LITECOIN', 'regtest', chainAddressing('regtest').utxoParams('LITECOIN'));
    const key = keyAt("m/84'/1'/0'/0/0");
    const to = keyAddress(profile, keyAt("m/84'/1'/0'/0/1").publicKey);
    expect(to).toMatch(/^rltc1q/);
    const spend = () => signTransaction(profile, [{ ...coin(100_000_000n), ...key }], [{ address: to, amount: unitsOf(99_990_000n) }]);
    const signed = spend();
    expect(spend()).toEqual(signed);
    const tx = bitcoinjs.Transaction.fromHex(signed.rawTx);
    expect(tx.hasWitnesses()).toBe(true);
    expect(tx.outs.map((o) => BigInt(o.value))).toEqual([99_990_000n]);
    expect(BigInt(signed.vsize)).toBeLessThanOrEqual(virtualSize(profile, 1, [22]));
  });

  it('selects the largest outputs first and gives change below dust to the fee', () => {
    const profile = utxoProfile('LITECOIN', 'mainnet', chainAddressing('mainnet').utxoParams('LITECOIN'));
    const coins = [coin(30_000n, 0), coin(1_000_000n, 1), coin(200_000n, 2)];
    const withChange = selectCoins(profile, coins, unitsOf(500_000n), 10n, [22], 22);
    expect(withChange?.coins.map((c) => c.vout)).toEqual([1]);
    expect(withChange?.fee).toBe(10n * virtualSize(profile, 1, [22, 22]));
    expect(withChange?.change).toBe(1_000_000n - 500_000n - (withChange?.fee ?? 0n));
    // What is left after the fee would be dust: no change output, the rest pays the fee.
    const noChange = selectCoins(profile, coins, unitsOf(1_000_000n - 1_100n - 5_000n), 10n, [22], 22);
    expect(noChange).toMatchObject({ change: 0n, fee: 6_100n });
    expect(selectCoins(profile, coins, unitsOf(2_000_000n), 10n, [22], 22)).toBeUndefined();
  });

  it('sizes the fee of a batch for every recipient', () => {
    const profile = utxoProfile('LITECOIN', 'mainnet', chainAddressing('mainnet').utxoParams('LITECOIN'));
    const batch = selectCoins(profile, [coin(1_000_000n, 0)], unitsOf(400_000n), 10n, [22, 22, 34], 22);
    expect(batch?.fee).toBe(10n * virtualSize(profile, 1, [22, 22, 34, 22]));
    expect(batch?.change).toBe(600_000n - (batch?.fee ?? 0n));
  });

  it('reads the node amounts exactly and rates per vbyte rounded up', () => {
    expect(coinsToUnits('20999999.99999999')).toBe(2_099_999_999_999_999n);
    expect(coinsToUnits('0.00000001')).toBe(1n);
    expect(coinsToUnits('90000000000.5')).toBe(9_000_000_000_050_000_000n);
    expect(() => coinsToUnits('1e-5')).toThrow();
    expect(perVbyte('0.00001000')).toBe(1n);
    expect(perVbyte('0.00001001')).toBe(2n);
    expect(changePath("m/84'/2'/0'/0/9", 3)).toBe("m/84'/2'/0'/1/3");
  });
});

describe('reading a block from a node without getblock verbosity 2 (Dogecoin Core 1.14)', () => {
  it('falls back to transaction ids and reads each transaction by hash, in one batch', async () => {
    const tx = { txid: 'cd'.repeat(32), vin: [{ coinbase: '00' }], vout: [{ n: 0, value: '1.5', scriptPubKey: { addresses: ['nX'] } }] };
    const calls: string[] = [];
    const rpc: Rpc = {
      async call<T>(method: string, ...params: unknown[]): Promise<T> {
        calls.push(`${method}(${params.map(String).join(',')})`);
        if (params[1] === 2) throw new RpcError('getblock', -1, 'JSON value is not a boolean as expected');
        return { hash: 'ef'.repeat(32), height: 7, tx: [tx.txid] } as T;
      },
      async batch<T>(batch: readonly { method: string; params?: unknown[] }[]): Promise<(T | RpcError)[]> {
        calls.push(`batch(${batch.map((c) => c.method).join(',')})`);
        return batch.map(() => tx as T);
      },
    };
    expect(await readBlock(rpc, 'ef'.repeat(32))).toEqual({ hash: 'ef'.repeat(32), height: 7, tx: [tx] });
    expect(calls).toEqual([`getblock(${'ef'.repeat(32)},2)`, `getblock(${'ef'.repeat(32)},true)`, 'batch(getrawtransaction)']);
  });
});
