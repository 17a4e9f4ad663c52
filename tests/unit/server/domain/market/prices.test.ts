import { describe, expect, it } from 'vitest';
import { judge, median, priceTable, type StoredReading } from '../../../../../src/server/domain/market/prices.ts';
import { inventoryFloor } from '../../../../../src/server/domain/market/desk.ts';
import { lastKnownRates, quotePrices, requirePrice, requireUsd } from '../../../../../src/server/domain/rates.ts';
import { parseDecimal } from '../../../../../src/lib/amount.ts';
import { findCoin, type CoinMeta } from '../../../../../src/lib/currencies.ts';

const usd = (text: string) => parseDecimal(text, 8);
const NOW = new Date('2026-11-27T12:00:00Z');
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000);
const RULES = { maxAgeMs: 60_000, maxDeviationBps: 300, minSources: 2, fiatMaxAgeMs: 4 * 86_400_000 };
const coin = (currency: string) => findCoin(currency) as CoinMeta;
const crypto = (asset: string, source: string, price: string, secondsAgo = 1): StoredReading => ({ kind: 'CRYPTO', asset, source, price: usd(price), at: ago(secondsAgo) });
const fiat = (asset: string, source: string, perUsd: string, secondsAgo = 3600): StoredReading => ({ kind: 'FIAT', asset, source, price: usd(perUsd), at: ago(secondsAgo) });

describe('the market price of an asset', () => {
  it('is the median of its sources: the middle one, or the mean of the middle two rounded half up', () => {
    expect(median([3n, 1n, 2n])).toBe(2n);
    expect(median([4n, 1n, 2n, 3n])).toBe(3n);
    expect(median([1n, 2n])).toBe(2n);
    expect(() => median([])).toThrow();
  });

  it('follows the median of fresh sources, exactly', () => {
    const table = priceTable(
      [crypto('BTC', 'binance', '65000.10'), crypto('BTC', 'kraken', '65010.30'), crypto('BTC', 'okx', '64990'), crypto('BTC', 'bybit', '65002'), crypto('BTC', 'coinbase', '65001')],
      RULES,
      NOW,
    );
    expect(table.usd.BTC).toBe(usd('65001'));
    expect(table.basis.BTC?.sources.map((s) => s.source)).toEqual(['binance', 'bybit', 'coinbase', 'kraken', 'okx']);
  });

  it('leaves out a stale source', () => {
    const verdict = judge([{ source: 'a', price: usd('100'), at: ago(1) }, { source: 'b', price: usd('102'), at: ago(1) }, { source: 'c', price: usd('50'), at: ago(61) }], NOW, RULES);
    expect(verdict).toEqual({ basis: { price: usd('101'), sources: [{ source: 'a', price: usd('100'), at: ago(1) }, { source: 'b', price: usd('102'), at: ago(1) }] } });
  });

  it('leaves out a source 20 % off the median, and prices with the rest', () => {
    const table = priceTable([crypto('ETH', 'a', '3200'), crypto('ETH', 'b', '3202'), crypto('ETH', 'c', '3840'), crypto('ETH', 'd', '3201')], RULES, NOW);
    expect(table.usd.ETH).toBe(usd('3201'));
    expect(table.basis.ETH?.sources.map((s) => s.source)).toEqual(['a', 'b', 'd']);
  });

  it('has no price with fewer fresh sources than the minimum, but keeps its last value and time for display', () => {
    const table = priceTable([crypto('LTC', 'a', '75', 1), crypto('LTC', 'b', '76', 600), crypto('LTC', 'c', '74', 900)], RULES, NOW);
    expect(table.usd.LTC).toBeUndefined();
    expect(table.basis.LTC).toBeUndefined();
    expect(table.lastKnown.usd.LTC).toEqual({ price: usd('75'), at: ago(1) });
    expect(() => requireUsd(table, 'LTC')).toThrow(expect.objectContaining({ code: 'PRICE_UNAVAILABLE' }));
  });

  it('has no price when two sources disagree beyond the deviation, since neither has a second beside it', () => {
    const table = priceTable([crypto('TON', 'a', '5'), crypto('TON', 'b', '6')], RULES, NOW);
    expect(table.usd.TON).toBeUndefined();
  });

  it('has no price when every source is down (nothing fresh), and none at all without a reading', () => {
    const table = priceTable([crypto('DOGE', 'a', '0.15', 3600), crypto('DOGE', 'b', '0.15', 3600)], RULES, NOW);
    expect(table.usd.DOGE).toBeUndefined();
    expect(table.usd.TRX).toBeUndefined();
    expect(table.lastKnown.usd.TRX).toBeUndefined();
  });

  it("counts a price read against USDT at USDT's own price, and not at all without one", () => {
    const read = (asset: string, source: string, price: string, market: string): StoredReading => ({ ...crypto(asset, source, price), market });
    const depegged = priceTable(
      [read('USDT', 'kraken', '0.9', 'USDT/USD'), read('USDT', 'coinbase', '0.9', 'USDT/USD'), read('BTC', 'binance', '70000', 'BTC/USDT'), read('BTC', 'coinbase', '63000', 'BTC/USD')],
      RULES,
      NOW,
    );
    expect(depegged.usd).toEqual({ USDT: usd('0.9'), BTC: usd('63000') });
    const unpriced = priceTable([read('BTC', 'binance', '65000', 'BTC/USDT'), read('BTC', 'okx', '65000', 'BTC/USDT')], RULES, NOW);
    expect(unpriced.usd.BTC).toBeUndefined();
  });

  it('takes a fiat from its one central bank while its rate is younger than the limit, and USD is always 1', () => {
    const table = priceTable([fiat('EUR', 'ecb', '0.95129376', 2 * 86_400), fiat('RUB', 'cbr', '100.5', 5 * 86_400)], RULES, NOW);
    expect(table.fiatPerUsd).toEqual({ USD: usd('1'), EUR: usd('0.95129376') });
    expect(table.lastKnown.fiatPerUsd.RUB).toEqual({ price: usd('100.5'), at: ago(5 * 86_400) });
    expect(() => requirePrice({ ...table, usd: { BTC: usd('65000') } }, coin('BTC'), 'RUB')).toThrow(expect.objectContaining({ code: 'PRICE_UNAVAILABLE' }));
    expect(requirePrice({ ...table, usd: { BTC: usd('65000') } }, coin('BTC'), 'EUR')).toBe(usd('61834.0944'));
  });

  it('records what a quote was made from: each price and its sources', () => {
    const table = priceTable([crypto('BTC', 'a', '65000', 2), crypto('BTC', 'b', '65002', 3), fiat('EUR', 'ecb', '0.95')], RULES, NOW);
    expect(quotePrices(table, ['BTC', 'EUR', 'ETH', 'BTC'])).toEqual({
      BTC: { price: '65001', sources: [{ source: 'a', price: '65000', at: ago(2).toISOString() }, { source: 'b', price: '65002', at: ago(3).toISOString() }] },
      EUR: { price: '0.95', sources: [{ source: 'ecb', price: '0.95', at: ago(3600).toISOString() }] },
    });
  });

  it('shows the last known value of a coin with its time while it is young enough, and nothing once it is too old', () => {
    const table = priceTable([crypto('LTC', 'a', '75', 600), crypto('LTC', 'b', '76', 900), crypto('BTC', 'a', '65000'), crypto('BTC', 'b', '65000')], RULES, NOW);
    expect(lastKnownRates(table, [coin('LTC'), coin('BTC')], ['USD'], 3_600_000)).toEqual({ ratesMap: { LTC: { USD: '75.5' } }, asOf: { LTC: ago(600).toISOString() } });
    expect(lastKnownRates(table, [coin('LTC')], ['USD'], 300_000)).toEqual({ ratesMap: {}, asOf: {} });
  });
});

describe("the desk's inventory floor", () => {
  it('is 0 unless configured, in the currency units, a negative one a short the operator allows', () => {
    expect(inventoryFloor({}, 'ETH', 18)).toBe(0n);
    expect(inventoryFloor({ ETH: '0.5' }, 'ETH', 18)).toBe(500_000_000_000_000_000n);
    expect(inventoryFloor({ BTC: '-0.25' }, 'BTC', 8)).toBe(-25_000_000n);
  });
});
