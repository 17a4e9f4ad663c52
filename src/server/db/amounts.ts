/**
 * The one place an amount column becomes a number (issue 34 item 4). PostgreSQL `numeric` arrives as text; these read
 * it as branded atomic units (`Units`, src/lib/money.ts), so read sites call no `BigInt(` of their own. A value that
 * is not a whole number (a fraction, an exponent, garbage) throws a RangeError naming the column, where a bare
 * `BigInt()` threw a SyntaxError without saying which column.
 */
import type { Units } from '../../lib/money.ts';

const INTEGER = /^-?\d+$/;

/** A numeric column's text (or a bigint driver value) as units; throws RangeError on a non-integer. */
export function unitsFromRow<C extends string = string>(value: string | bigint, column = 'amount'): Units<C> {
  if (typeof value === 'bigint') return value as Units<C>;
  if (!INTEGER.test(value)) throw new RangeError(`${column}: ${JSON.stringify(value)} is not a whole number of atomic units`);
  return BigInt(value) as Units<C>;
}

/** As unitsFromRow, with SQL NULL (an absent sum, a fee not yet known) read as zero. */
export function unitsFromRowOrZero<C extends string = string>(value: string | bigint | null | undefined, column = 'amount'): Units<C> {
  return value === null || value === undefined ? (0n as Units<C>) : unitsFromRow<C>(value, column);
}
