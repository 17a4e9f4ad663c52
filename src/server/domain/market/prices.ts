/**
 * The market price of everything the wallet quotes, from the sources' stored readings (table market_prices, written
 * by the feeds' polls in polling.ts): an asset's price is the median of its fresh sources, a source too far from that
 * median is left out, and too few fresh sources means no price (issue 28). A price read against USDT counts in USD at
 * USDT's own price. Quotes read this; no network call.
 */
import type pg from 'pg';
import { parseDecimal } from '../../../lib/amount.ts';
import { PRICE_DECIMALS, PRICE_SCALE, type PriceBasis, type PriceTable, type RatesPort, type SourceQuote, type StalePrice } from '../../adapters/rates/port.ts';

export type MarketSettings = {
  /** A crypto source older than this is not fresh (RATES_MAX_AGE_SECONDS). */
  maxAgeMs: number;
  /** A fresh source further than this from the median is left out (RATES_MAX_DEVIATION_BPS). */
  maxDeviationBps: number;
  /** Fewer fresh sources than this and the asset has no price (RATES_MIN_SOURCES). */
  minSources: number;
  /** A fiat whose newest official rate is older than this has no price (RATES_FIAT_MAX_AGE_DAYS). */
  fiatMaxAgeMs: number;
};

/** `market` is where a crypto price was read (BTC/USDT, LTC/USD); a fiat's is its rate's date. */
export type StoredReading = { kind: 'CRYPTO' | 'FIAT'; asset: string; source: string; price: bigint; at: Date; market?: string | undefined };

const CACHE_MS = 1000;

/** The median of prices: the middle one, or the mean of the middle two rounded half up. */
export function median(values: readonly bigint[]): bigint {
  if (values.length === 0) throw new RangeError('the median of nothing');
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length % 2 === 1) return sorted[middle] as bigint;
  return ((sorted[middle - 1] as bigint) + (sorted[middle] as bigint) + 1n) / 2n;
}

/** Whether `price` is within `bps` basis points of `centre`. */
function near(price: bigint, centre: bigint, bps: number): boolean {
  const gap = price > centre ? price - centre : centre - price;
  return gap * 10_000n <= centre * BigInt(bps);
}

type Verdict = { basis: PriceBasis } | { stale: StalePrice } | undefined;

/** One asset's price from its sources' readings, or its last known value, or nothing. */
export function judge(readings: readonly SourceQuote[], now: Date, rules: { maxAgeMs: number; maxDeviationBps: number; minSources: number }): Verdict {
  if (readings.length === 0) return undefined;
  const fresh = readings.filter((r) => now.getTime() - r.at.getTime() <= rules.maxAgeMs);
  if (fresh.length > 0) {
    const centre = median(fresh.map((r) => r.price));
    const kept = fresh.filter((r) => near(r.price, centre, rules.maxDeviationBps));
    if (kept.length >= rules.minSources && kept.length > 0) {
      return { basis: { price: median(kept.map((r) => r.price)), sources: [...kept].sort((a, b) => a.source.localeCompare(b.source)) } };
    }
  }
  // Not quotable: the last word of its sources, as of the newest of them.
  const newest = readings.reduce((a, b) => (a.at > b.at ? a : b));
  return { stale: { price: median(readings.map((r) => r.price)), at: newest.at } };
}

/**
 * Prices read against USDT are USD prices only through USDT's own price (read on USDT/USD markets): a USDT that lost
 * its peg must not make every coin look dearer. A converted reading is as old as the older of the two, so one made
 * with a USDT price that is no longer current can show a last known value but never be quoted; without any USDT
 * price it counts for nothing.
 */
function inUsd(readings: readonly StoredReading[], settings: MarketSettings, now: Date): StoredReading[] {
  const usdt = judge(
    readings.filter((r) => r.kind === 'CRYPTO' && r.asset === 'USDT').map((r) => ({ source: r.source, price: r.price, at: r.at })),
    now,
    settings,
  );
  const rate = !usdt ? undefined : 'basis' in usdt ? { price: usdt.basis.price, at: new Date(Math.max(...usdt.basis.sources.map((s) => s.at.getTime()))) } : usdt.stale;
  return readings.flatMap((r) => {
    if (r.kind !== 'CRYPTO' || !r.market?.endsWith('/USDT')) return [r];
    if (!rate) return [];
    return [{ ...r, price: (r.price * rate.price + PRICE_SCALE / 2n) / PRICE_SCALE, at: r.at < rate.at ? r.at : rate.at }];
  });
}

/** The table quotes and display read, from every stored reading. USD per USD is 1 by definition. */
export function priceTable(stored: readonly StoredReading[], settings: MarketSettings, now: Date): PriceTable {
  const readings = inUsd(stored, settings, now);
  const usd: Record<string, bigint> = {};
  const fiatPerUsd: Record<string, bigint> = { USD: PRICE_SCALE };
  const basis: Record<string, PriceBasis> = {};
  const lastKnown = { usd: {} as Record<string, StalePrice>, fiatPerUsd: {} as Record<string, StalePrice> };
  for (const [key, group] of Map.groupBy(readings, (r) => `${r.kind}:${r.asset}`)) {
    const fiat = key.startsWith('FIAT:');
    const asset = key.slice(key.indexOf(':') + 1);
    if (fiat && asset === 'USD') continue;
    // A fiat's rate is official: one source is enough, and it holds for days (a central bank publishes on workdays).
    const rules = fiat ? { maxAgeMs: settings.fiatMaxAgeMs, maxDeviationBps: settings.maxDeviationBps, minSources: 1 } : settings;
    const verdict = judge(
      group.map((r) => ({ source: r.source, price: r.price, at: r.at })),
      now,
      rules,
    );
    if (!verdict) continue;
    if ('basis' in verdict) {
      (fiat ? fiatPerUsd : usd)[asset] = verdict.basis.price;
      basis[asset] = verdict.basis;
    } else {
      (fiat ? lastKnown.fiatPerUsd : lastKnown.usd)[asset] = verdict.stale;
    }
  }
  return { usd, fiatPerUsd, at: now, basis, lastKnown };
}

/** The market prices from the stored readings, read at most once a second per process. */
export function createMarketRates(pool: pg.Pool, settings: MarketSettings): RatesPort {
  let cache: { table: PriceTable; until: number } | undefined;
  return {
    async prices() {
      if (cache && cache.until > Date.now()) return cache.table;
      const result = await pool.query<{ kind: 'CRYPTO' | 'FIAT'; asset: string; source: string; price: string; market: string; at: Date; now: Date }>(
        'SELECT kind, asset, source, price::text AS price, market, observed_at AS at, now() AS now FROM market_prices',
      );
      const now = result.rows[0]?.now ?? new Date();
      const readings = result.rows.map((r) => ({ kind: r.kind, asset: r.asset, source: r.source, price: parseDecimal(r.price, PRICE_DECIMALS), at: r.at, market: r.market }));
      const table = priceTable(readings, settings, now);
      cache = { table, until: Date.now() + CACHE_MS };
      return table;
    },
  };
}
