// The swap's review (SPEC §2 /swap/order/review, §4): the order placed on a fresh quote holds nothing until confirmed;
// 300 s to confirm it, then 'Update rate' gives it up for a fresh one; leaving the review closes it.
import { atom, computed } from 'nanostores';
import { openPage } from '@nanostores/router';
import { cancelSwapOrder, createSwapOrder, preCalculateSwap, type QuoteRequest } from '../../api/swap.ts';
import { newIdempotencyKey } from '../../lib/idempotency-key.ts';
import { $accountId } from '../account.ts';
import { showErrorToast } from '../errors.ts';
import { createCountdown } from '../primitives/countdown.ts';
import { $router } from '../router.ts';
import type { SwapAmountStep } from './amount.ts';
import type { SwapPairStep } from './pair.ts';
import { requestOf, SWAP_REVIEW_SECONDS, type SwapReview } from './rules.ts';

/** A fresh quote by the same request, then the order under review (it holds nothing until confirmed): the review's 300 s start now. */
async function placeOrder(account: string, request: QuoteRequest): Promise<SwapReview> {
  const quote = await preCalculateSwap(account, request);
  const order = await createSwapOrder(account, { quoteId: quote.quoteId, sourceAmount: quote.sourceAmount, idempotencyKey: newIdempotencyKey() });
  return { order, deadline: Date.now() + Math.min(order.expiresInSeconds, SWAP_REVIEW_SECONDS) * 1000, request, busy: false, expired: false };
}

export function createSwapReview({ $swapSelection, $swapForm, $canContinue }: Pick<SwapPairStep, '$swapSelection'> & Pick<SwapAmountStep, '$swapForm' | '$canContinue'>) {
  const $swapReview = atom<SwapReview | null>(null);
  /** The review shows the passcode prompt in place of its summary once confirm is pressed with a passcode on. */
  const $swapPasscodeOpen = atom(false);
  const countdown = createCountdown(computed($swapReview, (review) => (review && !review.expired ? review.deadline : null)));
  /** Seconds left on the review, ticking once a second while a screen shows it. */
  const $swapSecondsLeft = countdown.$secondsLeft;

  /** The order form's continue: SPEC §8 order creation failures say common_something_went_wrong. */
  async function continueToReview(): Promise<void> {
    const account = $accountId.get();
    const { from, to } = $swapSelection.get();
    const form = $swapForm.get();
    if (!account || !from || !to || !form.typed || !$canContinue.get()) return;
    $swapForm.setKey('submitting', true);
    try {
      const amount = form.typed === 'source' ? form.sourceAmount : form.destinationAmount;
      const review = await placeOrder(account, requestOf(form.typed, amount, from, to));
      $swapReview.set(review);
      openPage($router, 'swapOrderReview');
    } catch (error) {
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    } finally {
      $swapForm.setKey('submitting', false);
    }
  }

  /** SPEC §4 'Update rate': gives the expired order up, asks for a fresh quote and order, restarts the countdown. */
  async function updateSwapRate(): Promise<void> {
    const account = $accountId.get();
    const review = $swapReview.get();
    if (!account || !review || review.busy) return;
    $swapReview.set({ ...review, busy: true });
    try {
      await cancelSwapOrder(account, review.order.id).catch(() => undefined);
      $swapReview.set(await placeOrder(account, review.request));
      $swapPasscodeOpen.set(false);
      countdown.restart();
    } catch (error) {
      const current = $swapReview.get();
      if (current) $swapReview.set({ ...current, busy: false });
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    }
  }

  /** Leaving the review without confirming closes the order (it held nothing; the worker would close it after 300 s). */
  function giveUpReview(): void {
    const review = $swapReview.get();
    const account = $accountId.get();
    if (!review || !account) return;
    $swapReview.set(null);
    $swapPasscodeOpen.set(false);
    void cancelSwapOrder(account, review.order.id).catch(() => undefined);
  }

  return { $swapReview, $swapPasscodeOpen, $swapSecondsLeft, continueToReview, updateSwapRate, giveUpReview };
}

export type SwapReviewStep = ReturnType<typeof createSwapReview>;
