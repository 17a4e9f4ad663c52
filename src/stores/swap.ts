import { computed } from 'nanostores';
import { $accountId } from './account.ts';
import { formatCountdown } from './primitives/countdown.ts';
import { createFlow } from './primitives/flow.ts';
import { createResume, keepVisit } from './primitives/resume.ts';
import { $router } from './router.ts';
import { takeRequestedSwapPair, $requestedSwapPair } from './swap-selection.ts';
import { $profile } from './user.ts';
import { createSwapAmount } from './swap/amount.ts';
import { createSwapConfirm } from './swap/confirm.ts';
import { createSwapPair } from './swap/pair.ts';
import { createSwapReview } from './swap/review.ts';
import { EMPTY_SWAP_FORM, type SwapReview, type SwapSelection, type SwapSide } from './swap/rules.ts';

export * from './swap/rules.ts';
export { $sourceChoices, $swapPairs, pairsQuery } from './swap/pair.ts';
export { limitQuery } from './swap/amount.ts';
export { formatCountdown };

export const $pinCodeActive = computed($profile, (profile) => profile.data?.pinCodeActive === true);

/** What a reload on the review brings back: the pair, the amounts typed and the order under review with its deadline. */
type SwapResume = { selection: SwapSelection; sourceAmount: string; destinationAmount: string; typed: SwapSide | null; review: SwapReview };
const swapResume = createResume<SwapResume>('swap');

/**
 * The swap flow (SPEC §2 Swap): from, to, order, review, success; one visit's stores, guards and cleanup. Each step is
 * its own module in swap/: choosing the pair (pair), the amounts and their quote (amount), the order under review
 * (review), its confirmation (confirm).
 */
export const swapFlow = createFlow(['swap', 'swapFrom', 'swapTo', 'swapOrder', 'swapOrderReview', 'swapOrderSuccess'], (scope) => {
  const pair = createSwapPair({ resetAmounts: () => amount.resetAmounts() });
  const amount = createSwapAmount(pair);
  const review = createSwapReview({ ...pair, ...amount });
  const confirm = createSwapConfirm({ ...review, ...amount });
  const { $swapSelection } = pair;
  const { $swapForm } = amount;
  const { $swapReview } = review;

  // An order under review survives a reload (issue 19 item 14): the review comes back with its countdown. It holds
  // nothing and shows in no history until confirmed; leaving it in the app closes it (giveUpReview).
  keepVisit(scope, swapResume, {
    resumes: $router.get()?.route === 'swapOrderReview',
    $account: $accountId,
    restore: (kept) => {
      $swapSelection.set({ ...kept.selection, fresh: false });
      $swapForm.set({ ...EMPTY_SWAP_FORM, sourceAmount: kept.sourceAmount, destinationAmount: kept.destinationAmount, typed: kept.typed });
      $swapReview.set({ ...kept.review, busy: false });
    },
    forget: () => $swapReview.set(null),
    follow: [$swapReview],
    snapshot: () => {
      const form = $swapForm.get();
      const current = $swapReview.get();
      return current ? { selection: $swapSelection.get(), sourceAmount: form.sourceAmount, destinationAmount: form.destinationAmount, typed: form.typed, review: current } : undefined;
    },
  });

  // A pair set from outside the choosers starts with empty amounts.
  scope.follow($swapSelection, (selection) => {
    if (selection.fresh) amount.resetAmounts();
  });
  scope.follow($requestedSwapPair, () => {
    const requested = takeRequestedSwapPair();
    if (requested) $swapSelection.set({ ...requested, fresh: true });
  });
  scope.follow($router, (page) => {
    if (page?.route !== 'swapOrderReview') review.giveUpReview();
  });
  scope.onLeave(() => {
    review.giveUpReview();
    amount.cancelQuotes();
  });
  scope.guard([$swapSelection], (page) => {
    const { from, to } = $swapSelection.get();
    if (page.route === 'swapTo' && !from) return { route: 'swapFrom' };
    if (page.route === 'swapOrder' && !from) return { route: 'swap' };
    if (page.route === 'swapOrder' && !to) return { route: 'swapTo' };
    return undefined;
  });
  scope.guard([$swapReview], (page) => (page.route === 'swapOrderReview' && !$swapReview.get() ? { route: 'swapOrder' } : undefined));
  scope.guard([confirm.$swapResult], (page) => (page.route === 'swapOrderSuccess' && !confirm.$swapResult.get() ? { route: 'home' } : undefined));

  return {
    ...pair,
    $swapForm,
    $swapLimit: amount.$swapLimit,
    $swapProblem: amount.$swapProblem,
    $canContinue: amount.$canContinue,
    $swapReview,
    $swapResult: confirm.$swapResult,
    $swapPasscodeOpen: review.$swapPasscodeOpen,
    $swapSecondsLeft: review.$swapSecondsLeft,
    typeAmount: amount.typeAmount,
    reversePair: amount.reversePair,
    continueToReview: review.continueToReview,
    requestSwapConfirmation: confirm.requestSwapConfirmation,
    confirmSwap: confirm.confirmSwap,
    updateSwapRate: review.updateSwapRate,
  };
});

export type SwapVisit = ReturnType<typeof swapFlow.open>;
