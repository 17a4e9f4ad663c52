/**
 * The one amount type: a currency and bigint atomic units of it. Its decimals always come from the catalogue
 * (`requireDecimals`), so an unknown currency throws instead of being guessed.
 */
import { formatUnits, parseDecimal, pow10 } from './amount.ts';
import { requireDecimals } from './currencies.ts';

export type Money = Readonly<{ currency: string; units: Units }>;

/** Units of a known currency as Money; throws on an unknown currency. */
export function money(currency: string, units: Units): Money {
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
  return { currency, units: unitsOf(parseDecimal(text, places) * pow10(decimals - places)) };
}

/** The exact decimal string of Money, trailing zeros trimmed: BTC 1500000n → "0.015". */
export function formatMoney(m: Money): string {
  return formatUnits(m.units, requireDecimals(m.currency));
}

declare const unitsBrand: unique symbol;

/**
 * Atomic units that know their currency, at compile time only (issue 34 item 4; blink's `PaymentAmount<T>`): a plain
 * bigint at run time, so nothing changes on the wire. `Units<'BTC'>` and `Units<'USDT'>` do not mix through
 * `addUnits`/`subtractUnits`; where the currency is known only at run time the generic `Units` (any currency) stands.
 * A Units is a bigint, so it goes anywhere a bigint goes; a bare bigint becomes one only through `unitsOf` (a computed
 * value) or the row reader in src/server/db/amounts.ts (a column).
 */
export type Units<C extends string = string> = bigint & { readonly [unitsBrand]: C };

/** A bigint already known to be units of `C` (a computed amount, a constant), branded; no run-time effect. */
export function unitsOf<C extends string = string>(value: bigint): Units<C> {
  return value as Units<C>;
}

/** The sum of units of one currency; units of two different known currencies do not type-check. */
export function addUnits<C extends string>(a: Units<C>, b: Units<NoInfer<C>>): Units<C> {
  return (a + b) as Units<C>;
}

/** The difference of units of one currency; units of two different known currencies do not type-check. */
export function subtractUnits<C extends string>(a: Units<C>, b: Units<NoInfer<C>>): Units<C> {
  return (a - b) as Units<C>;
}

/** The same units the other way (a posting's debit side): −a, of the same currency. */
export function negateUnits<C extends string>(a: Units<C>): Units<C> {
  return -a as Units<C>;
}

/**
 * The sum of several amounts of one currency (zero for none): the legs of a settlement, the parts of a total. Units of
 * two known currencies sum to units of both, which no amount of either accepts.
 */
export function sumUnits<C extends string>(values: readonly Units<C>[]): Units<C> {
  return values.reduce<bigint>((sum, value) => sum + value, 0n) as Units<C>;
}
