// The card the sale pays out to (SPEC §2 /sell/order?step=card, §5, §9): 16 digits of a card the lookup of its first 6
// names SBR, or a saved card. A typed card number lives only here, in memory, until the order is sent.
import { atom, computed } from 'nanostores';
import { openPage, redirectPage } from '@nanostores/router';
import { lookupCard } from '../../api/sell.ts';
import { toWalletError } from '../../api/errors.ts';
import { $router } from '../router.ts';
import type { SellAmountStep } from './amount.ts';
import { BIN_DIGITS, CARD_DIGITS, SELL_BANK_CODE, type CardLookup } from './rules.ts';

export function createSellCard({ $sellTerms, $sellAmountCheck, $sellRateExpired }: Pick<SellAmountStep, '$sellTerms' | '$sellAmountCheck' | '$sellRateExpired'>) {
  /** The card step is its own history entry (?step=card), so the browser's back returns to the amount (issue 19 item 15). */
  const $sellStep = computed($router, (page): 'amount' | 'card' => (page?.route === 'sellOrder' && page.search.step === 'card' ? 'card' : 'amount'));
  /** Whether this visit pushed the card step (then 'Change amount' is the browser's back). */
  let pushedCard = false;
  const $cardNumber = atom('');
  const $cardLookup = atom<CardLookup | null>(null);
  const $savedCardId = atom<string | null>(null);
  const $saveCard = atom(false);

  /** SPEC §5 card: exactly 16 digits of a card the lookup names SBR; or a saved card. */
  const $cardValid = computed([$cardNumber, $cardLookup], (digits, lookup) => digits.length === CARD_DIGITS && lookup?.info?.code === SELL_BANK_CODE && !lookup.loading);
  const $canReview = computed([$cardValid, $savedCardId], (valid, saved) => valid || saved !== null);

  /** The card as the review shows it: first six and last four, as the gateway keeps it. */
  const $reviewCard = computed([$savedCardId, $sellTerms, $cardNumber, $cardLookup], (savedId, terms, digits, lookup) => {
    const saved = savedId ? terms.cards.find((card) => card.cardId === savedId) : undefined;
    if (saved) return { masked: saved.mascCard, bank: saved.bankCode };
    if (digits.length !== CARD_DIGITS) return undefined;
    return { masked: `${digits.slice(0, 6)}******${digits.slice(-4)}`, bank: lookup?.info?.code ?? '' };
  });

  let lookupAbort: AbortController | undefined;

  function clearCard(): void {
    lookupAbort?.abort();
    $cardNumber.set('');
    $cardLookup.set(null);
    $saveCard.set(false);
  }

  function continueToCard(): void {
    if (!$sellAmountCheck.get().canContinue || $sellRateExpired.get()) return;
    pushedCard = true;
    openPage($router, 'sellOrder', {}, { step: 'card' });
  }

  function backToAmount(): void {
    if (pushedCard && globalThis.history) {
      pushedCard = false;
      globalThis.history.back();
    } else redirectPage($router, 'sellOrder');
  }

  /** Card number entry: digits only, at most 16; the first 6 are looked up once typed (SPEC §5). */
  function setCardNumber(text: string): void {
    const digits = text.replace(/\D/g, '').slice(0, CARD_DIGITS);
    $cardNumber.set(digits);
    if (digits.length > 0) $savedCardId.set(null);
    if (digits.length !== CARD_DIGITS) $saveCard.set(false);
    if (digits.length < BIN_DIGITS) {
      lookupAbort?.abort();
      $cardLookup.set(null);
      return;
    }
    const bin = digits.slice(0, BIN_DIGITS);
    if ($cardLookup.get()?.bin === bin) return;
    lookupAbort?.abort();
    const controller = new AbortController();
    lookupAbort = controller;
    $cardLookup.set({ bin, loading: true });
    lookupCard(bin, controller.signal).then(
      (info) => {
        if (controller.signal.aborted) return;
        $cardLookup.set({ bin, loading: false, info, problem: info.code === SELL_BANK_CODE ? undefined : 'not_sber' });
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        // A bank the lookup does not know is not the one bank that takes payouts.
        const unknown = toWalletError(error).code === 'C2F_BIN_NOT_FOUND';
        $cardLookup.set({ bin, loading: false, problem: unknown ? 'not_sber' : 'failed' });
      },
    );
  }

  function selectSavedCard(cardId: string): void {
    clearCard();
    $savedCardId.set(cardId);
  }

  function setSaveCard(on: boolean): void {
    $saveCard.set(on && $cardValid.get());
  }

  return { $sellStep, $cardNumber, $cardLookup, $savedCardId, $saveCard, $cardValid, $canReview, $reviewCard, clearCard, continueToCard, backToAmount, setCardNumber, selectSavedCard, setSaveCard };
}

export type SellCardStep = ReturnType<typeof createSellCard>;
