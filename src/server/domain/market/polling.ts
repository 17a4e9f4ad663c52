/**
 * The feeds' polls (the worker's `rates.exchanges` and `rates.fiat` jobs): each source's reading overwrites its row
 * of market_prices, so quotes read the newest word of every source from the database. A source that failed keeps
 * its last reading, which ages out of the median by itself (prices.ts); the failure is logged.
 */
import type pg from 'pg';
import { formatUnits } from '../../../lib/amount.ts';
import { PRICE_DECIMALS, type MarketFeed, type ObservedPrice } from '../../adapters/rates/port.ts';
import type { Logger } from '../../log.ts';

/** Writes readings, each replacing its source's row unless the row already holds a newer one. */
export async function storeReadings(pool: pg.Pool, readings: readonly ObservedPrice[]): Promise<void> {
  if (readings.length === 0) return;
  await pool.query(
    `INSERT INTO market_prices (kind, asset, source, price, market, observed_at, fetched_at)
     SELECT kind, asset, source, price, market, observed_at, now()
       FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[], $5::text[], $6::timestamptz[]) AS t(kind, asset, source, price, market, observed_at)
     ON CONFLICT (kind, asset, source) DO UPDATE
       SET price = excluded.price, market = excluded.market, observed_at = excluded.observed_at, fetched_at = excluded.fetched_at
       WHERE market_prices.observed_at <= excluded.observed_at`,
    [
      readings.map((r) => r.kind),
      readings.map((r) => r.asset),
      readings.map((r) => r.source),
      readings.map((r) => formatUnits(r.price, PRICE_DECIMALS)),
      readings.map((r) => r.market),
      readings.map((r) => r.at.toISOString()),
    ],
  );
}

/** One poll of a feed: what it read is stored; what failed is logged once per source. */
export async function pollFeed(pool: pg.Pool, feed: MarketFeed, log: Logger): Promise<{ stored: number; failed: string[] }> {
  const { prices, errors } = await feed.poll();
  const usable = prices.filter((p) => p.price > 0n);
  await storeReadings(pool, usable);
  for (const failure of errors) log.warn({ feed: feed.name, source: failure.source, error: failure.error }, 'price source failed');
  return { stored: usable.length, failed: errors.map((e) => e.source) };
}
