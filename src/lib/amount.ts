/**
 * Exact money: decimal strings on the wire and on screen, bigint atomic units in the domain. No float here.
 */

/** What a user may type while editing (SPEC §5): up to 8 digits, then optionally a point or comma and up to 8. */
export const AMOUNT_TYPING = /^\d{0,8}(?:[.,]\d{0,8})?$/;
/** A complete amount as a user enters it: digits, optionally a decimal part; comma accepted as the point. */
export const AMOUNT_ENTERED = /^\d{1,8}(?:[.,]\d{1,8})?$/;
/** A decimal string as the gateway sends it: any length, optional sign. */
const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/;

export type AmountProblem = 'FORMAT' | 'PRECISION';

/** An amount that cannot be used: its format is wrong, or it has more decimals than the currency. */
export class AmountError extends Error {
  readonly problem: AmountProblem;
  constructor(problem: AmountProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}

/** A user's amount (SPEC §5 limits) to atomic units of a currency with `decimals`. */
export function parseAmount(text: string, decimals: number): bigint {
  const trimmed = text.trim();
  if (!AMOUNT_ENTERED.test(trimmed)) throw new AmountError('FORMAT', 'An amount has up to 8 digits before and 8 after the point');
  return parseDecimal(trimmed.replace(',', '.'), decimals);
}

/** Any exact decimal string to atomic units; digits past `decimals` must be zeros, else the amount is refused. */
export function parseDecimal(text: string, decimals: number): bigint {
  const match = DECIMAL.exec(text);
  if (!match) throw new AmountError('FORMAT', `Not a decimal number: ${JSON.stringify(text)}`);
  const [, sign, whole = '0', rawFraction = ''] = match;
  const fraction = rawFraction.replace(/0+$/, '');
  if (fraction.length > decimals) throw new AmountError('PRECISION', `At most ${decimals} decimals are allowed`);
  const units = BigInt(whole + fraction.padEnd(decimals, '0'));
  return sign ? -units : units;
}

/** Atomic units back to the exact decimal string, trailing zeros trimmed: 1500000n, 8 → "0.015". */
export function formatUnits(units: bigint, decimals: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  const body = fraction ? `${whole}.${fraction}` : whole;
  return negative && body !== '0' ? `-${body}` : body;
}

export type Rounding = 'down' | 'up' | 'half-up';

/**
 * Units rounded to `places` decimals: 'down' (toward zero, for balances: never show more than is there), 'up' (away
 * from zero, for what a user pays: never show less than is taken) or 'half-up'.
 */
export function roundUnits(units: bigint, decimals: number, places: number, mode: Rounding = 'down'): bigint {
  if (places >= decimals) return units;
  const step = 10n ** BigInt(decimals - places);
  const negative = units < 0n;
  const magnitude = negative ? -units : units;
  let kept = (magnitude / step) * step;
  if (mode === 'half-up' && (magnitude % step) * 2n >= step) kept += step;
  if (mode === 'up' && magnitude % step !== 0n) kept += step;
  return negative ? -kept : kept;
}

/** 10^n as a bigint: the scale of `n` decimals. */
export function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** a / b of non-negative units, rounded 'down' (toward zero) or 'up' (away from zero): the one integer division of money. */
export function divideUnits(a: bigint, b: bigint, mode: 'down' | 'up'): bigint {
  if (b <= 0n || a < 0n) throw new RangeError('divideUnits takes a non-negative dividend and a positive divisor');
  const q = a / b;
  return mode === 'up' && q * b !== a ? q + 1n : q;
}

/** SPEC §5 display: rounded to the coin's `round` (2 by default), trailing zeros trimmed, zero as "0". */
export function displayUnits(units: bigint, decimals: number, round = 2, mode: Rounding = 'down'): string {
  return formatUnits(roundUnits(units, decimals, round, mode), decimals);
}

/** The decimal string of a balance or amount from the gateway, shown by the same rule. */
export function displayDecimal(value: string, round = 2, mode: Rounding = 'down'): string {
  const decimals = Math.max(round, fractionDigits(value));
  return displayUnits(parseDecimal(value, decimals), decimals, round, mode);
}

/** Fiat shows exactly 2 decimals (SPEC §5): "12.50", rounded half-up. */
export function displayFiat(value: string): string {
  const decimals = Math.max(2, fractionDigits(value));
  const cents = roundUnits(parseDecimal(value, decimals), decimals, 2, 'half-up') / 10n ** BigInt(decimals - 2);
  const negative = cents < 0n;
  const digits = (negative ? -cents : cents).toString().padStart(3, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** a × b exactly, then rounded to `places` decimals: the fiat value of a balance at a rate. */
export function multiplyDecimals(a: string, b: string, places: number, mode: Rounding = 'down'): string {
  const da = fractionDigits(a);
  const db = fractionDigits(b);
  const product = parseDecimal(a, da) * parseDecimal(b, db);
  return formatUnits(roundUnits(product, da + db, places, mode), da + db);
}

/** a + b exactly. */
export function addDecimals(a: string, b: string): string {
  const d = Math.max(fractionDigits(a), fractionDigits(b));
  return formatUnits(parseDecimal(a, d) + parseDecimal(b, d), d);
}

/** -1, 0 or 1 as a is below, equal to or above b. */
export function compareDecimals(a: string, b: string): -1 | 0 | 1 {
  const d = Math.max(fractionDigits(a), fractionDigits(b));
  const x = parseDecimal(a, d);
  const y = parseDecimal(b, d);
  return x < y ? -1 : x > y ? 1 : 0;
}

function fractionDigits(value: string): number {
  const match = DECIMAL.exec(value);
  if (!match) throw new AmountError('FORMAT', `Not a decimal number: ${JSON.stringify(value)}`);
  return match[3]?.length ?? 0;
}
