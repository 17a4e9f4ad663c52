// The swap's confirmation (SPEC §4, §5): with a passcode on the prompt shows first; the order is confirmed, and the
// success screen shows what it became.
import { atom } from 'nanostores';
import { openPage } from '@nanostores/router';
import { confirmSwapOrder, type SwapOrderView } from '../../api/swap.ts';
import { toWalletError } from '../../api/errors.ts';
import { $accountId } from '../account.ts';
import { refreshBalances } from '../balances.ts';
import { showErrorToast } from '../errors.ts';
import { isPasscodeRefusal } from '../passcode-entry.ts';
import { $router } from '../router.ts';
import type { SwapAmountStep } from './amount.ts';
import type { SwapReviewStep } from './review.ts';

export function createSwapConfirm({ $swapReview, $swapPasscodeOpen, $swapSecondsLeft, resetAmounts }: Pick<SwapReviewStep, '$swapReview' | '$swapPasscodeOpen' | '$swapSecondsLeft'> & Pick<SwapAmountStep, 'resetAmounts'>) {
  const $swapResult = atom<SwapOrderView | null>(null);

  function requestSwapConfirmation(): void {
    if ($swapReview.get() && $swapSecondsLeft.get() > 0) $swapPasscodeOpen.set(true);
  }

  /**
   * Confirms the order under review; the pincode header goes only when non-empty (SPEC §5). A passcode refusal is
   * thrown back to the prompt (which clears and shows it); other failures show the gateway's message (SPEC §8).
   */
  async function confirmSwap(pincode?: string): Promise<void> {
    const account = $accountId.get();
    const review = $swapReview.get();
    if (!account || !review || review.busy) return;
    $swapReview.set({ ...review, busy: true });
    try {
      const order = await confirmSwapOrder(account, review.order.id, pincode || undefined);
      $swapResult.set(order);
      $swapPasscodeOpen.set(false);
      $swapReview.set(null);
      resetAmounts();
      void refreshBalances();
      openPage($router, 'swapOrderSuccess');
    } catch (error) {
      const code = toWalletError(error).code;
      const current = $swapReview.get();
      if (current) $swapReview.set({ ...current, busy: false, expired: current.expired || code === 'SWAP_ORDER_EXPIRED' });
      if (pincode && isPasscodeRefusal(error)) throw error;
      $swapPasscodeOpen.set(false);
      showErrorToast(error, { serverMessage: true, fallback: 'common_something_went_wrong' });
    }
  }

  return { $swapResult, requestSwapConfirmation, confirmSwap };
}
