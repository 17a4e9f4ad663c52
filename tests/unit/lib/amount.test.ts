import { describe, expect, it } from 'vitest';
import {
  AMOUNT_TYPING,
  AmountError,
  addDecimals,
  divideUnits,
  pow10,
  compareDecimals,
  displayDecimal,
  displayFiat,
  displayUnits,
  formatUnits,
  multiplyDecimals,
  parseAmount,
  parseDecimal,
  roundUnits,
} from '../../../src/lib/amount.ts';

describe('amounts', () => {
  it('parses what a user types into atomic units, comma or point', () => {
    expect(parseAmount('0.015', 8)).toBe(1_500_000n);
    expect(parseAmount('0,015', 8)).toBe(1_500_000n);
    expect(parseAmount('12', 6)).toBe(12_000_000n);
    expect(parseAmount(' 99999999.99999999 ', 8)).toBe(9_999_999_999_999_999n);
    expect(parseAmount('1.5', 18)).toBe(1_500_000_000_000_000_000n);
  });

  it('refuses more than 8 digits before or after the point, and anything not a plain decimal', () => {
    for (const bad of ['123456789', '1.123456789', '', '.5', '1.', '-1', '1e5', '1,000.5', 'abc', '0x10', '1 000']) {
      expect(() => parseAmount(bad, 8), bad).toThrow(AmountError);
    }
  });

  it('refuses more decimals than the currency has, unless they are zeros', () => {
    expect(() => parseAmount('1.1234567', 6)).toThrow(/At most 6 decimals/);
    expect(parseAmount('1.12345600', 6)).toBe(1_123_456n);
  });

  it('lets a user type partial amounts', () => {
    for (const ok of ['', '0', '0.', '12,', '12345678.12345678']) expect(AMOUNT_TYPING.test(ok), ok).toBe(true);
    for (const bad of ['123456789', '1.123456789', '1..2', 'a']) expect(AMOUNT_TYPING.test(bad), bad).toBe(false);
  });

  it('formats atomic units back exactly, trailing zeros trimmed', () => {
    expect(formatUnits(1_500_000n, 8)).toBe('0.015');
    expect(formatUnits(0n, 8)).toBe('0');
    expect(formatUnits(100_000_000n, 8)).toBe('1');
    expect(formatUnits(1n, 18)).toBe('0.000000000000000001');
    expect(formatUnits(-2_500n, 3)).toBe('-2.5');
    expect(formatUnits(123n, 0)).toBe('123');
    // Far beyond a double's precision: wei of a large ETH balance.
    expect(formatUnits(12_345_678_123_456_789_012_345_678n, 18)).toBe('12345678.123456789012345678');
  });

  it('round-trips every amount a user can type', () => {
    for (const text of ['0.00000001', '1', '10.1', '99999999.99999999', '0.3']) {
      expect(formatUnits(parseAmount(text, 8), 8)).toBe(text);
    }
  });

  it('parses the gateway decimals of any length', () => {
    expect(parseDecimal('123456789012.5', 2)).toBe(12_345_678_901_250n);
    expect(parseDecimal('-0.5', 1)).toBe(-5n);
    expect(() => parseDecimal('1,5', 1)).toThrow(AmountError);
  });

  it('rounds for display by the coin round, down by default, zero as 0', () => {
    expect(roundUnits(123_456_789n, 8, 2)).toBe(123_000_000n);
    expect(roundUnits(125_000_000n, 9, 2, 'half-up')).toBe(130_000_000n);
    expect(displayUnits(123_456_789n, 8, 4)).toBe('1.2345');
    expect(displayUnits(100_000n, 8, 2)).toBe('0');
    expect(displayDecimal('0.123456789', 8)).toBe('0.12345678');
    expect(displayDecimal('1.50000')).toBe('1.5');
    // 'up': what a user pays is never shown as less than is taken.
    expect(displayDecimal('260.66666667', 2, 'up')).toBe('260.67');
    expect(displayDecimal('260.6', 2, 'up')).toBe('260.6');
    expect(displayDecimal('0.000000001', 8, 'up')).toBe('0.00000001');
    expect(displayDecimal('0')).toBe('0');
    expect(displayDecimal('0.009')).toBe('0');
  });

  it('shows fiat with exactly two decimals, half-up', () => {
    expect(displayFiat('12.5')).toBe('12.50');
    expect(displayFiat('0.005')).toBe('0.01');
    expect(displayFiat('1234')).toBe('1234.00');
    expect(displayFiat('0')).toBe('0.00');
  });

  it('multiplies and adds decimals exactly', () => {
    expect(multiplyDecimals('0.015', '64844.12', 2)).toBe('972.66');
    expect(multiplyDecimals('0.1', '0.2', 8)).toBe('0.02');
    expect(multiplyDecimals('3', '0.33333333', 2, 'half-up')).toBe('1');
    expect(addDecimals('0.1', '0.2')).toBe('0.3');
    expect(compareDecimals('0.10', '0.1')).toBe(0);
    expect(compareDecimals('2', '10')).toBe(-1);
    expect(compareDecimals('10.000001', '10')).toBe(1);
  });

  it('divides units exactly once, down or up, and refuses what money never is', () => {
    expect(divideUnits(10n, 3n, 'down')).toBe(3n);
    expect(divideUnits(10n, 3n, 'up')).toBe(4n);
    expect(divideUnits(9n, 3n, 'up')).toBe(3n);
    expect(divideUnits(0n, 7n, 'up')).toBe(0n);
    expect(divideUnits(pow10(18) + 1n, pow10(10), 'up')).toBe(pow10(8) + 1n);
    expect(() => divideUnits(1n, 0n, 'down')).toThrow(RangeError);
    expect(() => divideUnits(-1n, 2n, 'down')).toThrow(RangeError);
  });
});
