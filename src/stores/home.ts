import { atom, computed } from 'nanostores';
import { openPage } from '@nanostores/router';
import type { AssetItem, RatesMap } from '../api/wallet.ts';
import { addDecimals, compareDecimals } from '../lib/amount.ts';
import type { CoinMeta } from '../lib/currencies.ts';
import { $balances, addCurrencies, holds } from './balances.ts';
import { $catalogue, $coins, coinMap } from './catalogue.ts';
import { showErrorToast } from './errors.ts';
import { $rates, fiatValue, rateOf } from './rates.ts';
import { platform } from '../platform/platform.ts';
import { $router } from './router.ts';
import { $disabledAssets, $hideLinkBanner, $protectWalletDismissed, $selectedCurrency } from './settings.ts';
import { $profile } from './user.ts';
import { requestSwapPair } from './swap-selection.ts';

/** SPEC §2, §9: what 'add most common assets' adds. */
export const COMMON_ASSETS = ['BTC', 'ETH', 'USDT_TRX'] as const;

/** SPEC §2 quick swap path: holding both preselects this pair. */
export const QUICK_SWAP_PAIR = { from: 'BTC', to: 'USDT_TRX' } as const;

export type AssetRow = {
  currency: string;
  coin: CoinMeta;
  /** totalAvailable, exact. */
  amount: string;
  onHold: string;
  /** Value in the chosen fiat, exact to 8 decimals; undefined without a rate. */
  fiatValue: string | undefined;
  depositAddress: string | null;
};

/** The crypto assets a list shows: known to the catalogue and not hidden on this device, by fiat value descending. */
export function assetRows(items: readonly AssetItem[], coins: Record<string, CoinMeta>, rates: RatesMap | undefined, fiat: string, hidden: readonly string[] = []): AssetRow[] {
  const order = Object.keys(coins);
  const rows: AssetRow[] = [];
  for (const item of items) {
    const coin = coins[item.currency];
    if (!coin || !item.isCrypto || hidden.includes(item.currency)) continue;
    rows.push({
      currency: item.currency,
      coin,
      amount: item.totalAvailable,
      onHold: item.onHold,
      fiatValue: fiatValue(item.totalAvailable, rateOf(rates, item.currency, fiat)),
      depositAddress: item.depositAddress,
    });
  }
  // Equal values (a new account's zeros) keep the catalogue's order, so the list does not jump between polls.
  return rows.sort((a, b) => compareDecimals(b.fiatValue ?? '0', a.fiatValue ?? '0') || order.indexOf(a.currency) - order.indexOf(b.currency));
}

/** Everything the account holds in the chosen fiat, hidden assets included: hiding is a view, not a loss. */
export function totalFiat(items: readonly AssetItem[], coins: Record<string, CoinMeta>, rates: RatesMap | undefined, fiat: string): string {
  return assetRows(items, coins, rates, fiat).reduce((sum, row) => addDecimals(sum, row.fiatValue ?? '0'), '0');
}

/**
 * What the assets hidden on this device hold (the total includes them): undefined when they hold nothing, else their
 * value in the chosen fiat (undefined inside when a held one has no rate yet).
 */
export function hiddenHoldings(items: readonly AssetItem[], coins: Record<string, CoinMeta>, rates: RatesMap | undefined, fiat: string, hidden: readonly string[]): { value: string | undefined } | undefined {
  const held = assetRows(items, coins, rates, fiat).filter((row) => hidden.includes(row.currency) && compareDecimals(row.amount, '0') > 0);
  if (held.length === 0) return undefined;
  if (held.some((row) => row.fiatValue === undefined)) return { value: undefined };
  const value = held.reduce((sum, row) => addDecimals(sum, row.fiatValue ?? '0'), '0');
  return { value };
}

export type HomeView = 'loading' | 'error' | 'empty' | 'protect' | 'wallet';

/** SPEC §2: first-time empty, the protect-your-wallet prompt, or the wallet. */
export function homeViewOf(input: { items: readonly AssetItem[] | undefined; failed: boolean; pinCodeActive: boolean | undefined; protectDismissed: boolean }): HomeView {
  if (!input.items) return input.failed ? 'error' : 'loading';
  if (input.items.length === 0) return 'empty';
  // While the profile is unknown the prompt waits, rather than flashing for a user who has a passcode.
  if (input.pinCodeActive === false && !input.protectDismissed) return 'protect';
  return 'wallet';
}

/** Profile facts Home needs (GET /user); undefined until it is known. */
export const $profileFacts = computed($profile, (profile) => ({ pinCodeActive: profile.data?.pinCodeActive, tgAuth: profile.data?.tgAuth }));

export const $homeView = computed([$balances, $profileFacts, $protectWalletDismissed], (balances, profile, dismissed) =>
  homeViewOf({ items: balances.data, failed: balances.error !== undefined, pinCodeActive: profile.pinCodeActive, protectDismissed: dismissed }),
);

export const $assetRows = computed([$balances, $coins, $rates, $selectedCurrency, $disabledAssets], (balances, coins, rates, fiat, hidden) =>
  assetRows(balances.data ?? [], coins, rates.data, fiat, hidden),
);

/** The total, or undefined until the rates are known (a total without them would be a wrong number). */
export const $totalFiat = computed([$balances, $coins, $rates, $selectedCurrency], (balances, coins, rates, fiat) =>
  balances.data && rates.data ? totalFiat(balances.data, coins, rates.data, fiat) : undefined,
);

export const $hiddenHoldings = computed([$balances, $coins, $rates, $selectedCurrency, $disabledAssets], (balances, coins, rates, fiat, hidden) =>
  balances.data && hidden.length > 0 ? hiddenHoldings(balances.data, coins, rates.data, fiat, hidden) : undefined,
);

export const $addingCommonAssets = atom(false);

/** The common assets the catalogue has active: a coin whose network is off (no chain adapter) is not offered. */
function offeredCommonAssets(crypto: readonly CoinMeta[]): string[] {
  const coins = coinMap(crypto);
  return COMMON_ASSETS.filter((currency) => coins[currency]?.active === true);
}

/** Undefined until the catalogue is known; empty when none of the common assets is on offer. */
export const $commonAssetsOffered = computed($catalogue, (catalogue) => (catalogue.data ? offeredCommonAssets(catalogue.data.crypto) : undefined));

/** SPEC §2 'add most common assets' (those on offer, once the catalogue is known). */
export async function addCommonAssets(): Promise<void> {
  if ($addingCommonAssets.get()) return;
  const offered = $commonAssetsOffered.get() ?? [...COMMON_ASSETS];
  if (offered.length === 0) return;
  $addingCommonAssets.set(true);
  try {
    await addCurrencies(offered);
  } catch (error) {
    showErrorToast(error, { fallback: 'common_something_went_wrong' });
  } finally {
    $addingCommonAssets.set(false);
  }
}

export function dismissProtectPrompt(): void {
  $protectWalletDismissed.set(true);
}

/** Home's Swap button: straight to the order with BTC → USDT_TRX when both are held (SPEC §2), else the chooser. */
export function openSwapFromHome(): void {
  const items = $balances.get().data;
  if (holds(items, QUICK_SWAP_PAIR.from) && holds(items, QUICK_SWAP_PAIR.to)) {
    requestSwapPair(QUICK_SWAP_PAIR);
    openPage($router, 'swapOrder');
  } else {
    openPage($router, 'swap');
  }
}

let linkMessenger: () => void | Promise<void> = () => {};

/** For the Telegram flow: what the link banner's action does (POST /user/tg/code and open the bot link). */
export function setMessengerLinker(handler: () => void | Promise<void>): void {
  linkMessenger = handler;
}

export function linkMessengerAccount(): void {
  void linkMessenger();
}

/** SPEC §2: outside the messenger, not linked, not declined for good. */
export function showLinkBanner(input: { insideMessenger: boolean; tgAuth: boolean | undefined; hidden: boolean }): boolean {
  return !input.insideMessenger && input.tgAuth === false && !input.hidden;
}

export const $showLinkBanner = computed([$profileFacts, $hideLinkBanner], (profile, hidden) =>
  showLinkBanner({ insideMessenger: platform().kind === 'tg', tgAuth: profile.tgAuth, hidden }),
);

/** 'Don't show again': kept on the device for good. */
export function hideLinkBannerForGood(): void {
  $hideLinkBanner.set(true);
}
