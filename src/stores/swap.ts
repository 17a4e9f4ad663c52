import { atom, computed, map, onMount } from 'nanostores';
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
import { AMOUNT_TYPING, compareDecimals } from '../lib/amount.ts';
import type { CoinMeta } from '../lib/currencies.ts';
import type { MessageKey } from '../lib/text.ts';
import { $accountId } from './account.ts';
import { $balances, refreshBalances } from './balances.ts';
import { $activeCoins } from './catalogue.ts';
import { showErrorToast } from './errors.ts';
import { isPasscodeRefusal } from './passcode-entry.ts';
import { createQuery } from './query.ts';
import { $router } from './router.ts';
import { $disabledAssets } from './settings.ts';
import { $swapSelection } from './swap-selection.ts';
import { $profile } from './user.ts';

/** SPEC §9: quote requests wait 300 ms after the last keystroke; a review lasts 300 s. */
export const SWAP_DEBOUNCE_MS = 300;
export const SWAP_REVIEW_SECONDS = 300;

export const pairsQuery = createQuery<string, SwapPair[]>({ key: (account) => account, load: (account) => getCurrencyPairs(account) });
export const $swapPairs = pairsQuery.watch($accountId);

type LimitArgs = { account: string; from: string; to: string };
export const limitQuery = createQuery<LimitArgs, SwapLimitView>({ key: (a) => `${a.account}:${a.from}:${a.to}`, load: (a) => getSwapLimit(a.account, a.from, a.to) });
const $limitArgs = computed([$accountId, $swapSelection], (account, pair) => (account && pair.from && pair.to ? { account, from: pair.from, to: pair.to } : null));
export const $swapLimit = limitQuery.watch($limitArgs);

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
export const $destinationChoices = computed([$activeCoins, $balances, $swapPairs, $swapSelection], (coins, balances, pairs, pair) =>
  destinationChoices(coins, balances.data, pairs.data, pair.from),
);

/** SPEC §2: the arrow is disabled when the reverse pair is unsupported. */
export const $canReverse = computed([$swapPairs, $swapSelection], (pairs, pair) => supportsPair(pairs.data, pair.to, pair.from));

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
  submitting: boolean;
};

const EMPTY_FORM: SwapForm = { sourceAmount: '', destinationAmount: '', typed: null, quote: undefined, quoting: false, quoteFailed: false, submitting: false };
export const $swapForm = map<SwapForm>({ ...EMPTY_FORM });

let timer: ReturnType<typeof setTimeout> | undefined;
let controller: AbortController | undefined;
let sequence = 0;

function stopQuoting(): void {
  if (timer) clearTimeout(timer);
  timer = undefined;
  controller?.abort();
  controller = undefined;
  sequence++;
}

const isZero = (value: string) => !/[1-9]/.test(value);
const normal = (value: string) => value.replace(',', '.').replace(/\.$/, '').replace(/^\./, '0.');

function requestOf(side: SwapSide, amount: string, from: string, to: string): QuoteRequest {
  return side === 'source'
    ? { sourceCurrency: from, destinationCurrency: to, sourceAmount: normal(amount) }
    : { sourceCurrency: from, destinationCurrency: to, destinationAmount: normal(amount) };
}

/** Asks for a quote 300 ms after the last change, by the side typed; only the newest answer counts. */
function scheduleQuote(): void {
  stopQuoting();
  const form = $swapForm.get();
  const { from, to } = $swapSelection.get();
  const account = $accountId.get();
  const side = form.typed;
  const amount = side === 'source' ? form.sourceAmount : side === 'destination' ? form.destinationAmount : '';
  if (!side || !from || !to || !account || isZero(amount)) {
    $swapForm.set({ ...$swapForm.get(), quote: undefined, quoting: false, quoteFailed: false });
    return;
  }
  $swapForm.set({ ...$swapForm.get(), quoting: true, quoteFailed: false });
  const mine = sequence;
  timer = setTimeout(() => {
    timer = undefined;
    controller = new AbortController();
    preCalculateSwap(account, requestOf(side, amount, from, to), controller.signal).then(
      (quote) => {
        if (mine !== sequence) return;
        const other = side === 'source' ? { destinationAmount: quote.destinationAmount } : { sourceAmount: quote.sourceAmount };
        $swapForm.set({ ...$swapForm.get(), ...other, quote, quoting: false, quoteFailed: false });
      },
      () => {
        if (mine !== sequence) return;
        $swapForm.set({ ...$swapForm.get(), quote: undefined, quoting: false, quoteFailed: true });
      },
    );
  }, SWAP_DEBOUNCE_MS);
}

/** SPEC §5: digits, an optional point or comma, at most 8 digits either side; anything else is not taken. */
export function typeAmount(side: SwapSide, text: string): void {
  if (!AMOUNT_TYPING.test(text)) return;
  const other = side === 'source' ? { destinationAmount: '' } : { sourceAmount: '' };
  $swapForm.set({ ...$swapForm.get(), [side === 'source' ? 'sourceAmount' : 'destinationAmount']: text, ...other, typed: text === '' ? null : side, quote: undefined });
  scheduleQuote();
}

/** SPEC §2: the arrow exchanges the two currencies and the two amounts; the quote follows the side still typed. */
export function reversePair(): void {
  const pair = $swapSelection.get();
  if (!$canReverse.get() || !pair.from || !pair.to) return;
  const form = $swapForm.get();
  $swapSelection.set({ from: pair.to, to: pair.from, fresh: false });
  const typed: SwapSide | null = form.typed === 'source' ? 'destination' : form.typed === 'destination' ? 'source' : null;
  $swapForm.set({ ...form, sourceAmount: form.destinationAmount, destinationAmount: form.sourceAmount, typed, quote: undefined });
  scheduleQuote();
}

/** Choosing a source: on to the order when the destination still fits, else to choosing one. */
export function chooseSource(currency: string): void {
  const { to } = $swapSelection.get();
  const keepTo = to !== currency && supportsPair($swapPairs.get().data, currency, to);
  $swapSelection.set({ from: currency, to: keepTo ? to : null, fresh: false });
  resetAmounts();
  openPage($router, keepTo ? 'swapOrder' : 'swapTo');
}

export function chooseDestination(currency: string): void {
  $swapSelection.set({ ...$swapSelection.get(), to: currency, fresh: false });
  resetAmounts();
  openPage($router, 'swapOrder');
}

function resetAmounts(): void {
  stopQuoting();
  $swapForm.set({ ...EMPTY_FORM });
}

// A pair set from outside (Home's quick swap path) starts with empty amounts.
$swapSelection.subscribe((pair) => {
  if (pair.fresh) resetAmounts();
});

export type SwapProblem = { key: MessageKey; params?: Record<string, string> };

/** SPEC §5: above 0, not below minLimit, not above maxLimit, not above the balance; in that order. */
export function swapProblemOf(input: { source: string; limit: SwapLimitView | undefined; available: string | undefined; currency: string; ticker: string }): SwapProblem | null {
  const { source, limit } = input;
  if (source === '' || isZero(source)) return null;
  if (limit && compareDecimals(source, limit.minLimit) < 0) return { key: 'swap_min_limit_error', params: { amount: limit.minLimit, currency: input.ticker } };
  if (limit && compareDecimals(source, limit.maxLimit) > 0) return { key: 'swap_max_limit_error', params: { amount: limit.maxLimit, currency: input.ticker } };
  if (compareDecimals(source, input.available ?? '0') > 0) return { key: 'swap_not_enough' };
  return null;
}

const tickerOf = (currency: string) => currency.split('_')[0] ?? currency;

/** The source amount the limits apply to: typed, or the quote's when the destination was typed. */
const $sourceForChecks = computed($swapForm, (form) => {
  const typedSource = form.typed === 'source' ? normal(form.sourceAmount) : form.quote?.sourceAmount ?? '';
  return /^\d+(\.\d+)?$/.test(typedSource) ? typedSource : '';
});

export const $swapProblem = computed([$sourceForChecks, $swapLimit, $balances, $swapSelection], (source, limit, balances, pair) =>
  pair.from
    ? swapProblemOf({ source, limit: limit.data, available: balances.data?.find((i) => i.currency === pair.from)?.totalAvailable, currency: pair.from, ticker: tickerOf(pair.from) })
    : null,
);

export const $canContinue = computed([$swapForm, $swapProblem, $swapLimit], (form, problem, limit) => !!form.quote && !form.quoting && !form.submitting && problem === null && !!limit.data);

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

export const $swapReview = atom<SwapReview | null>(null);
export const $swapResult = atom<SwapOrderView | null>(null);

const idempotencyKey = () => (globalThis.crypto?.randomUUID ? globalThis.crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`);

/** A fresh quote by the same request, then the order that holds its source: the review's 300 s start now. */
async function placeOrder(account: string, request: QuoteRequest): Promise<SwapReview> {
  const quote = await preCalculateSwap(account, request);
  const order = await createSwapOrder(account, { quoteId: quote.quoteId, sourceAmount: quote.sourceAmount, idempotencyKey: idempotencyKey() });
  return { order, deadline: Date.now() + Math.min(order.expiresInSeconds, SWAP_REVIEW_SECONDS) * 1000, request, busy: false, expired: false };
}

/** The order form's continue: SPEC §8 order creation failures say common_something_went_wrong. */
export async function continueToReview(): Promise<void> {
  const account = $accountId.get();
  const { from, to } = $swapSelection.get();
  const form = $swapForm.get();
  if (!account || !from || !to || !form.typed || !$canContinue.get()) return;
  $swapForm.setKey('submitting', true);
  try {
    const amount = form.typed === 'source' ? form.sourceAmount : form.destinationAmount;
    const review = await placeOrder(account, requestOf(form.typed, amount, from, to));
    $swapReview.set(review);
    void refreshBalances();
    openPage($router, 'swapOrderReview');
  } catch (error) {
    showErrorToast(error, { fallback: 'common_something_went_wrong' });
  } finally {
    $swapForm.setKey('submitting', false);
  }
}

const $tick = atom(Date.now());

/** Seconds left on the review, ticking once a second while a screen shows it. */
export const $swapSecondsLeft = computed([$swapReview, $tick], (review, now) => {
  if (!review || review.expired) return 0;
  return Math.max(0, Math.ceil((review.deadline - now) / 1000));
});
onMount($swapSecondsLeft, () => {
  $tick.set(Date.now());
  const interval = setInterval(() => $tick.set(Date.now()), 1000);
  return () => clearInterval(interval);
});

/** SPEC §4: minutes:seconds, 5:00 down to 0:00. */
export function formatCountdown(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

export const $pinCodeActive = computed($profile, (profile) => profile.data?.pinCodeActive === true);

/** The review shows the passcode prompt in place of its summary once confirm is pressed with a passcode on. */
export const $swapPasscodeOpen = atom(false);

export function requestSwapConfirmation(): void {
  if ($swapReview.get() && $swapSecondsLeft.get() > 0) $swapPasscodeOpen.set(true);
}

/**
 * Confirms the order under review; the pincode header goes only when non-empty (SPEC §5). A passcode refusal is
 * thrown back to the prompt (which clears and shows it); other failures show the gateway's message (SPEC §8).
 */
export async function confirmSwap(pincode?: string): Promise<void> {
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
export async function updateSwapRate(): Promise<void> {
  const account = $accountId.get();
  const review = $swapReview.get();
  if (!account || !review || review.busy) return;
  $swapReview.set({ ...review, busy: true });
  try {
    await cancelSwapOrder(account, review.order.id).catch(() => undefined);
    $swapReview.set(await placeOrder(account, review.request));
    $swapPasscodeOpen.set(false);
    $tick.set(Date.now());
    void refreshBalances();
  } catch (error) {
    const current = $swapReview.get();
    if (current) $swapReview.set({ ...current, busy: false });
    showErrorToast(error, { fallback: 'common_something_went_wrong' });
  }
}

// Leaving the review without confirming gives the order's hold back at once (the worker would, after 300 s).
$router.listen((page) => {
  const review = $swapReview.get();
  const account = $accountId.get();
  if (page?.route === 'swapOrderReview' || !review || !account) return;
  $swapReview.set(null);
  $swapPasscodeOpen.set(false);
  void cancelSwapOrder(account, review.order.id)
    .catch(() => undefined)
    .then(() => refreshBalances());
});
