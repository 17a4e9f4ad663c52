import { historyExportLink } from '../api/wallet.ts';
import { platform } from '../platform/platform.ts';
import { $accountId } from './account.ts';
import { showErrorToast } from './errors.ts';

/**
 * The history as CSV (issue 36 item 4): asks the gateway for a 5-minute signed link to the account's history (one
 * asset or all, a range of UTC days) and opens it, so the download needs no token in the address.
 */
export async function exportHistory(range: { currency?: string | undefined; from: string; to: string }): Promise<void> {
  const account = $accountId.get();
  if (!account) return;
  try {
    const { url } = await historyExportLink(account, { ...(range.currency ? { currency: range.currency } : {}), from: range.from, to: range.to });
    platform().leave(url);
  } catch (error) {
    showErrorToast(error, { fallback: 'common_something_went_wrong' });
  }
}
