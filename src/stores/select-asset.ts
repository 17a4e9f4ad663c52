import { atom, computed } from 'nanostores';
import { openPage } from '@nanostores/router';
import type { AssetItem } from '../api/wallet.ts';
import type { CoinMeta } from '../lib/currencies.ts';
import { $balances, addCurrencies } from './balances.ts';
import { $activeCoins } from './catalogue.ts';
import { showErrorToast } from './errors.ts';
import { createFlow } from './primitives/flow.ts';
import { $router } from './router.ts';
import { $disabledAssets } from './settings.ts';

export type ChooserPurpose = 'receive' | 'send';

export type ChooserItem = { coin: CoinMeta; amount: string | undefined };

/** SPEC §2 choosers: active crypto assets not hidden on this device, matched by name, ticker or network. */
export function chooserItems(coins: readonly CoinMeta[], items: readonly AssetItem[] | undefined, hidden: readonly string[], search: string): ChooserItem[] {
  const needle = search.trim().toLowerCase();
  return coins
    .filter((coin) => !hidden.includes(coin.currency))
    .filter((coin) => !needle || [coin.name, coin.currency, coin.baseCurrency, coin.blockchain].some((text) => text.toLowerCase().includes(needle)))
    .map((coin) => ({ coin, amount: items?.find((item) => item.currency === coin.currency)?.totalAvailable }));
}

/** /select-asset/receive and /select-asset/send: the search and the asset being opened belong to one visit. */
export const chooserFlow = createFlow(['selectAssetReceive', 'selectAssetSend'], () => {
  const $assetSearch = atom('');
  const $chooserItems = computed([$activeCoins, $balances, $disabledAssets, $assetSearch], (coins, balances, hidden, search) => chooserItems(coins, balances.data, hidden, search));
  const $choosing = atom<string | null>(null);

  /** Opens receive or send for the asset; one not yet in the account is added first, so it has an address. */
  async function chooseAsset(currency: string, purpose: ChooserPurpose): Promise<void> {
    if ($choosing.get()) return;
    $choosing.set(currency);
    try {
      await addCurrencies([currency]);
      openPage($router, purpose === 'receive' ? 'receive' : 'send', { currency });
    } catch (error) {
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    } finally {
      $choosing.set(null);
    }
  }

  return { $assetSearch, $chooserItems, $choosing, chooseAsset };
});

export type ChooserVisit = ReturnType<typeof chooserFlow.open>;
