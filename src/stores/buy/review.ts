// The buy's review (SPEC §2 /buy/order/review, §4): a fresh quote for the chosen method fixes the rate for 300 s;
// at zero 'Update rate' asks for a fresh one and the countdown starts again.
import { atom, computed } from 'nanostores';
import { openPage } from '@nanostores/router';
import { getPaymentMethods } from '../../api/buy.ts';
import { platform } from '../../platform/platform.ts';
import { showErrorToast } from '../errors.ts';
import { createCountdown } from '../primitives/countdown.ts';
import { $router } from '../router.ts';
import type { BuyAmountStep } from './amount.ts';
import { BUY_REVIEW_SECONDS, type BuyReview } from './rules.ts';

export function createBuyReview({ $buy, $chosenMethod, $canReviewBuy, quoteRequest }: Pick<BuyAmountStep, '$buy' | '$chosenMethod' | '$canReviewBuy' | 'quoteRequest'>) {
  const $buyReview = atom<BuyReview | null>(null);
  const $reviewing = atom(false);
  const countdown = createCountdown(computed($buyReview, (review) => review?.deadline ?? null), () => platform().now());
  /** Seconds left on the review, ticking once a second while a screen shows it. */
  const $buySecondsLeft = countdown.$secondsLeft;

  /** A fresh quote for the chosen method's fiat amount: the review's 300 s start with it. */
  async function freshReview(): Promise<BuyReview> {
    const state = $buy.get();
    const method = $chosenMethod.get();
    if (!method || !state.to) throw new Error('nothing to review');
    const request = quoteRequest('from', method.fiatAmount);
    if (!request) throw new Error('nothing to review');
    const quote = await getPaymentMethods(request);
    const fresh = quote.methods.find((m) => m.paymentMethodCode === method.paymentMethodCode);
    if (!fresh) throw new Error('the method is no longer offered');
    $buy.set({ ...$buy.get(), methods: quote.methods, rateId: quote.fixedRateId, toAmount: fresh.cryptoAmount, fromAmount: fresh.fiatAmount, typed: 'from' });
    const seconds = Math.min(quote.expiresInSeconds ?? BUY_REVIEW_SECONDS, BUY_REVIEW_SECONDS);
    return { method: fresh, rateId: quote.fixedRateId, currency: state.to, deadline: platform().now() + seconds * 1000, busy: false };
  }

  /** The order screen's review button. */
  async function continueToBuyReview(): Promise<void> {
    if (!$canReviewBuy.get() || $reviewing.get()) return;
    $reviewing.set(true);
    try {
      $buyReview.set(await freshReview());
      countdown.restart();
      openPage($router, 'buyOrderReview');
    } catch (error) {
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    } finally {
      $reviewing.set(false);
    }
  }

  /** 'Update rate' at zero: a fresh quote, and the countdown starts again. */
  async function updateBuyRate(): Promise<void> {
    const review = $buyReview.get();
    if (!review || review.busy) return;
    $buyReview.set({ ...review, busy: true });
    try {
      $buyReview.set(await freshReview());
      countdown.restart();
    } catch (error) {
      const current = $buyReview.get();
      if (current) $buyReview.set({ ...current, busy: false });
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    }
  }

  return { $buyReview, $reviewing, $buySecondsLeft, continueToBuyReview, updateBuyRate };
}

export type BuyReviewStep = ReturnType<typeof createBuyReview>;
