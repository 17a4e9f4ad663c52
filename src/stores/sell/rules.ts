// The sell flow's rules and shapes (SPEC §5, §8, §9), pure: the steps in this folder and the tests read them.
import type { CardInfo, SavedCard, SellLimits, SellQuote } from '../../api/sell.ts';
import { compareDecimals, divideUnits, formatUnits, multiplyDecimals, parseDecimal, pow10 } from '../../lib/amount.ts';
import type { MessageKey } from '../../lib/text.ts';
import { errorText } from '../errors.ts';
import type { Translate } from '../i18n.ts';

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
export const ORDER_POLL_MS = 2_000;

/** `rateDeadline`: local time (ms, the platform's clock) at which the fixed rate runs out. */
export type SellTerms = { loading: boolean; failed: boolean; limits?: SellLimits; rate?: Pick<SellQuote, 'rate' | 'rateId'>; rateDeadline?: number; cards: SavedCard[] };
export type CardLookup = { bin: string; loading: boolean; info?: CardInfo; problem?: 'not_sber' | 'failed' };

/** askingPasscode: the passcode prompt shows in place of the review (the passcode is on). */
export type SellReview = { idempotencyKey: string; busy: boolean; askingPasscode: boolean };

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
