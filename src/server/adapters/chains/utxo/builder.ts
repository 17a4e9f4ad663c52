/**
 * Builds and signs the custody's transactions with @scure/btc-signer: P2WPKH inputs on Bitcoin and Litecoin, legacy
 * P2PKH on Dogecoin, BIP125 replaceable (nSequence 0xfffffffd). Coin selection takes the largest outputs first and
 * gives change below dust to the fee rather than make an output worth less than spending it. Signatures are
 * RFC 6979 (deterministic); the adapter also stores each signed transaction, so a reference is signed once.
 */
import { Address, OutScript, p2pkh, p2wpkh, Transaction } from '@scure/btc-signer';
import type { UtxoProfile } from './networks.ts';
import { unitsOf, type Units } from '../../../../lib/money.ts';

/** An output of the custody that can be spent, with the key that spends it. */
export type Coin = { txHash: string; vout: number; amount: Units; keyChain: number; keyIndex: number };
export type Signer = { privateKey: Uint8Array; publicKey: Uint8Array };
export type Payment = { address: string; amount: Units };

/** BIP125: replaceable, and no relative lock-time. */
export const RBF_SEQUENCE = 0xfffffffd;

export function outputScript(profile: UtxoProfile, address: string): Uint8Array {
  return OutScript.encode(Address(profile.params).decode(address));
}

/** The address of a custody key: P2WPKH, or P2PKH on Dogecoin. */
export function keyAddress(profile: UtxoProfile, publicKey: Uint8Array): string {
  const payment = profile.segwit ? p2wpkh(publicKey, profile.params) : p2pkh(publicKey, profile.params);
  if (!payment.address) throw new Error('no address for the key');
  return payment.address;
}

/**
 * Virtual size, rounded up, assuming the largest signatures (72 bytes): P2WPKH input 68 vB, P2PKH 148 B; each
 * output 8 + 1 + its script; 10 bytes of version, counts and lock-time, and 1 more for the segwit marker.
 */
export function virtualSize(profile: UtxoProfile, inputs: number, scriptLengths: readonly number[]): bigint {
  const outputs = scriptLengths.reduce((sum, length) => sum + 9 + length, 0);
  return BigInt((profile.segwit ? 11 : 10) + inputs * (profile.segwit ? 68 : 148) + outputs);
}

export type Selection = { coins: Coin[]; change: Units; fee: Units };

/**
 * Largest outputs first until they pay `amount` (the total of the recipients, one output each) and the fee at `rate` (units per vB); change when it is above dust,
 * else none (its units go to the fee). Undefined when the candidates cannot pay it.
 */
export function selectCoins(profile: UtxoProfile, candidates: readonly Coin[], amount: Units, rate: bigint, recipientScripts: readonly number[], changeScript: number): Selection | undefined {
  const sorted = [...candidates].sort((a, b) => (a.amount === b.amount ? 0 : a.amount > b.amount ? -1 : 1));
  const coins: Coin[] = [];
  let total = 0n;
  for (const coin of sorted) {
    coins.push(coin);
    total += coin.amount;
    const feeWithChange = rate * virtualSize(profile, coins.length, [...recipientScripts, changeScript]);
    const change = total - amount - feeWithChange;
    if (change >= profile.dust) return { coins, change: unitsOf(change), fee: unitsOf(feeWithChange) };
    const feeAlone = rate * virtualSize(profile, coins.length, recipientScripts);
    if (total - amount >= feeAlone) return { coins, change: unitsOf(0n), fee: unitsOf(total - amount) };
  }
  return undefined;
}

/** Signs a transaction spending `coins` (each with its key) to `payments`; its hash is known before it is sent. */
export function signTransaction(profile: UtxoProfile, coins: readonly (Coin & Signer)[], payments: readonly Payment[]): { rawTx: string; txHash: string; vsize: number } {
  const tx = new Transaction({ allowLegacyWitnessUtxo: true, lowR: true });
  for (const coin of coins) {
    const script = profile.segwit ? p2wpkh(coin.publicKey, profile.params).script : p2pkh(coin.publicKey, profile.params).script;
    tx.addInput({ txid: coin.txHash, index: coin.vout, sequence: RBF_SEQUENCE, witnessUtxo: { script, amount: coin.amount } });
  }
  for (const payment of payments) tx.addOutputAddress(payment.address, payment.amount, profile.params);
  coins.forEach((coin, i) => tx.signIdx(coin.privateKey, i));
  tx.finalize();
  return { rawTx: tx.hex, txHash: tx.id, vsize: tx.vsize };
}
