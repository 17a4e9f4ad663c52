import type { WithdrawalView } from '../api/send.ts';
import { $accountId } from './account.ts';
import { $assetCurrency } from './asset.ts';
import { createFlow } from './primitives/flow.ts';
import { createResume, keepVisit } from './primitives/resume.ts';
import { $router } from './router.ts';
import { watchWithdrawal } from './withdrawal-watch.ts';
import { createSendAddress } from './send/address.ts';
import { createSendForm } from './send/form.ts';
import { createSendProgress } from './send/progress.ts';
import { createSendReview } from './send/review.ts';
import type { SendReview } from './send/rules.ts';

export * from './send/rules.ts';

/** What a reload on the review or the in-progress screen brings back (issue 19 item 14). */
type SendResume = { review: SendReview | null; result: WithdrawalView | null };
const sendResume = createResume<SendResume>('send');

/**
 * The send flow (SPEC §2, §4): form, review, in progress, for the asset of the route; one visit's state, guards and
 * cleanup. Each step is its own module in send/: the amount and the gateway's checks (form), the address (address),
 * the review and its confirmation (review), the withdrawal on its way (progress).
 */
export const sendFlow = createFlow(['send', 'sendReview', 'sendProgress'], (scope) => {
  const form = createSendForm();
  const address = createSendAddress(form);
  const review = createSendReview(form);
  const progress = createSendProgress(review);
  const { $sendReview, $sendResult } = review;

  // The review (with its idempotency key: confirming again cannot send twice) and the withdrawal on its way survive a reload.
  const entry = $router.get()?.route;
  keepVisit(scope, sendResume, {
    resumes: entry === 'sendReview' || entry === 'sendProgress',
    $account: $accountId,
    restore: (kept) => {
      if (kept.review) $sendReview.set({ ...kept.review, busy: false, askingPasscode: false });
      if (kept.result) {
        $sendResult.set(kept.result);
        watchWithdrawal(kept.result);
      }
    },
    forget: () => {
      $sendReview.set(null);
      $sendResult.set(null);
    },
    follow: [$sendReview, $sendResult],
    snapshot: () => {
      const kept = { review: $sendReview.get(), result: $sendResult.get() };
      return kept.review || kept.result ? kept : undefined;
    },
  });

  // A new review starts with the save offer closed.
  scope.follow($sendReview, (next) => {
    if (next && !next.busy && !next.askingPasscode) progress.$saveRecipient.set({ open: false, name: '', busy: false, saved: next.saved });
  });
  // The send form follows the asset of the route.
  const followRoute = (page: ReturnType<typeof $router.get>) => {
    const currency = $assetCurrency.get();
    if (page?.route === 'send' && currency) form.startSend(currency);
  };
  followRoute($router.get());
  scope.follow($router, followRoute);
  scope.onLeave(form.cancelChecks);
  // Opened without a form or a withdrawal behind it (a reload): back to the form, or to the asset.
  scope.guard([$assetCurrency, $sendReview], (page) => {
    const currency = $assetCurrency.get();
    const current = $sendReview.get();
    return page.route === 'sendReview' && currency && (!current || current.currency !== currency) ? { route: 'send', params: { currency } } : undefined;
  });
  scope.guard([$assetCurrency, progress.$sendProgress], (page) => {
    const currency = $assetCurrency.get();
    const withdrawal = progress.$sendProgress.get();
    return page.route === 'sendProgress' && currency && (!withdrawal || withdrawal.currency !== currency) ? { route: 'asset', params: { currency } } : undefined;
  });

  const { scheduleChecks: _scheduleChecks, resetSendForm: _resetSendForm, cancelChecks: _cancelChecks, ...formActions } = form;
  return { ...formActions, ...address, ...review, ...progress };
});

export type SendVisit = ReturnType<typeof sendFlow.open>;
