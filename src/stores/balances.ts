import { addAccountCurrencies, addAccountCurrency, getAssets, type AssetItem } from '../api/wallet.ts';
import { createQuery } from './query.ts';
import { $accountId } from './account.ts';

/**
 * SPEC §7: balances are the one read that polls, every 10 s, while a screen shows them; they are also read again
 * when the page comes back into view (back from the card provider, the tab or window refocused: issue 19 item 16).
 */
export const BALANCE_POLL_MS = 10_000;

export const balancesQuery = createQuery<string, AssetItem[]>({ key: (account) => account, load: (account) => getAssets(account), pollMs: BALANCE_POLL_MS, refetchOnFocus: true });

/** The active account's balance items (SPEC §3). */
export const $balances = balancesQuery.watch($accountId);

export function refreshBalances(): Promise<void> {
  const account = $accountId.get();
  return account ? balancesQuery.refetch(account) : Promise.resolve();
}

/** Whether the account holds an asset of this currency (it was added, whatever its amount). */
export function holds(items: readonly AssetItem[] | undefined, currency: string): boolean {
  return items?.some((item) => item.currency === currency) ?? false;
}

/** SPEC §7: adding currencies refreshes the asset list; a currency already held is not sent again. */
export async function addCurrencies(currencies: readonly string[]): Promise<void> {
  const account = $accountId.get();
  if (!account) return;
  const missing = currencies.filter((currency) => !holds(balancesQuery.peek(account).data, currency));
  if (missing.length === 1 && missing[0]) await addAccountCurrency(account, missing[0]);
  else if (missing.length > 1) await addAccountCurrencies(account, missing);
  await balancesQuery.refetch(account);
}
