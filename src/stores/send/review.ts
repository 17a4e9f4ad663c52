// The send's review and its confirmation (SPEC §2, §4, §6): one idempotency key per review, the passcode asked for
// when it is on, a lapsed fee quote renewed before anything is sent, the withdrawal asked for once under its key.
import { atom } from 'nanostores';
import { openPage } from '@nanostores/router';
import { createWithdrawal, getPreliminaryFee, type WithdrawalView } from '../../api/send.ts';
import { formatUnits, parseDecimal } from '../../lib/amount.ts';
import { decimalsOf } from '../../lib/currencies.ts';
import { newIdempotencyKey } from '../../lib/idempotency-key.ts';
import { normalTypedAmount } from '../../lib/typed-amount.ts';
import { platform } from '../../platform/platform.ts';
import { $accountId } from '../account.ts';
import { refreshBalances } from '../balances.ts';
import { $coins } from '../catalogue.ts';
import { showErrorToast } from '../errors.ts';
import { $t } from '../i18n.ts';
import { isPasscodeRefusal, passcodeStep } from '../passcode-entry.ts';
import { $router } from '../router.ts';
import { showToast } from '../toasts.ts';
import { watchWithdrawal } from '../withdrawal-watch.ts';
import type { SendFormStep } from './form.ts';
import { feeQuoteLapsed, refusedOutright, type SendReview } from './rules.ts';

export function createSendReview({ $sendForm, $sendCoin, $canContinueSend, resetSendForm }: Pick<SendFormStep, '$sendForm' | '$sendCoin' | '$canContinueSend' | 'resetSendForm'>) {
  const $sendReview = atom<SendReview | null>(null);

  function continueToReview(): void {
    const form = $sendForm.get();
    const coin = $sendCoin.get();
    if (!$canContinueSend.get() || !form.currency || !form.fee || !form.check || !coin) return;
    const amount = normalTypedAmount(form.amount);
    const decimals = coin.decimals;
    const fee = form.fee.internal ? 0n : parseDecimal(form.fee.fee, decimals);
    $sendReview.set({
      currency: form.currency,
      amount,
      receiveAmount: formatUnits(parseDecimal(amount, decimals) - fee, decimals),
      fee: formatUnits(fee, decimals),
      internal: form.check.internal,
      address: form.check.address,
      network: coin.blockchain,
      recipientName: form.check.recipientName,
      accountType: form.check.accountType,
      saved: form.check.saved,
      idempotencyKey: newIdempotencyKey(),
      feeQuoteId: form.fee.feeQuoteId ?? null,
      feeQuoteExpiresAt: form.fee.expiresAt ?? null,
      requested: false,
      askingPasscode: false,
      busy: false,
    });
    openPage($router, 'sendReview', { currency: form.currency });
  }

  /** The review's confirm: with an active passcode it asks for it first (SPEC §2, §6). */
  const { confirm: confirmReview, cancel: cancelPasscode } = passcodeStep($sendReview, () => confirmSend());

  const $sendResult = atom<WithdrawalView | null>(null);

  /**
   * A fresh fee for a review whose quote lapsed: the review with the new quote when the fee is the same, else
   * undefined after the review shows the new fee (the user confirms again, knowing what they pay).
   */
  async function renewFee(account: string, review: SendReview): Promise<SendReview | undefined> {
    const fresh = await getPreliminaryFee(account, review.currency, review.address);
    const decimals = $coins.get()[review.currency]?.decimals ?? decimalsOf(review.currency);
    // No known currency: its decimals are never guessed, and the gateway charges the current fee.
    if (decimals === undefined) return review;
    const fee = fresh.internal ? 0n : parseDecimal(fresh.fee, decimals);
    const left = parseDecimal(review.amount, decimals) - fee;
    const renewed: SendReview = {
      ...review,
      fee: formatUnits(fee, decimals),
      receiveAmount: formatUnits(left > 0n ? left : 0n, decimals),
      internal: fresh.internal,
      feeQuoteId: fresh.feeQuoteId,
      feeQuoteExpiresAt: fresh.expiresAt,
    };
    if (fee === parseDecimal(review.fee, decimals) && fresh.internal === review.internal) return renewed;
    $sendReview.set({ ...renewed, busy: false, askingPasscode: false });
    showToast($t.get()('send_fee_changed'), 'error');
    return undefined;
  }

  /**
   * POST withdrawal; the pincode header goes only when one was entered. A wrong passcode rejects with its text (the
   * prompt clears and shows it); any other refusal shows the server's message in an error toast (SPEC §8). A review
   * whose fee quote lapsed asks for the fee again first, so what is charged is what the review shows.
   */
  async function confirmSend(pincode?: string): Promise<void> {
    let review = $sendReview.get();
    const account = $accountId.get();
    if (!review || !account || review.busy) return;
    $sendReview.set({ ...review, busy: true });
    try {
      if (feeQuoteLapsed(review, platform().now())) {
        const renewed = await renewFee(account, review);
        if (!renewed) return;
        review = renewed;
      }
      review = { ...review, requested: true };
      $sendReview.set({ ...review, busy: true });
      const feeQuote = review.feeQuoteId ? { feeQuoteId: review.feeQuoteId } : {};
      const withdrawal = await createWithdrawal(
        account,
        { currency: review.currency, amount: review.amount, depositAddress: review.address, idempotencyKey: review.idempotencyKey, ...feeQuote },
        pincode || undefined,
      );
      $sendResult.set(withdrawal);
      $sendReview.set({ ...review, busy: false, askingPasscode: false });
      watchWithdrawal(withdrawal);
      resetSendForm();
      void refreshBalances();
      openPage($router, 'sendProgress', { currency: review.currency });
    } catch (error) {
      // A plain refusal created nothing under the key: the request may change again (a lapsed quote renewed).
      if (refusedOutright(error)) review = { ...review, requested: false };
      $sendReview.set({ ...review, busy: false });
      // The prompt reads the code (B2C_USM0032 offers the reset) and shows the gateway's own text: pass the error on as is.
      if (pincode !== undefined && isPasscodeRefusal(error)) throw error;
      $sendReview.set({ ...review, busy: false, askingPasscode: false });
      showErrorToast(error, { serverMessage: true, fallback: 'common_something_went_wrong' });
      throw error;
    }
  }

  return { $sendReview, $sendResult, continueToReview, confirmReview, cancelPasscode, confirmSend };
}

export type SendReviewStep = ReturnType<typeof createSendReview>;
