// The swap flow's rules and shapes (SPEC §5), pure: the steps in this folder and the tests read them.
import type { QuoteRequest, QuoteView, SwapLimitView, SwapOrderView, SwapPair } from '../../api/swap.ts';
import type { AssetItem } from '../../api/wallet.ts';
import { compareDecimals, displayDecimal } from '../../lib/amount.ts';
import { formatCrypto, tickerOf } from '../../lib/format.ts';
import type { Locale } from '../../lib/preferences.ts';
import type { CoinMeta } from '../../lib/currencies.ts';
import { isZeroAmount, normalTypedAmount } from '../../lib/typed-amount.ts';
import type { MessageKey } from '../../lib/text.ts';
import type { Translate } from '../i18n.ts';

/** SPEC §9: quote requests wait 300 ms after the last keystroke; a review lasts 300 s. */
export const SWAP_DEBOUNCE_MS = 300;
export const SWAP_REVIEW_SECONDS = 300;

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

export const EMPTY_SWAP_FORM: SwapForm = { sourceAmount: '', destinationAmount: '', typed: null, quote: undefined, quoting: false, quoteFailed: false, submitting: false };

export function requestOf(side: SwapSide, amount: string, from: string, to: string): QuoteRequest {
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

/**
 * The pair being chosen (SPEC §2 Swap); `fresh` says it was set from outside the choosers, so the amounts start
 * empty. A pair Home asked for (quick swap path) is taken when the flow opens, or at once when it is open.
 */
export type SwapSelection = { from: string | null; to: string | null; fresh: boolean };
