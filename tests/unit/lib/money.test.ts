import { describe, expect, it } from 'vitest';
import { AmountError } from '../../../src/lib/amount.ts';
import { formatMoney, money, parseMoney, unitsOf } from '../../../src/lib/money.ts';

describe('money', () => {
  it('is a known currency with bigint units', () => {
    expect(money('BTC', unitsOf(1_500_000n))).toEqual({ currency: 'BTC', units: 1_500_000n });
    expect(() => money('XYZ', unitsOf(1n))).toThrow('unknown currency XYZ');
  });

  it('parses a decimal string into units of the currency, refusing more decimals than it has', () => {
    expect(parseMoney('BTC', '0.015')).toEqual({ currency: 'BTC', units: 1_500_000n });
    expect(parseMoney('ETH', '1.5')).toEqual({ currency: 'ETH', units: 1_500_000_000_000_000_000n });
    expect(parseMoney('USD', '12.50')).toEqual({ currency: 'USD', units: 1250n });
    expect(() => parseMoney('USD', '0.001')).toThrow(AmountError);
    expect(() => parseMoney('BTC', '1e5')).toThrow(AmountError);
    expect(() => parseMoney('XYZ', '1')).toThrow('unknown currency XYZ');
  });

  it('takes fewer places when asked, never more than the currency has', () => {
    expect(parseMoney('ETH', '0.12345678', { places: 8 }).units).toBe(123_456_780_000_000_000n);
    expect(() => parseMoney('ETH', '0.123456789', { places: 8 })).toThrow(AmountError);
    expect(() => parseMoney('TRX', '0.0000001', { places: 8 })).toThrow(AmountError);
  });

  it('formats exactly, trailing zeros trimmed', () => {
    expect(formatMoney(money('BTC', unitsOf(1_500_000n)))).toBe('0.015');
    expect(formatMoney(money('ETH', unitsOf(10n)))).toBe('0.00000000000000001');
    expect(formatMoney(money('USD', unitsOf(1200n)))).toBe('12');
    expect(formatMoney(money('TRX', unitsOf(0n)))).toBe('0');
    expect(() => formatMoney({ currency: 'XYZ', units: unitsOf(1n) })).toThrow('unknown currency XYZ');
  });
});
