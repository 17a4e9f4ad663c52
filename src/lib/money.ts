/**
 * The one amount type: a currency and bigint atomic units of it. Its decimals always come from the catalogue
 * (`requireDecimals`), so an unknown currency throws instead of being guessed.
 */
import { formatUnits, parseDecimal, pow10 } from './amount.ts';
import { requireDecimals } from './currencies.ts';

export type Money = Readonly<{ currency: string; units: bigint }>;

/** Units of a known currency as Money; throws on an unknown currency. */
export function money(currency: string, units: bigint): Money {
  requireDecimals(currency);
  return { currency, units };
}

/**
 * A decimal string to Money of `currency`; more decimals than `places` (the currency's decimals by default, never
 * more) are refused with AmountError, as parseDecimal does.
 */
export function parseMoney(currency: string, text: string, options: { places?: number } = {}): Money {
  const decimals = requireDecimals(currency);
  const places = Math.min(options.places ?? decimals, decimals);
  return { currency, units: parseDecimal(text, places) * pow10(decimals - places) };
}

/** The exact decimal string of Money, trailing zeros trimmed: BTC 1500000n → "0.015". */
export function formatMoney(m: Money): string {
  return formatUnits(m.units, requireDecimals(m.currency));
}
