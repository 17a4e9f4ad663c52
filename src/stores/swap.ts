import { atom, computed, map } from 'nanostores';
import { openPage } from '@nanostores/router';
import {
  cancelSwapOrder,
  confirmSwapOrder,
  createSwapOrder,
  getCurrencyPairs,
  getSwapLimit,
  preCalculateSwap,
  type QuoteRequest,
  type SwapLimitView,
  type SwapOrderView,
  type SwapPair,
  type QuoteView,
} from '../api/swap.ts';
import { toWalletError } from '../api/errors.ts';
import type { AssetItem } from '../api/wallet.ts';
import { compareDecimals, displayDecimal } from '../lib/amount.ts';
import { formatCrypto, tickerOf } from '../lib/format.ts';
import type { Locale } from '../lib/preferences.ts';
import type { CoinMeta } from '../lib/currencies.ts';
import { newIdempotencyKey } from '../lib/idempotency-key.ts';
import { acceptTypedAmount, isZeroAmount, normalTypedAmount } from '../lib/typed-amount.ts';
import type { MessageKey } from '../lib/text.ts';
import { $accountId } from './account.ts';
import { $balances, refreshBalances } from './balances.ts';
import { $activeCoins, $coins } from './catalogue.ts';
import { errorText, showErrorToast } from './errors.ts';
import { isPasscodeRefusal } from './passcode-entry.ts';
import { createQuery } from './query.ts';
import type { Translate } from './i18n.ts';
import { $router } from './router.ts';
import { $disabledAssets, $locale } from './settings.ts';
import { takeRequestedSwapPair, $requestedSwapPair } from './swap-selection.ts';
import { createCountdown, formatCountdown } from './primitives/countdown.ts';
import { createDebouncedRequest } from './primitives/debounced-request.ts';
import { createFlow } from './primitives/flow.ts';
import { createResume } from './primitives/resume.ts';
import { $profile } from './user.ts';

/** SPEC §9: quote requests wait 300 ms after the last keystroke; a review lasts 300 s. */
export const SWAP_DEBOUNCE_MS = 300;
export const SWAP_REVIEW_SECONDS = 300;

export const pairsQuery = createQuery<string, SwapPair[]>({ key: (account) => account, load: (account) => getCurrencyPairs(account) });
export const $swapPairs = pairsQuery.watch($accountId);

type LimitArgs = { account: string; from: string; to: string };
export const limitQuery = createQuery<LimitArgs, SwapLimitView>({ key: (a) => `${a.account}:${a.from}:${a.to}`, load: (a) => getSwapLimit(a.account, a.from, a.to) });

export function supportsPair(pairs: readonly SwapPair[] | undefined, from: string | null, to: string | null): boolean {
  return !!from && !!to && (pairs ?? []).some((p) => p.sourceCurrency === from && p.destinationCurrency === to);
}

export type SwapChoice = { coin: CoinMeta; amount: string | undefined };

/** /swap/from: the assets the account holds that swap into something, not hidden on this device. */
export function sourceChoices(coins: readonly CoinMeta[], items: readonly AssetItem[] | undefined, pairs: readonly SwapPair[] | undefined, hidden: readonly string[]): SwapChoice[] {
  const sources = new Set((pairs ?? []).map((p) => p.sourceCurrency));
  return coins
    .filter((coin) => sources.has(coin.currency) && !hidden.includes(coin.currency))
    .flatMap((coin) => {
      const item = items?.find((i) => i.currency === coin.currency);
      return item ? [{ coin, amount: item.totalAvailable }] : [];
    });
}

/** /swap/to: what the chosen source swaps into. */
export function destinationChoices(coins: readonly CoinMeta[], items: readonly AssetItem[] | undefined, pairs: readonly SwapPair[] | undefined, from: string | null): SwapChoice[] {
  return coins
    .filter((coin) => supportsPair(pairs, from, coin.currency))
    .map((coin) => ({ coin, amount: items?.find((i) => i.currency === coin.currency)?.totalAvailable }));
}

export const $sourceChoices = computed([$activeCoins, $balances, $swapPairs, $disabledAssets], (coins, balances, pairs, hidden) => sourceChoices(coins, balances.data, pairs.data, hidden));

export type SwapSide = 'source' | 'destination';
export type SwapForm = {
  sourceAmount: string;
  destinationAmount: string;
  /** Which side the user typed: the quote goes by it and fills the other. */
  typed: SwapSide | null;
  quote: QuoteView | undefined;
  quoting: boolean;
  /** SPEC §8: a failed quote shows common_something_went_wrong. */
  quoteFailed: boolean;
  /** Why the last quote failed, in the user's words (no current price, the desk cannot sell that much...). */
  quoteError?: string | undefined;
  submitting: boolean;
};

const EMPTY_FORM: SwapForm = { sourceAmount: '', destinationAmount: '', typed: null, quote: undefined, quoting: false, quoteFailed: false, submitting: false };


function requestOf(side: SwapSide, amount: string, from: string, to: string): QuoteRequest {
  return side === 'source'
    ? { sourceCurrency: from, destinationCurrency: to, sourceAmount: normalTypedAmount(amount) }
    : { sourceCurrency: from, destinationCurrency: to, destinationAmount: normalTypedAmount(amount) };
}

/**
 * The side the user did not type, filled from the quote by its own coin's round (SPEC §5; issue 33 item 3: the arrow
 * then carries each amount with its currency's decimals): what they get rounded down (never more than arrives), what
 * they pay rounded up (never less than is taken). The order is placed by the typed side, so this is display only.
 */
export function quotedSide(side: SwapSide, quote: Pick<QuoteView, 'sourceCurrency' | 'destinationCurrency' | 'sourceAmount' | 'destinationAmount'>, coins: Readonly<Record<string, Pick<CoinMeta, 'round'>>>): Partial<SwapForm> {
  return side === 'source'
    ? { destinationAmount: displayDecimal(quote.destinationAmount, coins[quote.destinationCurrency]?.round ?? 8, 'down') }
    : { sourceAmount: displayDecimal(quote.sourceAmount, coins[quote.sourceCurrency]?.round ?? 8, 'up') };
}

/**
 * The rate line "1 BTC ≈ 64,675 USDT": the rate is in the destination coin, so it is shown by that coin's round; a
 * rate that round would show as 0 (a cheap coin against a dear one) is shown to 8 decimals instead.
 */
export function swapRateText(t: Translate, input: { from: string; to: string; rate: string | undefined; toRound: number | undefined; locale: Locale }): string {
  const { rate } = input;
  const shown = rate === undefined ? '…' : formatCrypto(rate, input.toRound, input.locale);
  const tiny = rate !== undefined && compareDecimals(rate, '0') > 0 && compareDecimals(displayDecimal(rate, input.toRound ?? 2), '0') === 0;
  return t('swap_rate', { from: tickerOf(input.from), rate: tiny ? formatCrypto(rate, 8, input.locale) : shown, to: tickerOf(input.to) });
}

export type SwapProblem = { key: MessageKey; params?: Record<string, string> };

/** SPEC §5: above 0, not below minLimit, not above maxLimit, not above the balance; in that order. */
export function swapProblemOf(input: { source: string; limit: SwapLimitView | undefined; available: string | undefined; currency: string; ticker: string; locale?: Locale }): SwapProblem | null {
  const { source, limit } = input;
  if (source === '' || isZeroAmount(source)) return null;
  // The limit is written as every other amount of the screen: the language's decimal mark, 8 decimals at most.
  const amount = (value: string) => formatCrypto(value, 8, input.locale);
  if (limit && compareDecimals(source, limit.minLimit) < 0) return { key: 'swap_min_limit_error', params: { amount: amount(limit.minLimit), currency: input.ticker } };
  if (limit && compareDecimals(source, limit.maxLimit) > 0) return { key: 'swap_max_limit_error', params: { amount: amount(limit.maxLimit), currency: input.ticker } };
  if (compareDecimals(source, input.available ?? '0') > 0) return { key: 'swap_not_enough' };
  return null;
}


export type SwapReview = {
  order: SwapOrderView;
  /** Local time (ms) at which the quote runs out. */
  deadline: number;
  /** How the order was asked for, so 'Update rate' asks the same. */
  request: QuoteRequest;
  busy: boolean;
  /** The gateway refused the order as expired before the countdown ran out. */
  expired: boolean;
};

export { formatCountdown };

export const $pinCodeActive = computed($profile, (profile) => profile.data?.pinCodeActive === true);

/** A fresh quote by the same request, then the order under review (it holds nothing until confirmed): the review's 300 s start now. */
async function placeOrder(account: string, request: QuoteRequest): Promise<SwapReview> {
  const quote = await preCalculateSwap(account, request);
  const order = await createSwapOrder(account, { quoteId: quote.quoteId, sourceAmount: quote.sourceAmount, idempotencyKey: newIdempotencyKey() });
  return { order, deadline: Date.now() + Math.min(order.expiresInSeconds, SWAP_REVIEW_SECONDS) * 1000, request, busy: false, expired: false };
}

/**
 * The pair being chosen (SPEC §2 Swap); `fresh` says it was set from outside the choosers, so the amounts start
 * empty. A pair Home asked for (quick swap path) is taken when the flow opens, or at once when it is open.
 */
export type SwapSelection = { from: string | null; to: string | null; fresh: boolean };

/** What a reload on the review brings back: the pair, the amounts typed and the order under review with its deadline. */
type SwapResume = { selection: SwapSelection; sourceAmount: string; destinationAmount: string; typed: SwapSide | null; review: SwapReview };
const swapResume = createResume<SwapResume>('swap');

/** The swap flow (SPEC §2 Swap): from, to, order, review, success; one visit's stores, guards and cleanup. */
export const swapFlow = createFlow(['swap', 'swapFrom', 'swapTo', 'swapOrder', 'swapOrderReview', 'swapOrderSuccess'], (scope) => {
  const requested = takeRequestedSwapPair();
  const $swapSelection = atom<SwapSelection>(requested ? { ...requested, fresh: true } : { from: null, to: null, fresh: true });
  const $swapForm = map<SwapForm>({ ...EMPTY_FORM });
  const $limitArgs = computed([$accountId, $swapSelection], (account, pair) => (account && pair.from && pair.to ? { account, from: pair.from, to: pair.to } : null));
  const $swapLimit = limitQuery.watch($limitArgs);
  const $destinationChoices = computed([$activeCoins, $balances, $swapPairs, $swapSelection], (coins, balances, pairs, pair) => destinationChoices(coins, balances.data, pairs.data, pair.from));
  /** SPEC §2: the arrow is disabled when the reverse pair is unsupported. */
  const $canReverse = computed([$swapPairs, $swapSelection], (pairs, pair) => supportsPair(pairs.data, pair.to, pair.from));

  const quotes = createDebouncedRequest({
    delayMs: SWAP_DEBOUNCE_MS,
    load: (input: { account: string; side: SwapSide; request: QuoteRequest }, signal) => preCalculateSwap(input.account, input.request, signal),
    onResult: (quote, { side }) => {
      $swapForm.set({ ...$swapForm.get(), ...quotedSide(side, quote, $coins.get()), quote, quoting: false, quoteFailed: false });
    },
    onError: (error) => $swapForm.set({ ...$swapForm.get(), quote: undefined, quoting: false, quoteFailed: true, quoteError: errorText(error, { fallback: 'common_something_went_wrong' }) }),
  });

  /** Asks for a quote 300 ms after the last change, by the side typed; only the newest answer counts. */
  function scheduleQuote(): void {
    quotes.cancel();
    const form = $swapForm.get();
    const { from, to } = $swapSelection.get();
    const account = $accountId.get();
    const side = form.typed;
    const amount = side === 'source' ? form.sourceAmount : side === 'destination' ? form.destinationAmount : '';
    if (!side || !from || !to || !account || isZeroAmount(amount)) {
      $swapForm.set({ ...$swapForm.get(), quote: undefined, quoting: false, quoteFailed: false });
      return;
    }
    $swapForm.set({ ...$swapForm.get(), quoting: true, quoteFailed: false });
    quotes.schedule({ account, side, request: requestOf(side, amount, from, to) });
  }

  /** SPEC §5: digits, an optional point or comma, at most 8 digits either side; anything else is not taken. */
  function typeAmount(side: SwapSide, typed: string): void {
    const text = acceptTypedAmount(typed);
    if (text === undefined) return;
    const other = side === 'source' ? { destinationAmount: '' } : { sourceAmount: '' };
    $swapForm.set({ ...$swapForm.get(), [side === 'source' ? 'sourceAmount' : 'destinationAmount']: text, ...other, typed: text === '' ? null : side, quote: undefined });
    scheduleQuote();
  }

  /** SPEC §2: the arrow exchanges the two currencies and the two amounts; the quote follows the side still typed. */
  function reversePair(): void {
    const pair = $swapSelection.get();
    if (!$canReverse.get() || !pair.from || !pair.to) return;
    const form = $swapForm.get();
    $swapSelection.set({ from: pair.to, to: pair.from, fresh: false });
    const typed: SwapSide | null = form.typed === 'source' ? 'destination' : form.typed === 'destination' ? 'source' : null;
    $swapForm.set({ ...form, sourceAmount: form.destinationAmount, destinationAmount: form.sourceAmount, typed, quote: undefined });
    scheduleQuote();
  }

  function resetAmounts(): void {
    quotes.cancel();
    $swapForm.set({ ...EMPTY_FORM });
  }

  /** Choosing a source: on to the order when the destination still fits, else to choosing one. */
  function chooseSource(currency: string): void {
    const { to } = $swapSelection.get();
    const keepTo = to !== currency && supportsPair($swapPairs.get().data, currency, to);
    $swapSelection.set({ from: currency, to: keepTo ? to : null, fresh: false });
    resetAmounts();
    openPage($router, keepTo ? 'swapOrder' : 'swapTo');
  }

  function chooseDestination(currency: string): void {
    $swapSelection.set({ ...$swapSelection.get(), to: currency, fresh: false });
    resetAmounts();
    openPage($router, 'swapOrder');
  }

  /** The source amount the limits apply to: typed, or the quote's when the destination was typed. */
  const $sourceForChecks = computed($swapForm, (form) => {
    const typedSource = form.typed === 'source' ? normalTypedAmount(form.sourceAmount) : (form.quote?.sourceAmount ?? '');
    return /^\d+(\.\d+)?$/.test(typedSource) ? typedSource : '';
  });

  const $swapProblem = computed([$sourceForChecks, $swapLimit, $balances, $swapSelection, $locale], (source, limit, balances, pair, locale) =>
    pair.from
      ? swapProblemOf({ source, limit: limit.data, available: balances.data?.find((i) => i.currency === pair.from)?.totalAvailable, currency: pair.from, ticker: tickerOf(pair.from), locale })
      : null,
  );

  const $canContinue = computed([$swapForm, $swapProblem, $swapLimit], (form, problem, limit) => !!form.quote && !form.quoting && !form.submitting && problem === null && !!limit.data);

  const $swapReview = atom<SwapReview | null>(null);
  const $swapResult = atom<SwapOrderView | null>(null);
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

  function requestSwapConfirmation(): void {
    if ($swapReview.get() && $swapSecondsLeft.get() > 0) $swapPasscodeOpen.set(true);
  }

  /**
   * Confirms the order under review; the pincode header goes only when non-empty (SPEC §5). A passcode refusal is
   * thrown back to the prompt (which clears and shows it); other failures show the gateway's message (SPEC §8).
   */
  async function confirmSwap(pincode?: string): Promise<void> {
    const account = $accountId.get();
    const review = $swapReview.get();
    if (!account || !review || review.busy) return;
    $swapReview.set({ ...review, busy: true });
    try {
      const order = await confirmSwapOrder(account, review.order.id, pincode || undefined);
      $swapResult.set(order);
      $swapPasscodeOpen.set(false);
      $swapReview.set(null);
      resetAmounts();
      void refreshBalances();
      openPage($router, 'swapOrderSuccess');
    } catch (error) {
      const code = toWalletError(error).code;
      const current = $swapReview.get();
      if (current) $swapReview.set({ ...current, busy: false, expired: current.expired || code === 'SWAP_ORDER_EXPIRED' });
      if (pincode && isPasscodeRefusal(error)) throw error;
      $swapPasscodeOpen.set(false);
      showErrorToast(error, { serverMessage: true, fallback: 'common_something_went_wrong' });
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

  // An order under review survives a reload (issue 19 item 14): the review comes back with its countdown. It holds
  // nothing and shows in no history until confirmed; leaving it in the app closes it (giveUpReview).
  if ($router.get()?.route === 'swapOrderReview') {
    const stop = swapResume.restore(
      $accountId,
      (kept) => {
        $swapSelection.set({ ...kept.selection, fresh: false });
        $swapForm.set({ ...EMPTY_FORM, sourceAmount: kept.sourceAmount, destinationAmount: kept.destinationAmount, typed: kept.typed });
        $swapReview.set({ ...kept.review, busy: false });
      },
      () => $swapReview.set(null),
    );
    scope.onLeave(stop);
  } else swapResume.clear();
  scope.follow($swapReview, (review) => {
    const form = $swapForm.get();
    swapResume.save($accountId.get(), review ? { selection: $swapSelection.get(), sourceAmount: form.sourceAmount, destinationAmount: form.destinationAmount, typed: form.typed, review } : undefined);
  });

  // A pair set from outside the choosers starts with empty amounts.
  scope.follow($swapSelection, (pair) => {
    if (pair.fresh) resetAmounts();
  });
  scope.follow($requestedSwapPair, () => {
    const pair = takeRequestedSwapPair();
    if (pair) $swapSelection.set({ ...pair, fresh: true });
  });
  scope.follow($router, (page) => {
    if (page?.route !== 'swapOrderReview') giveUpReview();
  });
  scope.onLeave(() => {
    giveUpReview();
    swapResume.clear();
    quotes.cancel();
  });
  scope.guard([$swapSelection], (page) => {
    const { from, to } = $swapSelection.get();
    if (page.route === 'swapTo' && !from) return { route: 'swapFrom' };
    if (page.route === 'swapOrder' && !from) return { route: 'swap' };
    if (page.route === 'swapOrder' && !to) return { route: 'swapTo' };
    return undefined;
  });
  scope.guard([$swapReview], (page) => (page.route === 'swapOrderReview' && !$swapReview.get() ? { route: 'swapOrder' } : undefined));
  scope.guard([$swapResult], (page) => (page.route === 'swapOrderSuccess' && !$swapResult.get() ? { route: 'home' } : undefined));

  return {
    $swapSelection,
    $swapForm,
    $swapLimit,
    $destinationChoices,
    $canReverse,
    $swapProblem,
    $canContinue,
    $swapReview,
    $swapResult,
    $swapPasscodeOpen,
    $swapSecondsLeft,
    typeAmount,
    reversePair,
    chooseSource,
    chooseDestination,
    continueToReview,
    requestSwapConfirmation,
    confirmSwap,
    updateSwapRate,
  };
});

export type SwapVisit = ReturnType<typeof swapFlow.open>;
