/**
 * The custody's Ethereum keys from its HD seed: deposit address `index` on the domain's path (m/44'/60'/0'/0/index)
 * and the hot wallet at HOT_WALLET_INDEX, the same key the devnet's hot wallet uses on ETHEREUM.
 */
import { HDKey } from '@scure/bip32';
import { toHex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { HOT_WALLET_INDEX } from '../devnet-signer.ts';
import type { ChainAddressing } from '../port.ts';

export type EvmKeys = {
  /** The signer of derivation `index` (a deposit address). */
  at(index: number): PrivateKeyAccount;
  hot(): PrivateKeyAccount;
};

export function evmKeys(seed: Uint8Array, addresses: ChainAddressing): EvmKeys {
  const root = HDKey.fromMasterSeed(seed);
  const cache = new Map<number, PrivateKeyAccount>();
  const at = (index: number) => {
    let account = cache.get(index);
    if (!account) {
      const key = root.derive(addresses.path('ETHEREUM', index)).privateKey;
      if (!key) throw new Error(`derivation ${index} gave no private key`);
      account = privateKeyToAccount(toHex(key));
      cache.set(index, account);
    }
    return account;
  };
  return { at, hot: () => at(HOT_WALLET_INDEX) };
}
