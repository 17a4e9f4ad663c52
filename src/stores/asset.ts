import { computed, onMount } from 'nanostores';
import { shortenAddress } from '../lib/address.ts';
import { formatTime, groupByDay } from '../lib/format.ts';
import type { Transaction } from '../api/wallet.ts';
import { platform } from '../platform/platform.ts';
import { $balances, addCurrencies, refreshBalances } from './balances.ts';
import { showErrorToast } from './errors.ts';
import { $accountId, $fiatSymbol } from './account.ts';
import { $catalogue, $coins } from './catalogue.ts';
import { $t } from './i18n.ts';
import { $rates, fiatValue, rateOf } from './rates.ts';
import { $router } from './router.ts';
import { $locale, $selectedCurrency } from './settings.ts';
import { showToast } from './toasts.ts';
import { detailQuery, detailRows, historyQuery, movementOf, titleKeyOf, type DetailArgs, type HistoryArgs } from './transactions.ts';

/** The currency of the asset routes (/home/asset/:currency/...), upper-cased as the catalogue keys it. */
export const $assetCurrency = computed($router, (page) => (page && 'currency' in page.params && page.params.currency ? page.params.currency.toUpperCase() : null));

/** The asset page's figures: SPEC §2 balance (available, on hold) and deposit address. */
export const $asset = computed([$assetCurrency, $balances, $catalogue, $coins, $rates, $selectedCurrency, $fiatSymbol], (currency, balances, catalogue, coins, rates, fiat, symbol) => {
  if (!currency) return undefined;
  const coin = coins[currency];
  const item = balances.data?.find((entry) => entry.currency === currency);
  const address = item?.depositAddress ?? null;
  return {
    currency,
    coin,
    held: item !== undefined,
    // Until both the balances and the catalogue answer, 'not held' and 'unknown coin' would be guesses.
    loading: (!balances.data && balances.error === undefined) || (!catalogue.data && catalogue.error === undefined),
    available: item?.totalAvailable ?? '0',
    onHold: item?.onHold ?? '0',
    fiatValue: fiatValue(item?.totalAvailable ?? '0', rateOf(rates.data, currency, fiat)),
    fiatSymbol: symbol,
    address,
    shortAddress: address ? shortenAddress(address) : null,
  };
});

const $historyArgs = computed([$accountId, $assetCurrency], (account, currency): HistoryArgs | null => (account && currency ? { account, currency } : null));

export const $history = historyQuery.watch($historyArgs);

// A deposit appears and confirms without a reload: the history is read again each time the balances poll answers;
// and an item that changed state (a purchase paid while the user was at the provider) reads the balances again, so
// the two never disagree until the next poll.
onMount($history, () => {
  let last = $balances.get().data;
  let states: string | undefined;
  const stopBalances = $balances.listen((balances) => {
    const args = $historyArgs.get();
    if (!balances.data || balances.data === last || !args) return;
    last = balances.data;
    void historyQuery.refetch(args);
  });
  const stopHistory = $history.listen((history) => {
    if (!history.data) return;
    const now = history.data.items.map((item) => `${item.id}:${item.state}`).join();
    if (states !== undefined && now !== states) void refreshBalances();
    states = now;
  });
  return () => {
    stopBalances();
    stopHistory();
  };
});

/**
 * The asset page's figures: the balance beside the history comes from the same read as the history (issue 33 item 1:
 * back from the card page, '+98.37 USDC' never shows over a balance of 0), the balances' own until the history answered.
 */
export const $assetPage = computed([$asset, $history, $rates, $selectedCurrency], (asset, history, rates, fiat) => {
  const balance = history.data?.balance;
  if (!asset || !balance || balance.currency !== asset.currency) return asset;
  return { ...asset, available: balance.totalAvailable, onHold: balance.onHold, fiatValue: fiatValue(balance.totalAvailable, rateOf(rates.data, asset.currency, fiat)) };
});

export type HistoryRow = {
  id: string;
  type: string;
  title: string;
  sign: '+' | '-' | '';
  amount: string;
  currency: string;
  time: string;
  state: Transaction['state'];
  /** Pending and waiting for an operator's review: the badge says so. */
  underReview: boolean;
  /** Pending and waiting for the wallet's sending funds: the row says why and how long it usually takes. */
  waitingForFunds: boolean;
};

/** The history grouped by day with 'Today' and 'Yesterday' (SPEC §9), each item titled by SPEC §4. */
export const $historyGroups = computed([$history, $assetCurrency, $locale, $t], (history, currency, locale, t) => {
  const items = history.data?.items ?? [];
  return groupByDay(items, (tx) => tx.createdDate, platform().now(), locale).map(({ day, items: group }) => ({
    key: day.key,
    label: day.kind === 'today' ? t('asset_today') : day.kind === 'yesterday' ? t('asset_yesterday') : day.label,
    rows: group.map((tx): HistoryRow => {
      const movement = movementOf(tx, currency ?? tx.currency);
      return { id: tx.id, type: tx.transactionType, title: t(titleKeyOf(tx)), ...movement, time: formatTime(tx.createdDate, locale), state: tx.state, underReview: tx.underReview === true, waitingForFunds: tx.state === 'IN_PROGRESS' && tx.pendingReason === 'WAITING_FOR_FUNDS' };
    }),
  }));
});

/** Copies the deposit address with the screen's clipboard writer and says so (SPEC §2 toast 'address copied'). */
export async function copyAddress(address: string, write: (text: string) => Promise<void>): Promise<void> {
  try {
    await write(address);
    showToast($t.get()('asset_address_copied'));
  } catch {
    showToast($t.get()('common_something_went_wrong'), 'error');
  }
}

const $detailArgs = computed([$accountId, $router], (account, page): DetailArgs | null =>
  account && page?.route === 'transaction' ? { account, id: page.params.id, type: page.params.type } : null,
);

export const $transaction = detailQuery.watch($detailArgs);

// A pending transaction's details follow it to completion, on the balances' clock.
onMount($transaction, () =>
  $balances.listen(() => {
    const args = $detailArgs.get();
    if (args && $transaction.get().data?.state === 'IN_PROGRESS' && !$transaction.get().loading) void detailQuery.refetch(args);
  }),
);

// The heading is the side of the asset the details were opened from: a swap's '+135.79 USDT' row opens '+135.79 USDT'.
export const $transactionDetail = computed([$transaction, $assetCurrency, $coins, $locale, $t], (tx, currency, coins, locale, t) =>
  tx.data ? { title: t(titleKeyOf(tx.data)), state: tx.data.state, movement: movementOf(tx.data, currency ?? tx.data.currency), rows: detailRows(tx.data, coins, locale, t) } : undefined,
);

/** Receive needs an address: an asset opened here that the account lacks is added first (once balances are known). */
export async function ensureAssetHeld(): Promise<void> {
  const asset = $asset.get();
  if (!asset || asset.loading || asset.held || !asset.coin) return;
  try {
    await addCurrencies([asset.currency]);
  } catch (error) {
    showErrorToast(error, { fallback: 'common_something_went_wrong' });
  }
}
