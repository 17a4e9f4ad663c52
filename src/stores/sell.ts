import { computed } from 'nanostores';
import { redirectPage } from '@nanostores/router';
import { $accountId } from './account.ts';
import { $balances } from './balances.ts';
import { $activeCoins } from './catalogue.ts';
import { createFlow } from './primitives/flow.ts';
import { createResume, keepVisit } from './primitives/resume.ts';
import { $router } from './router.ts';
import { $disabledAssets } from './settings.ts';
import { createSellAmount } from './sell/amount.ts';
import { createSellCard } from './sell/card.ts';
import { createSellResult } from './sell/result.ts';
import { createSellReview } from './sell/review.ts';
import type { SellReview } from './sell/rules.ts';

export * from './sell/rules.ts';

/** /sell/pay: active crypto assets not hidden on this device, with what the account holds of each. */
export const $sellChoices = computed([$activeCoins, $balances, $disabledAssets], (coins, balances, hidden) =>
  coins.filter((coin) => !hidden.includes(coin.currency)).map((coin) => ({ coin, amount: balances.data?.find((item) => item.currency === coin.currency)?.totalAvailable })),
);

/** What a reload brings back (issue 19 item 14): the asset, the amount and the step; never a typed card number. */
type SellResume = { currency: string; amount: string; savedCardId: string | null; review: SellReview | null };
const sellResume = createResume<SellResume>('sell');

/**
 * The sell flow (SPEC §2 Sell): /sell/get moves on to pay at once (RUB is the only payout currency), then order,
 * review, success. Each step is its own module in sell/: the asset, terms and amount (amount), the card (card), the
 * review and its confirmation (review), the order followed to its end (result).
 */
export const sellFlow = createFlow(['sellGet', 'sellPay', 'sellOrder', 'sellOrderReview', 'sellSuccess'], (scope) => {
  const amount = createSellAmount({ resetFlow: () => resetFlow() });
  const card = createSellCard(amount);
  const result = createSellResult();
  const review = createSellReview({ ...amount, ...card, $sellOrder: result.$sellOrder, resetFlow: () => resetFlow() });
  const { $sellCurrency, $sellAmount } = amount;
  const { $savedCardId } = card;
  const { $sellReview } = review;
  const { $sellOrder } = result;

  function resetFlow(): void {
    $sellAmount.set('');
    $savedCardId.set(null);
    $sellReview.set(null);
    card.clearCard();
  }

  // A reload on the order or the review brings the visit back; a typed card number is never kept, so without a
  // saved card the review becomes the card step again.
  const entry = $router.get();
  keepVisit(scope, sellResume, {
    resumes: !!entry && (entry.route === 'sellOrder' || entry.route === 'sellOrderReview'),
    $account: $accountId,
    restore: (kept) => {
      $sellCurrency.set(kept.currency);
      $sellAmount.set(kept.amount);
      $savedCardId.set(kept.savedCardId);
      if (kept.review && kept.savedCardId) $sellReview.set({ ...kept.review, busy: false, askingPasscode: false });
      else if (entry?.route === 'sellOrderReview') redirectPage($router, 'sellOrder', {}, { step: 'card' });
    },
    forget: () => {
      $sellCurrency.set(null);
      resetFlow();
    },
    follow: [$sellCurrency, $sellAmount, $savedCardId, $sellReview],
    snapshot: () => {
      const currency = $sellCurrency.get();
      return currency ? { currency, amount: $sellAmount.get(), savedCardId: $savedCardId.get(), review: $sellReview.get() } : undefined;
    },
  });
  // A placed order is no longer in flight for the order screens.
  scope.follow($sellOrder, (order) => {
    if (order) sellResume.clear();
  });

  scope.onLeave(card.clearCard);
  // SPEC §2 /sell/get: RUB is the only payout currency, so it is chosen at once and the flow moves on.
  scope.guard([], (page) => (page.route === 'sellGet' ? { route: 'sellPay' } : undefined));
  // Without a chosen crypto (a reload, an address typed) the order and its review go back to the choice.
  scope.guard([$accountId, $sellCurrency], (page) => ((page.route === 'sellOrder' || page.route === 'sellOrderReview') && $accountId.get() && !$sellCurrency.get() ? { route: 'sellPay' } : undefined));
  scope.guard([$sellReview, amount.$sellCoin], (page) => (page.route === 'sellOrderReview' && !$sellReview.get() ? { route: amount.$sellCoin.get() ? 'sellOrder' : 'sellPay' } : undefined));
  // The card step without an amount that may go on (a reload, an address typed) is the amount step.
  scope.guard([amount.$sellTerms, amount.$sellAmountCheck], (page) => {
    const terms = amount.$sellTerms.get();
    return page.route === 'sellOrder' && page.search.step === 'card' && terms.rate && !terms.loading && !amount.$sellAmountCheck.get().canContinue ? { route: 'sellOrder' } : undefined;
  });
  scope.guard([$sellOrder], (page) => (page.route === 'sellSuccess' && !$sellOrder.get() ? { route: 'home' } : undefined));

  const { clearCard: _clearCard, ...cardParts } = card;
  return { ...amount, ...cardParts, ...review, $sellOrder };
});

export type SellVisit = ReturnType<typeof sellFlow.open>;
