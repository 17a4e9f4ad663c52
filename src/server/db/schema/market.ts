import { sql } from 'drizzle-orm';
import { check, index, jsonb, numeric, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { operationId } from './ids.ts';

/**
 * The market's last word per source (domain/market/): a crypto asset's USD mid price from one exchange, or a fiat's
 * units per USD from one central bank. Each poll overwrites its source's row; quotes read these rows, never a network.
 */
export const marketPrices = pgTable(
  'market_prices',
  {
    kind: text('kind', { enum: ['CRYPTO', 'FIAT'] }).notNull(),
    /** A base asset (BTC, USDT) or a fiat currency (EUR). */
    asset: text('asset').notNull(),
    /** An exchange's ccxt id (binance), a central bank (ecb), or `reference` (the development walk). */
    source: text('source').notNull(),
    /** USD per unit (CRYPTO) or units per USD (FIAT), exact to 8 decimals. */
    price: numeric('price', { precision: 38, scale: 8 }).notNull(),
    /** The market it came from (BTC/USDT) or the published document's date (a central bank's). */
    market: text('market').notNull(),
    /** When the source says the price held: the exchange's ticker time, the central bank's rate date. */
    observedAt: timestamp('observed_at', { withTimezone: true }).notNull(),
    fetchedAt: timestamp('fetched_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.asset, t.source] }), check('market_prices_positive', sql`${t.price} > 0`)],
);

/**
 * A market order the desk sent to its exchange account to bring its net exposure in one asset back under
 * HEDGE_THRESHOLD_USD (domain/market/hedge.ts), with the swaps it covers. The client order id is its idempotency key.
 */
export const deskHedges = pgTable(
  'desk_hedges',
  {
    id: operationId(),
    clientOrderId: text('client_order_id').notNull().unique(),
    exchange: text('exchange').notNull(),
    asset: text('asset').notNull(),
    side: text('side', { enum: ['buy', 'sell'] }).notNull(),
    /** Base units of the asset, a decimal string as sent. */
    amount: text('amount').notNull(),
    /** The exposure it answered, in USD (decimal), at the price of the time. */
    exposureUsd: text('exposure_usd').notNull(),
    state: text('state', { enum: ['SENT', 'FILLED', 'FAILED'] }).notNull(),
    orderId: text('order_id'),
    price: text('price'),
    filled: text('filled'),
    fee: text('fee'),
    feeCurrency: text('fee_currency'),
    error: text('error'),
    /** The swap orders settled since the asset's previous hedge: what this one covers. */
    swapOrderIds: jsonb('swap_order_ids').$type<string[]>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [
    index('desk_hedges_asset').on(t.asset, t.createdAt),
    // One hedge of an asset awaiting the exchange at a time, whichever process (and however many) runs the job.
    uniqueIndex('desk_hedges_one_sent').on(t.asset).where(sql`${t.state} = 'SENT'`),
  ],
);

/**
 * What a quote keeps of the market it was made from (swap, buy and sell quotes' `prices` column): per asset or fiat,
 * the price used and each source that made it, with its value and time.
 */
export type PriceSourceRecord = { source: string; price: string; at: string };
export type QuotePrices = Record<string, { price: string; sources: PriceSourceRecord[] }>;
