import { atom, computed, onMount } from 'nanostores';
import { openPage, redirectPage } from '@nanostores/router';
import { getSavedCards, getSellLimits, getSellOrder, getSellRate, lookupCard, sellByCard, sellBySavedCard, type CardInfo, type SavedCard, type SellLimits, type SellOrderView, type SellQuote } from '../api/sell.ts';
import { toWalletError } from '../api/errors.ts';
import { acceptTypedAmount } from '../lib/typed-amount.ts';
import { compareDecimals, divideUnits, formatUnits, multiplyDecimals, parseDecimal, pow10 } from '../lib/amount.ts';
import { decimalsOf, type CoinMeta } from '../lib/currencies.ts';
import { newIdempotencyKey } from '../lib/idempotency-key.ts';
import type { MessageKey } from '../lib/text.ts';
import { $accountId } from './account.ts';
import { $balances, addCurrencies, refreshBalances } from './balances.ts';
import { $activeCoins, $coins } from './catalogue.ts';
import { errorText } from './errors.ts';
import { $t, type Translate } from './i18n.ts';
import { createCountdown } from './primitives/countdown.ts';
import { createFlow } from './primitives/flow.ts';
import { createResume } from './primitives/resume.ts';
import { platform } from '../platform/platform.ts';
import { $router } from './router.ts';
import { $disabledAssets } from './settings.ts';
import { showToast } from './toasts.ts';
import { isPasscodeRefusal, passcodeStep } from './passcode-entry.ts';

/**
 * The sell flow (SPEC §2 Sell, §4, §5): get (RUB is the only payout currency) → pay (the crypto) → order (amount,
 * then the card in its place) → order/review (in progress after confirming) → success. A typed card number lives
 * only here, in memory, until the order is sent; it is cleared as soon as the order is placed or the flow restarts.
 */
export const SELL_FIAT = 'RUB';
export const SELL_BANK_CODE = 'SBR';
/** SPEC §9: 16 digits; the lookup runs on the first 6. */
export const CARD_DIGITS = 16;
export const BIN_DIGITS = 6;
const ORDER_POLL_MS = 2_000;


/** `rateDeadline`: local time (ms, the platform's clock) at which the fixed rate runs out. */
export type SellTerms = { loading: boolean; failed: boolean; limits?: SellLimits; rate?: Pick<SellQuote, 'rate' | 'rateId'>; rateDeadline?: number; cards: SavedCard[] };
export type CardLookup = { bin: string; loading: boolean; info?: CardInfo; problem?: 'not_sber' | 'failed' };

/** askingPasscode: the passcode prompt shows in place of the review (the passcode is on). */
export type SellReview = { idempotencyKey: string; busy: boolean; askingPasscode: boolean };
/** /sell/pay: active crypto assets not hidden on this device, with what the account holds of each. */
export const $sellChoices = computed([$activeCoins, $balances, $disabledAssets], (coins, balances, hidden) =>
  coins.filter((coin) => !hidden.includes(coin.currency)).map((coin) => ({ coin, amount: balances.data?.find((item) => item.currency === coin.currency)?.totalAvailable })),
);


const fractionOf = (value: string) => value.split('.')[1]?.length ?? 0;

/** a / b to `places` decimals, rounded down or up: the crypto side of a fiat limit. */
export function divideDecimals(a: string, b: string, places: number, mode: 'down' | 'up'): string {
  const d = Math.max(fractionOf(a), fractionOf(b));
  const y = parseDecimal(b, d);
  if (y === 0n) return '0';
  return formatUnits(divideUnits(parseDecimal(a, d) * pow10(places), y, mode), places);
}

/** SPEC §5: the limits are the fiat limits divided by the rate (min rounded up, max down, to what the coin holds). */
export function cryptoLimits(limits: SellLimits | undefined, rate: string | undefined, decimals: number): { min: string; max: string } | undefined {
  if (!limits || !rate || compareDecimals(rate, '0') <= 0) return undefined;
  const places = Math.min(8, decimals);
  return { min: divideDecimals(limits.minLimit, rate, places, 'up'), max: divideDecimals(limits.maxLimit, rate, places, 'down') };
}

/** The limits line (issue 33 item 3): "Min X - max Y" only when an amount fits strictly between them, else "not available". */
export function sellLimitsText(limits: { min: string; max: string }, ticker: string, t: Translate, show: (value: string) => string): string {
  if (compareDecimals(limits.max, limits.min) <= 0) return t('sell_amount_not_available', { currency: ticker });
  return t('sell_amount_limits', { min: show(limits.min), max: show(limits.max), currency: ticker });
}

export type AmountCheck = { fiatAmount: string; limits?: { min: string; max: string }; error?: MessageKey; canContinue: boolean };

/** SPEC §5 sell amount: strictly between the limits; zero blocks; max not above min is sell_limit_error. */
export function checkSellAmount(amount: string, terms: SellTerms, available: string, decimals: number): AmountCheck {
  const limits = cryptoLimits(terms.limits, terms.rate?.rate, decimals);
  const typed = amount !== '' && amount !== '.' ? amount.replace(/\.$/, '') : '0';
  const fiatAmount = terms.rate ? multiplyDecimals(typed, terms.rate.rate, 2, 'down') : '0';
  if (!limits) return { fiatAmount, canContinue: false };
  if (compareDecimals(limits.max, limits.min) <= 0) return { fiatAmount, limits, error: 'sell_limit_error', canContinue: false };
  if (compareDecimals(typed, '0') <= 0) return { fiatAmount, limits, canContinue: false };
  if (compareDecimals(typed, limits.min) <= 0 || compareDecimals(typed, limits.max) >= 0) return { fiatAmount, limits, error: 'sell_amount_limits', canContinue: false };
  if (fractionOf(typed) > decimals) return { fiatAmount, limits, error: 'sell_amount_limits', canContinue: false };
  if (compareDecimals(typed, available) > 0) return { fiatAmount, limits, error: 'sell_not_enough', canContinue: false };
  return { fiatAmount, limits, canContinue: true };
}

/** SPEC §8: the gateway's own message for a refusal; 'Payouts are temporarily unavailable…' otherwise. */
export function sellErrorText(error: unknown): string {
  return errorText(error, { serverMessage: 'refusal', fallback: 'sell_unavailable' });
}

/** What a reload brings back (issue 19 item 14): the asset, the amount and the step; never a typed card number. */
type SellResume = { currency: string; amount: string; savedCardId: string | null; review: SellReview | null };
const sellResume = createResume<SellResume>('sell');

/** The sell flow (SPEC §2 Sell): /sell/get moves on to pay at once (RUB is the only payout currency), then order, review, success. */
export const sellFlow = createFlow(['sellGet', 'sellPay', 'sellOrder', 'sellOrderReview', 'sellSuccess'], (scope) => {
  const $sellCurrency = atom<string | null>(null);
  /** The card step is its own history entry (?step=card), so the browser's back returns to the amount (issue 19 item 15). */
  const $sellStep = computed($router, (page): 'amount' | 'card' => (page?.route === 'sellOrder' && page.search.step === 'card' ? 'card' : 'amount'));
  /** Whether this visit pushed the card step (then 'Change amount' is the browser's back). */
  let pushedCard = false;
  const $sellAmount = atom('');
  const $sellTerms = atom<SellTerms>({ loading: false, failed: false, cards: [] });
  const $cardNumber = atom('');
  const $cardLookup = atom<CardLookup | null>(null);
  const $savedCardId = atom<string | null>(null);
  const $saveCard = atom(false);
  const $sellReview = atom<SellReview | null>(null);
  const $sellOrder = atom<SellOrderView | null>(null);
  const $sellChoosing = atom<string | null>(null);

  const $sellCoin = computed([$sellCurrency, $coins], (currency, coins): CoinMeta | undefined => (currency ? coins[currency] : undefined));
  const $sellAvailable = computed([$sellCurrency, $balances], (currency, balances) => balances.data?.find((item) => item.currency === currency)?.totalAvailable ?? '0');

  const $sellAmountCheck = computed([$sellAmount, $sellTerms, $sellAvailable, $sellCoin, $sellCurrency], (amount, terms, available, coin, currency): AmountCheck => {
    const decimals = coin?.decimals ?? (currency ? decimalsOf(currency) : undefined);
    // No known currency, no amount to check: its decimals are never guessed.
    return decimals === undefined ? { fiatAmount: '0', canContinue: false } : checkSellAmount(amount, terms, available, decimals);
  });

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

  function resetFlow(): void {
    $sellAmount.set('');
    $savedCardId.set(null);
    $sellReview.set(null);
    clearCard();
  }

  /** /sell/pay: picks the crypto to sell; one the account lacks is added first. */
  async function chooseSellAsset(currency: string): Promise<void> {
    if ($sellChoosing.get()) return;
    $sellChoosing.set(currency);
    try {
      await addCurrencies([currency]);
      if ($sellCurrency.get() !== currency) resetFlow();
      $sellCurrency.set(currency);
      openPage($router, 'sellOrder');
    } catch {
      showToast($t.get()('sell_unavailable'), 'error');
    } finally {
      $sellChoosing.set(null);
    }
  }

  /** Limits, a fixed rate and the saved cards for the order screen. */
  async function loadSellTerms(): Promise<void> {
    const account = $accountId.get();
    const currency = $sellCurrency.get();
    if (!account || !currency) return;
    $sellTerms.set({ ...$sellTerms.get(), loading: true, failed: false });
    try {
      const [limits, rate, cards] = await Promise.all([getSellLimits(account, SELL_FIAT), getSellRate(account, SELL_FIAT, currency), getSavedCards(account, SELL_FIAT)]);
      $sellTerms.set({ loading: false, failed: false, limits, rate, cards, rateDeadline: platform().now() + rate.expiresInSeconds * 1000 });
      rateCountdown.restart();
    } catch {
      $sellTerms.set({ loading: false, failed: true, cards: [] });
    }
  }

  // The order screen loads its terms when shown (and again once the account is known).
  // (Also when the crypto is chosen while the flow is open: the card step's guard keeps the check mounted.)
  onMount($sellAmountCheck, () =>
    computed([$accountId, $sellCurrency], (account, currency) => (account && currency ? `${account}:${currency}` : null)).subscribe((key) => {
      if (key) void loadSellTerms();
    }),
  );

  /** SPEC §5 amounts: digits, optional decimals, comma as the point, 8 and 8. */
  function setSellAmount(text: string): void {
    const value = acceptTypedAmount(text);
    if (value !== undefined) $sellAmount.set(value);
  }

  /** The rate's countdown (issue 19 item 17): shown on the amount and the review; at 0 the rate is updated by the user. */
  const rateCountdown = createCountdown(computed($sellTerms, (terms) => terms.rateDeadline ?? null), () => platform().now());
  const $sellSecondsLeft = rateCountdown.$secondsLeft;
  const $sellRateExpired = computed([$sellTerms, $sellSecondsLeft], (terms, left) => terms.rateDeadline !== undefined && left <= 0);

  /** 'Update rate': a fresh rate, and a new key for the review (the old order terms are gone). */
  async function updateSellRate(): Promise<void> {
    const review = $sellReview.get();
    if (review) $sellReview.set({ ...review, idempotencyKey: newIdempotencyKey() });
    await loadSellTerms();
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

  /** The success screen follows the order until the bank has paid (or declined). */
  onMount($sellOrder, () => {
    const timer = setInterval(() => {
      const account = $accountId.get();
      const order = $sellOrder.get();
      if (!account || !order || order.state !== 'PROCESSING') return;
      getSellOrder(account, order.id).then(
        (next) => {
          if ($sellOrder.get()?.id !== next.id) return;
          $sellOrder.set(next);
          if (next.state !== 'PROCESSING') void refreshBalances();
        },
        () => {},
      );
    }, ORDER_POLL_MS);
    return () => clearInterval(timer);
  });

  // A reload on the order or the review brings the visit back; a typed card number is never kept, so without a
  // saved card the review becomes the card step again.
  const entry = $router.get();
  if (entry && (entry.route === 'sellOrder' || entry.route === 'sellOrderReview')) {
    const stop = sellResume.restore(
      $accountId,
      (kept) => {
        $sellCurrency.set(kept.currency);
        $sellAmount.set(kept.amount);
        $savedCardId.set(kept.savedCardId);
        if (kept.review && kept.savedCardId) $sellReview.set({ ...kept.review, busy: false, askingPasscode: false });
        else if (entry.route === 'sellOrderReview') redirectPage($router, 'sellOrder', {}, { step: 'card' });
      },
      () => {
        $sellCurrency.set(null);
        resetFlow();
      },
    );
    scope.onLeave(stop);
  } else sellResume.clear();
  const saveSell = () => {
    const currency = $sellCurrency.get();
    sellResume.save($accountId.get(), currency ? { currency, amount: $sellAmount.get(), savedCardId: $savedCardId.get(), review: $sellReview.get() } : undefined);
  };
  scope.follow($sellCurrency, saveSell);
  scope.follow($sellAmount, saveSell);
  scope.follow($savedCardId, saveSell);
  scope.follow($sellReview, saveSell);
  // A placed order is no longer in flight for the order screens.
  scope.follow($sellOrder, (order) => {
    if (order) sellResume.clear();
  });

  scope.onLeave(clearCard);
  scope.onLeave(() => sellResume.clear());
  // SPEC §2 /sell/get: RUB is the only payout currency, so it is chosen at once and the flow moves on.
  scope.guard([], (page) => (page.route === 'sellGet' ? { route: 'sellPay' } : undefined));
  // Without a chosen crypto (a reload, an address typed) the order and its review go back to the choice.
  scope.guard([$accountId, $sellCurrency], (page) => ((page.route === 'sellOrder' || page.route === 'sellOrderReview') && $accountId.get() && !$sellCurrency.get() ? { route: 'sellPay' } : undefined));
  scope.guard([$sellReview, $sellCoin], (page) => (page.route === 'sellOrderReview' && !$sellReview.get() ? { route: $sellCoin.get() ? 'sellOrder' : 'sellPay' } : undefined));
  // The card step without an amount that may go on (a reload, an address typed) is the amount step.
  scope.guard([$sellTerms, $sellAmountCheck], (page) => {
    const terms = $sellTerms.get();
    return page.route === 'sellOrder' && page.search.step === 'card' && terms.rate && !terms.loading && !$sellAmountCheck.get().canContinue ? { route: 'sellOrder' } : undefined;
  });
  scope.guard([$sellOrder], (page) => (page.route === 'sellSuccess' && !$sellOrder.get() ? { route: 'home' } : undefined));

  return {
    $sellCurrency,
    $sellStep,
    $sellAmount,
    $sellTerms,
    $cardNumber,
    $cardLookup,
    $savedCardId,
    $saveCard,
    $sellReview,
    $sellOrder,
    $sellChoosing,
    $sellCoin,
    $sellAvailable,
    $sellAmountCheck,
    $sellSecondsLeft,
    $sellRateExpired,
    updateSellRate,
    $cardValid,
    $canReview,
    $reviewCard,
    chooseSellAsset,
    loadSellTerms,
    setSellAmount,
    continueToCard,
    backToAmount,
    setCardNumber,
    selectSavedCard,
    setSaveCard,
    continueToReview,
    confirmSellReview,
    confirmSell,
  };
});

export type SellVisit = ReturnType<typeof sellFlow.open>;
