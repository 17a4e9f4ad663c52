/**
 * The custody's TON wallets: one standard wallet v4R2 per derivation index under the custody seed (SLIP-10 ed25519
 * on m/44'/607'/index', as domain/addresses.ts derives deposit addresses), the hot wallet at HOT_WALLET_INDEX.
 */
import type { KeyPair } from '@ton/crypto';
import type { WalletKeys } from '../../keys/port.ts';
import { WalletContractV4 } from '@ton/ton';
import { HOT_WALLET_INDEX } from '../devnet-signer.ts';

export { HOT_WALLET_INDEX };

export type TonWallet = { index: number; contract: WalletContractV4; keys: KeyPair; raw: string };

export function createTonWallets(source: WalletKeys) {
  const cache = new Map<number, Promise<TonWallet>>();
  return (index: number): Promise<TonWallet> => {
    let wallet = cache.get(index);
    if (!wallet) {
      wallet = (async () => {
        const keys = await source.ed25519(index);
        const contract = WalletContractV4.create({ workchain: 0, publicKey: keys.publicKey });
        return { index, contract, keys, raw: contract.address.toRawString() };
      })();
      // Keep the hot wallet and a bounded number of deposit wallets: sweeps touch each address rarely.
      if (cache.size > 1000) cache.clear();
      cache.set(index, wallet);
    }
    return wallet;
  };
}
