/**
 * Exchange rates for display and quotes (SPEC §3 Rates: ratesMap per currency per fiat), from the rates port.
 * No price, no quote: a quote needs a current price of everything it converts (`requirePrice`), and records the
 * prices and sources it was made from (`quotePrices`); display may show a last known price with its age.
 */
import { formatUnits, roundUnits } from '../../lib/amount.ts';
import type { CoinMeta } from '../../lib/currencies.ts';
import { PRICE_DECIMALS, PRICE_SCALE, type PriceTable, type StalePrice } from '../adapters/rates/port.ts';
import type { QuotePrices } from '../db/schema/market.ts';
import { DomainError } from './errors.ts';

export type RatesMap = Record<string, Record<string, string>>;

/** The market gave no current price for something a quote needs: nothing is quoted (503). */
export class PriceUnavailableError extends DomainError<'PRICE_UNAVAILABLE'> {}

/** The price of one coin in a fiat currency, scaled by PRICE_SCALE; undefined when the source has none. */
export function priceIn(table: PriceTable, coin: CoinMeta, fiat: string): bigint | undefined {
  const usd = table.usd[coin.baseCurrency];
  const perUsd = table.fiatPerUsd[fiat];
  if (usd === undefined || perUsd === undefined) return undefined;
  return (usd * perUsd + PRICE_SCALE / 2n) / PRICE_SCALE;
}

/** A current USD price of a base asset for a quote, or the refusal. */
export function requireUsd(table: PriceTable, asset: string): bigint {
  const price = table.usd[asset];
  if (price === undefined || price <= 0n) throw new PriceUnavailableError('PRICE_UNAVAILABLE', `There is no current market price for ${asset}: nothing can be quoted in it right now`, { details: { asset } });
  return price;
}

/** A coin's current price in a fiat for a quote, or the refusal (naming what has no price). */
export function requirePrice(table: PriceTable, coin: CoinMeta, fiat: string): bigint {
  requireUsd(table, coin.baseCurrency);
  if (table.fiatPerUsd[fiat] === undefined) throw new PriceUnavailableError('PRICE_UNAVAILABLE', `There is no current rate for ${fiat}: nothing can be quoted in it right now`, { details: { asset: fiat } });
  return priceIn(table, coin, fiat) as bigint;
}

/** What a quote records of the market: each named asset's or fiat's price and its sources (USD is 1 by definition). */
export function quotePrices(table: PriceTable, keys: readonly string[]): QuotePrices {
  const record: QuotePrices = {};
  for (const key of new Set(keys)) {
    const basis = table.basis[key];
    if (!basis) continue;
    record[key] = {
      price: formatUnits(basis.price, PRICE_DECIMALS),
      sources: basis.sources.map((s) => ({ source: s.source, price: formatUnits(s.price, PRICE_DECIMALS), at: s.at.toISOString() })),
    };
  }
  return record;
}

/** ratesMap[crypto][fiat]: fiat units for one coin, as a decimal string (up to 8 decimals), current prices only. */
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

/**
 * The last known value of coins that have no current price, for display with its age: ratesMap's shape, and per
 * coin the time of the oldest price it rests on. A value older than `maxAgeMs` is not shown at all.
 */
export function lastKnownRates(table: PriceTable, coins: readonly CoinMeta[], fiats: readonly string[], maxAgeMs: number): { ratesMap: RatesMap; asOf: Record<string, string> } {
  const map: RatesMap = {};
  const asOf: Record<string, string> = {};
  const oldest = table.at.getTime() - maxAgeMs;
  // The current value (no time: it is current), else a last known one young enough to show, else none.
  const valueOf = (current: Readonly<Record<string, bigint>>, stale: Readonly<Record<string, StalePrice>>, code: string): { price: bigint; at?: Date } | undefined => {
    const price = current[code];
    if (price !== undefined) return { price };
    const last = stale[code];
    return last && last.at.getTime() >= oldest ? last : undefined;
  };
  for (const coin of coins) {
    if (table.usd[coin.baseCurrency] !== undefined && fiats.every((fiat) => table.fiatPerUsd[fiat] !== undefined)) continue;
    const usd = valueOf(table.usd, table.lastKnown.usd, coin.baseCurrency);
    if (!usd) continue;
    const row: Record<string, string> = {};
    let at = usd.at;
    for (const fiat of fiats) {
      if (priceIn(table, coin, fiat) !== undefined) continue;
      const perUsd = valueOf(table.fiatPerUsd, table.lastKnown.fiatPerUsd, fiat);
      if (!perUsd) continue;
      row[fiat] = formatUnits((usd.price * perUsd.price + PRICE_SCALE / 2n) / PRICE_SCALE, PRICE_DECIMALS);
      if (perUsd.at && (!at || perUsd.at < at)) at = perUsd.at;
    }
    if (Object.keys(row).length === 0 || !at) continue;
    map[coin.currency] = row;
    asOf[coin.currency] = at.toISOString();
  }
  return { ratesMap: map, asOf };
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
