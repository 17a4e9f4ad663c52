// Paying for the buy (SPEC §4): the order is created under a fresh key, confirmed, and the browser goes to the card
// provider's page; coming back without the provider's return gives the order up (issue 19 item 15).
import { atom } from 'nanostores';
import { getPagePath, openPage } from '@nanostores/router';
import { cancelBuyOrder, confirmBuyOrder, createBuyOrder } from '../../api/buy.ts';
import { toWalletError } from '../../api/errors.ts';
import { newIdempotencyKey } from '../../lib/idempotency-key.ts';
import { realEmail } from '../../lib/messenger-email.ts';
import { platform } from '../../platform/platform.ts';
import { $accountId } from '../account.ts';
import { refreshBalances } from '../balances.ts';
import { showErrorToast } from '../errors.ts';
import { $t } from '../i18n.ts';
import { $router } from '../router.ts';
import { showToast } from '../toasts.ts';
import { $profile } from '../user.ts';
import type { BuyReviewStep } from './review.ts';
import { requestParamsOf } from './rules.ts';

/** Where the provider's page sends the browser back: the bought asset's screen, where the purchase shows as Pending. */
function returnUrlOf(currency: string): string {
  return `${globalThis.location?.origin ?? ''}${getPagePath($router, 'asset', { currency })}`;
}

export function createBuyPayment({ $buyReview, $buySecondsLeft, updateBuyRate }: Pick<BuyReviewStep, '$buyReview' | '$buySecondsLeft' | 'updateBuyRate'>) {
  /** The order on the provider's page; set until the browser comes back to the review. */
  const $handedOff = atom<string | null>(null);

  /**
   * The review's main action: the order is created with a fresh idempotency key, confirmed, and the browser goes to
   * the provider's page (SPEC §4). Order failures show the server's message or common_something_went_wrong.
   */
  async function payBuyOrder(description: string): Promise<void> {
    const review = $buyReview.get();
    const account = $accountId.get();
    if (!review || review.busy || !account || $buySecondsLeft.get() <= 0) return;
    $buyReview.set({ ...review, busy: true });
    try {
      const order = await createBuyOrder({
        rateId: review.rateId,
        itemId: review.method.itemId,
        description,
        returnUrl: returnUrlOf(review.currency),
        idempotencyKey: newIdempotencyKey(),
        account,
        fiatAmount: review.method.fiatAmount,
      });
      $handedOff.set(order.id);
      const { redirectUrl } = await confirmBuyOrder(order.id, account, requestParamsOf(realEmail($profile.get().data?.email)));
      platform().leave(redirectUrl);
    } catch (error) {
      $handedOff.set(null);
      const current = $buyReview.get();
      if (current) $buyReview.set({ ...current, busy: false });
      showErrorToast(error, { serverMessage: true, fallback: 'common_something_went_wrong' });
      // A rate the price has moved away from is refused by the gateway: the review shows a fresh one to pay at.
      const code = toWalletError(error).code;
      if (code === 'B2C_RATE_EXPIRED' || code === 'B2C_ORDER_EXPIRED') await updateBuyRate();
    }
  }

  /**
   * Back on the review from the provider's page (browser back, or a reload) without the provider's return: the
   * order is given up at once rather than left Pending for its 30 minutes. A payment made meanwhile is kept: then
   * the purchase is done and the asset's page shows it.
   */
  async function cameBack(): Promise<void> {
    const id = $handedOff.get();
    const account = $accountId.get();
    if (!id || !account) return;
    $handedOff.set(null);
    const review = $buyReview.get();
    if (review) $buyReview.set({ ...review, busy: false });
    try {
      const order = await cancelBuyOrder(id, account);
      if (order.state === 'COMPLETED' && $router.get()?.route === 'buyOrderReview') {
        void refreshBalances();
        openPage($router, 'asset', { currency: order.currency });
        return;
      }
      // An on-ramp still working on the payment (its checks, a bank transfer) keeps the order: nothing was cancelled.
      if (order.state !== 'PENDING') showToast($t.get()('buy_payment_cancelled'));
    } catch (error) {
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    }
    if ($buyReview.get()) await updateBuyRate();
  }

  return { $handedOff, payBuyOrder, cameBack };
}
