/**
 * Exchange rates for display and quotes (SPEC §3 Rates: ratesMap per currency per fiat), from the rates port.
 */
import { formatUnits, roundUnits } from '../../lib/amount.ts';
import type { CoinMeta } from '../../lib/currencies.ts';
import { PRICE_DECIMALS, PRICE_SCALE, type PriceTable } from '../adapters/rates/port.ts';

export type RatesMap = Record<string, Record<string, string>>;

/** The price of one coin in a fiat currency, scaled by PRICE_SCALE; undefined when the source has none. */
export function priceIn(table: PriceTable, coin: CoinMeta, fiat: string): bigint | undefined {
  const usd = table.usd[coin.baseCurrency];
  const perUsd = table.fiatPerUsd[fiat];
  if (usd === undefined || perUsd === undefined) return undefined;
  return (usd * perUsd + PRICE_SCALE / 2n) / PRICE_SCALE;
}

/** ratesMap[crypto][fiat]: fiat units for one coin, as a decimal string (up to 8 decimals). */
export function ratesMap(table: PriceTable, coins: readonly CoinMeta[], fiats: readonly string[]): RatesMap {
  const map: RatesMap = {};
  for (const coin of coins) {
    const row: Record<string, string> = {};
    for (const fiat of fiats) {
      const price = priceIn(table, coin, fiat);
      if (price !== undefined) row[fiat] = formatUnits(price, PRICE_DECIMALS);
    }
    map[coin.currency] = row;
  }
  return map;
}

/** ratesMap[fiat][crypto]: coins for one fiat unit, rounded down to what the coin can hold (at most 8 decimals). */
export function invertedRatesMap(table: PriceTable, coins: readonly CoinMeta[], fiats: readonly string[]): RatesMap {
  const map: RatesMap = {};
  for (const fiat of fiats) {
    const row: Record<string, string> = {};
    for (const coin of coins) {
      const price = priceIn(table, coin, fiat);
      if (price === undefined || price === 0n) continue;
      const amount = (PRICE_SCALE * PRICE_SCALE) / price;
      row[coin.currency] = formatUnits(roundUnits(amount, PRICE_DECIMALS, Math.min(coin.decimals, PRICE_DECIMALS)), PRICE_DECIMALS);
    }
    map[fiat] = row;
  }
  return map;
}
