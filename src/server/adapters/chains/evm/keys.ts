/**
 * The custody's Ethereum keys: deposit address `index` on the domain's path (m/44'/60'/0'/0/index) and the hot
 * wallet at HOT_WALLET_INDEX, the same key the devnet's hot wallet uses on ETHEREUM. Addresses come from public keys
 * (every process); the accounts that sign only where the keys have their private halves (the signer).
 */
import { toHex, type Address } from 'viem';
import { privateKeyToAccount, publicKeyToAddress, type PrivateKeyAccount } from 'viem/accounts';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import type { WalletKeys } from '../../keys/port.ts';
import { seedKeys } from '../../keys/wallet-keys.ts';
import { HOT_WALLET_INDEX } from '../devnet-signer.ts';
import type { ChainAddressing } from '../port.ts';

export type EvmKeys = {
  /** The signer of derivation `index` (a deposit address); throws outside the signer. */
  at(index: number): PrivateKeyAccount;
  hot(): PrivateKeyAccount;
  /** The address of derivation `index`, from its public key. */
  addressAt(index: number): Address;
  hotAddress(): Address;
};

/** `source`: the custody keys, or every key of a bare seed (tests). */
export function evmKeys(source: WalletKeys | Uint8Array, addresses: ChainAddressing): EvmKeys {
  const keys = source instanceof Uint8Array ? seedKeys(source) : source;
  const accounts = new Map<number, PrivateKeyAccount>();
  const known = new Map<number, Address>();
  const at = (index: number) => {
    let account = accounts.get(index);
    if (!account) {
      const key = keys.derive(addresses.path('ETHEREUM', index)).privateKey;
      if (!key) throw new Error(`no private key at ETHEREUM derivation ${index}: the signer signs`);
      account = privateKeyToAccount(toHex(key));
      accounts.set(index, account);
    }
    return account;
  };
  const addressAt = (index: number) => {
    let address = known.get(index);
    if (!address) {
      const publicKey = keys.derive(addresses.path('ETHEREUM', index)).publicKey;
      if (!publicKey) throw new Error(`derivation ${index} gave no public key`);
      address = publicKeyToAddress(toHex(secp256k1.Point.fromBytes(publicKey).toBytes(false)));
      known.set(index, address);
    }
    return address;
  };
  return { at, hot: () => at(HOT_WALLET_INDEX), addressAt, hotAddress: () => addressAt(HOT_WALLET_INDEX) };
}
