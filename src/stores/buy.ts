import { computed } from 'nanostores';
import { $accountId } from './account.ts';
import { $activeCoins } from './catalogue.ts';
import { $buyCurrencies } from './buy-sell.ts';
import { createFlow } from './primitives/flow.ts';
import { createResume, keepVisit } from './primitives/resume.ts';
import { $router } from './router.ts';
import { createBuyAmount } from './buy/amount.ts';
import { createBuyChoices } from './buy/choose.ts';
import { createBuyPayment } from './buy/pay.ts';
import { createBuyReview } from './buy/review.ts';
import { buyableCoins, EMPTY_BUY, type BuyReview, type BuyState } from './buy/rules.ts';

export * from './buy/rules.ts';

export const $buyCoins = computed([$activeCoins, $buyCurrencies], (coins, offered) => buyableCoins(coins, offered.data?.currencies ?? []));

/** What a reload, or the browser coming back from the provider's page, brings back (issue 19 items 14, 15). */
type BuyResume = {
  buy: Pick<BuyState, 'to' | 'from' | 'geoId' | 'methods' | 'method' | 'rateId' | 'fromAmount' | 'toAmount' | 'typed'>;
  review: BuyReview | null;
  /** The order handed to the provider's page: coming back here without paying gives it up. */
  handedOff: string | null;
};
const buyResume = createResume<BuyResume>('buy');
const BUY_RESUMED_ROUTES: readonly string[] = ['buyMethod', 'buyOrder', 'buyOrderReview'];

/**
 * The buy flow (SPEC §2 Buy): get, pay, order (and method), review; one visit's state, guards and cleanup. Each step
 * is its own module in buy/: the amounts and their quote (amount), the crypto, fiat and method (choose), the review
 * (review), the order handed to the provider and the way back (pay).
 */
export const buyFlow = createFlow(['buyGet', 'buyPay', 'buyMethod', 'buyOrder', 'buyOrderReview'], (scope) => {
  const amount = createBuyAmount();
  const choices = createBuyChoices(amount);
  const review = createBuyReview(amount);
  const payment = createBuyPayment(review);
  const { $buy } = amount;
  const { $buyReview } = review;
  const { $handedOff } = payment;

  scope.follow(choices.$onlyFiat, (only) => {
    if (only) choices.chooseBuyFiat(only, true);
  });

  keepVisit(scope, buyResume, {
    resumes: BUY_RESUMED_ROUTES.includes($router.get()?.route ?? ''),
    $account: $accountId,
    restore: (kept) => {
      $buy.set({ ...$buy.get(), ...kept.buy });
      if (kept.review) $buyReview.set({ ...kept.review, busy: false });
      $handedOff.set(kept.handedOff);
    },
    forget: () => {
      $buy.set({ ...EMPTY_BUY });
      $buyReview.set(null);
      $handedOff.set(null);
    },
    follow: [$buy, $buyReview, $handedOff],
    snapshot: () => {
      const { to, from, geoId, methods, method, rateId, fromAmount, toAmount, typed } = $buy.get();
      return to ? { buy: { to, from, geoId, methods, method, rateId, fromAmount, toAmount, typed }, review: $buyReview.get(), handedOff: $handedOff.get() } : undefined;
    },
  });
  // The order is given up once the account is known (after a reload) or when the browser shows this page again from its cache.
  const backFromProvider = () => {
    if ($handedOff.get() && $accountId.get()) void payment.cameBack();
  };
  scope.follow($accountId, backFromProvider);
  queueMicrotask(backFromProvider);
  const onPageShow = (event: PageTransitionEvent) => {
    if (event.persisted) backFromProvider();
  };
  globalThis.addEventListener?.('pageshow', onPageShow as EventListener);
  scope.onLeave(() => globalThis.removeEventListener?.('pageshow', onPageShow as EventListener));

  scope.onLeave(amount.cancelQuotes);
  scope.guard([$buy], (page) => {
    const { to, from } = $buy.get();
    if (page.route === 'buyPay' || page.route === 'buyMethod' || page.route === 'buyOrder') {
      if (!to) return { route: 'buyGet' };
      if (!from && page.route !== 'buyPay') return { route: 'buyPay' };
    }
    return undefined;
  });
  scope.guard([$buyReview], (page) => (page.route === 'buyOrderReview' && !$buyReview.get() ? { route: 'buyOrder' } : undefined));

  return {
    $buy,
    $fiatOptions: choices.$fiatOptions,
    $chosenMethod: amount.$chosenMethod,
    $buyProblem: amount.$buyProblem,
    $canReviewBuy: amount.$canReviewBuy,
    $buyReview,
    $reviewing: review.$reviewing,
    $buySecondsLeft: review.$buySecondsLeft,
    typeBuyAmount: amount.typeBuyAmount,
    chooseBuyCrypto: choices.chooseBuyCrypto,
    chooseBuyFiat: choices.chooseBuyFiat,
    changeBuyFiat: choices.changeBuyFiat,
    chooseBuyMethod: choices.chooseBuyMethod,
    continueToBuyReview: review.continueToBuyReview,
    updateBuyRate: review.updateBuyRate,
    payBuyOrder: payment.payBuyOrder,
  };
});

export type BuyVisit = ReturnType<typeof buyFlow.open>;
