/**
 * The custody's TRON keys: derivation `index` under the custody seed on the custody's own path (BIP44 coin 195,
 * `ChainAddressing.path`): the user's deposit addresses 0, 1, 2… and the hot wallet at HOT_WALLET_INDEX, as the
 * devnet's signer derives it, so the hot wallet keeps its address when TRON moves from the devnet to a node.
 */
import type { WalletKeys } from '../../keys/port.ts';
import type { ChainAddressing } from '../port.ts';
import { HOT_WALLET_INDEX } from '../devnet-signer.ts';

/** `privateKey` throws outside the signer (public keys only). */
export type TronKey = { address: string; readonly privateKey: Uint8Array };

export type TronKeys = { hotWallet(): Promise<TronKey>; at(index: number): Promise<TronKey> };

export function createTronKeys(keys: WalletKeys, addresses: ChainAddressing): TronKeys {
  const cache = new Map<number, Promise<TronKey>>();
  const at = (index: number): Promise<TronKey> => {
    let key = cache.get(index);
    if (!key) {
      key = (async () => {
        const node = keys.derive(addresses.path('TRON', index));
        return {
          address: await addresses.derive(keys, 'TRON', index),
          get privateKey(): Uint8Array {
            if (!node.privateKey) throw new Error(`no private key at TRON derivation ${index}: the signer signs`);
            return node.privateKey;
          },
        };
      })();
      cache.set(index, key);
    }
    return key;
  };
  return { hotWallet: () => at(HOT_WALLET_INDEX), at };
}
