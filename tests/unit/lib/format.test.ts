import { describe, expect, it } from 'vitest';
import { dayGroupOf, formatAsOf, formatCrypto, formatCryptoWithCode, formatDetailDate, formatFiat, formatTime, groupByDay, groupDigits, tickerOf, baseTickerOf, networkTagOf, coinSubtitleOf, networkNameOf } from '../../../src/lib/format.ts';
import { FIATS, findCoin } from '../../../src/lib/currencies.ts';
import { acceptTypedAmount, typedAmountFor } from '../../../src/lib/typed-amount.ts';

describe('amount display (SPEC §5)', () => {
  it('shows crypto by the coin round, trailing zeros trimmed, zero as 0', () => {
    expect(formatCrypto('0.01000000', 8)).toBe('0.01');
    expect(formatCrypto('0.123456789', 8)).toBe('0.12345678');
    expect(formatCrypto('1.5', 6)).toBe('1.5');
    expect(formatCrypto('0', 8)).toBe('0');
    expect(formatCrypto('0.00000000', 8)).toBe('0');
  });

  it('defaults to 2 decimals and never rounds a balance up', () => {
    expect(formatCrypto('12.349')).toBe('12.34');
    expect(formatCrypto('12.999')).toBe('12.99');
    expect(formatCrypto('0.001')).toBe('0');
  });

  it('groups thousands by the language', () => {
    expect(groupDigits('1234567.5')).toBe('1,234,567.5');
    expect(groupDigits('1234567.5', 'ru')).toBe('1\u00a0234\u00a0567,5');
    expect(groupDigits('-1000')).toBe('-1,000');
    expect(groupDigits('999')).toBe('999');
    expect(formatCrypto('12345.6789', 2, 'ru')).toBe('12\u00a0345,67');
  });

  it('shows fiat with 2 decimals and its symbol', () => {
    expect(formatFiat('1234.5', '$')).toBe('$1,234.50');
    expect(formatFiat('0.125', '€')).toBe('€0.13');
    expect(formatFiat('99.994', '₸')).toBe('₸99.99');
    expect(formatFiat('1234.5', '₽', 'ru')).toBe('1\u00a0234,50\u00a0₽');
  });

  it('shows CAD as C$ so it is not read as USD; USD keeps the spec\'s $ (issue 33 item 3)', () => {
    const symbol = (code: string) => FIATS.find((fiat) => fiat.currency === code)?.symbol ?? code;
    expect(formatFiat('12.5', symbol('CAD'))).toBe('C$12.50');
    expect(formatFiat('12.5', symbol('CAD'), 'ru')).toBe('12,50\u00a0C$');
    expect(formatFiat('12.5', symbol('USD'))).toBe('$12.50');
  });

  it('shows a zero fiat value as 0', () => {
    expect(formatFiat('0', '$')).toBe('$0');
    expect(formatFiat('0.001', '$')).toBe('$0');
  });

  it('never labels Lightning a bare "BTC" beside Bitcoin: its list line and network name it (issue 33 item 3)', () => {
    const coin = (currency: string) => findCoin(currency)!;
    expect(coinSubtitleOf(coin('BTC_LNG'))).toBe('BTC · Lightning');
    expect(coinSubtitleOf(coin('BTC'))).toBe('BTC');
    expect(coinSubtitleOf(coin('USDT_TRX'))).toBe('USDT · Tron');
    expect(coinSubtitleOf(coin('USDT_ETH'))).toBe('USDT · Ethereum');
    expect(networkNameOf(coin('BTC_LNG'))).toBe('Lightning');
    expect(networkNameOf(coin('BTC'))).toBe('Bitcoin');
    expect(networkNameOf(coin('USDT_TRX'))).toBe('Tron');
    expect(tickerOf('BTC_LNG')).toBe('BTC (Lightning)');
  });

  it('names a token by its ticker, with its network where two assets share the ticker (issue 19 item 22)', () => {
    expect(tickerOf('USDT_TRX')).toBe('USDT (TRC-20)');
    expect(tickerOf('USDT_ETH')).toBe('USDT (ERC-20)');
    expect(tickerOf('BTC_LNG')).toBe('BTC (Lightning)');
    expect(tickerOf('USDC_ETH')).toBe('USDC');
    expect(tickerOf('BTC')).toBe('BTC');
    expect(baseTickerOf('USDT_TRX')).toBe('USDT');
    expect(networkTagOf('USDT_TRX')).toBe('TRC-20');
    expect(networkTagOf('ETH')).toBeUndefined();
    expect(formatCryptoWithCode('0.015', 'BTC', 8)).toBe('0.015\u00a0BTC');
  });

  it('refuses what is not a decimal rather than showing a wrong number', () => {
    expect(() => formatCrypto('1e5')).toThrow();
    expect(() => formatFiat('abc', '$')).toThrow();
  });
});

describe('dates (SPEC §9)', () => {
  const now = new Date(2025, 2, 5, 10, 0, 0); // 5 March 2025, 10:00 local

  it('groups by today, yesterday and the date', () => {
    expect(dayGroupOf(new Date(2025, 2, 5, 0, 1), now).kind).toBe('today');
    expect(dayGroupOf(new Date(2025, 2, 4, 23, 59), now).kind).toBe('yesterday');
    const older = dayGroupOf(new Date(2025, 2, 3, 12, 0), now);
    expect(older).toEqual({ kind: 'date', key: '2025-03-03', label: '3 March' });
    expect(dayGroupOf(new Date(2025, 2, 3, 12, 0), now, 'ru').label).toBe('3 марта');
    expect(dayGroupOf(new Date(2024, 11, 31, 12, 0), now).label).toBe('31 December 2024');
  });

  it('keeps the order given and starts a group per day', () => {
    const items = [new Date(2025, 2, 5, 9), new Date(2025, 2, 5, 8), new Date(2025, 2, 4, 20), new Date(2025, 1, 1, 1)].map((d) => ({ at: d.toISOString() }));
    const groups = groupByDay(items, (item) => item.at, now);
    expect(groups.map((g) => [g.day.kind, g.items.length])).toEqual([
      ['today', 2],
      ['yesterday', 1],
      ['date', 1],
    ]);
  });

  it("formats the details' date as 'MMM D, HH:mm A' in the user's language", () => {
    const at = new Date(2025, 2, 5, 14, 7);
    expect(formatDetailDate(at)).toBe('Mar 5, 2:07 PM');
    expect(formatDetailDate(at, 'ru')).toMatch(/^5 мар(т|\.), 14:07$/);
  });

  it('keeps one clock per language across history rows, details and a price\'s age (issue 33 item 3)', () => {
    const at = new Date(2025, 2, 5, 14, 7);
    const sameDay = new Date(2025, 2, 5, 18, 0);
    const nextDay = new Date(2025, 2, 6, 9, 0);
    expect(formatTime(at)).toBe('2:07 PM');
    expect(formatTime(new Date(2025, 2, 5, 9, 5))).toBe('9:05 AM');
    expect(formatTime(at, 'ru')).toBe('14:07');
    expect(formatTime(new Date(2025, 2, 5, 9, 5), 'ru')).toBe('09:05');
    expect(formatAsOf(at, sameDay)).toBe('2:07 PM');
    expect(formatAsOf(at, sameDay, 'ru')).toBe('14:07');
    expect(formatAsOf(at, nextDay)).toBe('Mar 5, 2:07 PM');
    expect(formatAsOf(at, nextDay, 'ru')).toMatch(/^5 мар(т|\.), 14:07$/);
    // The details end with the same clock the history row shows.
    expect(formatDetailDate(at).endsWith(formatTime(at))).toBe(true);
    expect(formatDetailDate(at, 'ru').endsWith(formatTime(at, 'ru'))).toBe(true);
  });
});

describe('typed amounts (issue 19 item 8)', () => {
  it("takes a comma as the point and shows the language's mark in the field", () => {
    expect(acceptTypedAmount('1,5')).toBe('1.5');
    expect(acceptTypedAmount('1.5')).toBe('1.5');
    expect(acceptTypedAmount('1,5,')).toBeUndefined();
    expect(acceptTypedAmount('123456789')).toBeUndefined();
    expect(typedAmountFor('1.5', 'ru')).toBe('1,5');
    expect(typedAmountFor('1.5', 'en')).toBe('1.5');
  });
});
