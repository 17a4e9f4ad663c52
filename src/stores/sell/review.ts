// The sale's review and confirmation (SPEC §4, §6): one key per review, the passcode asked for first when it is on
// (a sale sends crypto out like a withdrawal), the order placed at the fixed rate; an expired rate is quoted afresh.
import { atom, type WritableAtom } from 'nanostores';
import { openPage } from '@nanostores/router';
import { sellByCard, sellBySavedCard, type SellOrderView } from '../../api/sell.ts';
import { toWalletError } from '../../api/errors.ts';
import { newIdempotencyKey } from '../../lib/idempotency-key.ts';
import { $accountId } from '../account.ts';
import { refreshBalances } from '../balances.ts';
import { isPasscodeRefusal, passcodeStep } from '../passcode-entry.ts';
import { $router } from '../router.ts';
import { showToast } from '../toasts.ts';
import type { SellAmountStep } from './amount.ts';
import type { SellCardStep } from './card.ts';
import { SELL_FIAT, sellErrorText, type SellReview } from './rules.ts';

type Needs = Pick<SellAmountStep, '$sellCurrency' | '$sellTerms' | '$sellAmountCheck' | '$sellRateExpired' | 'loadSellTerms'> &
  Pick<SellCardStep, '$canReview' | '$savedCardId' | '$cardLookup' | '$cardNumber' | '$saveCard'> & { $sellOrder: WritableAtom<SellOrderView | null>; resetFlow: () => void };

export function createSellReview({ $sellCurrency, $sellTerms, $sellAmountCheck, $sellRateExpired, loadSellTerms, $canReview, $savedCardId, $cardLookup, $cardNumber, $saveCard, $sellOrder, resetFlow }: Needs) {
  const $sellReview = atom<SellReview | null>(null);

  /** 'Update rate': a fresh rate, and a new key for the review (the old order terms are gone). */
  async function updateSellRate(): Promise<void> {
    const review = $sellReview.get();
    if (review) $sellReview.set({ ...review, idempotencyKey: newIdempotencyKey() });
    await loadSellTerms();
  }

  function continueToReview(): void {
    // An order still being placed keeps its review: a second one now would be a second sale under a new key.
    if ($sellReview.get()?.busy) return;
    if (!$canReview.get() || !$sellAmountCheck.get().canContinue || $sellRateExpired.get()) return;
    $sellReview.set({ idempotencyKey: newIdempotencyKey(), busy: false, askingPasscode: false });
    openPage($router, 'sellOrderReview');
  }

  /**
   * The review's Confirm. A sale sends the crypto out of the wallet like a withdrawal, so with the passcode on it is
   * asked for first (SPEC §6 guards withdrawals; the gateway refuses a sale without it).
   */
  const { confirm: confirmSellReview } = passcodeStep($sellReview, () => confirmSell());

  /**
   * Places the order: it holds the crypto; the screen shows its in-progress state until the answer. A passcode
   * refusal is thrown back to the prompt (which clears and shows it); any other failure is a toast.
   */
  async function confirmSell(pincode?: string): Promise<void> {
    const account = $accountId.get();
    const review = $sellReview.get();
    const currency = $sellCurrency.get();
    const terms = $sellTerms.get();
    if (!account || !review || review.busy || !currency || !terms.rate || $sellRateExpired.get()) return;
    $sellReview.set({ ...review, busy: true });
    const base = {
      currency,
      fiatCurrency: SELL_FIAT,
      fixedRateId: terms.rate.rateId,
      fiatAmount: $sellAmountCheck.get().fiatAmount,
      idempotencyKey: review.idempotencyKey,
    };
    try {
      const savedId = $savedCardId.get();
      const lookup = $cardLookup.get();
      const order = savedId
        ? await sellBySavedCard(account, { ...base, cardId: savedId }, pincode)
        : await sellByCard(account, { ...base, card: $cardNumber.get(), bankCode: lookup?.info?.code ?? '', bankSystem: lookup?.info?.system ?? '', saveCard: $saveCard.get() }, pincode);
      $sellOrder.set(order);
      resetFlow();
      void refreshBalances();
      openPage($router, 'sellSuccess');
    } catch (error) {
      // A passcode refusal keeps the prompt open and goes back to it; anything else closes it for a toast.
      const refused = pincode !== undefined && isPasscodeRefusal(error);
      const current = $sellReview.get();
      if (current) $sellReview.set({ ...current, busy: false, askingPasscode: refused && current.askingPasscode });
      if (refused) throw error;
      // An expired rate is quoted afresh; the user confirms again at the new one.
      if (toWalletError(error).code === 'C2F_RATE_EXPIRED') {
        $sellReview.set({ idempotencyKey: newIdempotencyKey(), busy: false, askingPasscode: false });
        void loadSellTerms();
      }
      showToast(sellErrorText(error), 'error');
      throw error;
    }
  }

  return { $sellReview, updateSellRate, continueToReview, confirmSellReview, confirmSell };
}
