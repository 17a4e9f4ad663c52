import { atom, computed } from 'nanostores';
import type { AssetItem } from '../api/wallet.ts';
import type { CoinMeta } from '../lib/currencies.ts';
import { $balances, addCurrencies, holds } from './balances.ts';
import { $activeCoins } from './catalogue.ts';
import { showErrorToast } from './errors.ts';
import { createFlow } from './primitives/flow.ts';
import { $disabledAssets } from './settings.ts';

export type ManagedAsset = { coin: CoinMeta; shown: boolean };

/** SPEC §2 /manage-assets: every active crypto asset, on when the account has it and this device does not hide it. */
export function managedAssets(coins: readonly CoinMeta[], items: readonly AssetItem[] | undefined, hidden: readonly string[]): ManagedAsset[] {
  return coins.map((coin) => ({ coin, shown: holds(items, coin.currency) && !hidden.includes(coin.currency) }));
}

/** /manage-assets: the asset being switched on belongs to the visit. */
export const manageAssetsFlow = createFlow(['manageAssets'], () => {
  /** The asset being switched on while the account adds it: its toggle shows the new state at once. */
  const $toggling = atom<string | null>(null);

  const $managedAssets = computed([$activeCoins, $balances, $disabledAssets, $toggling], (coins, balances, hidden, toggling) =>
    managedAssets(coins, balances.data, hidden).map((asset) => (asset.coin.currency === toggling ? { ...asset, shown: true } : asset)),
  );

  /** On: added to the account if missing, and no longer hidden. Off: hidden on this device only; the asset and its money stay. */
  async function setAssetShown(currency: string, shown: boolean): Promise<void> {
    if (!shown) {
      if (!$disabledAssets.get().includes(currency)) $disabledAssets.set([...$disabledAssets.get(), currency]);
      return;
    }
    $toggling.set(currency);
    try {
      await addCurrencies([currency]);
      $disabledAssets.set($disabledAssets.get().filter((c) => c !== currency));
    } catch (error) {
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    } finally {
      $toggling.set(null);
    }
  }

  return { $toggling, $managedAssets, setAssetShown };
});

export type ManageAssetsVisit = ReturnType<typeof manageAssetsFlow.open>;
