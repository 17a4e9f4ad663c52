import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, numeric, pgTable, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core';
import type { QuotePrices } from './market.ts';
import { walletAccounts } from './users.ts';
import { walletTransactions } from './wallet.ts';
import { operationId } from './ids.ts';

const units = (name: string) => numeric(name, { precision: 78, scale: 0 });

/**
 * A swap quote (SPEC §3, §7 exchange/pre-calculate): a rate fixed for 300 s for one account and pair. Amounts are
 * atomic units; the spread is taken in the destination currency (`fee_amount`). An order accepts a quote once.
 */
export const swapQuotes = pgTable(
  'swap_quotes',
  {
    id: operationId(),
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => walletAccounts.id, { onDelete: 'cascade' }),
    sourceCurrency: text('source_currency').notNull(),
    destinationCurrency: text('destination_currency').notNull(),
    sourceAmount: units('source_amount').notNull(),
    destinationAmount: units('destination_amount').notNull(),
    feeAmount: units('fee_amount').notNull(),
    spreadBps: integer('spread_bps').notNull(),
    /** Destination units per one source unit, after the spread, as a decimal string. */
    rate: text('rate').notNull(),
    /** Which side the user typed: the other was computed. */
    fixedSide: text('fixed_side', { enum: ['SOURCE', 'DESTINATION'] }).notNull(),
    /** The prices and sources the quote was made from, so a disputed swap can be explained; NULL on older rows. */
    prices: jsonb('prices').$type<QuotePrices>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('swap_quotes_expires').on(t.expiresAt), check('swap_quotes_amounts', sql`${t.sourceAmount} > 0 AND ${t.destinationAmount} > 0 AND ${t.feeAmount} >= 0`)],
);

/**
 * A swap order (SPEC §3): the quote the user is reviewing. It holds nothing and shows nothing until it is confirmed
 * (then the source is held and one ledger entry moves both currencies and the spread, and the history item is
 * written); it expires with its quote or is cancelled. Orders from before held from creation; closing releases theirs.
 */
export const swapOrders = pgTable(
  'swap_orders',
  {
    id: operationId(),
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => walletAccounts.id, { onDelete: 'restrict' }),
    quoteId: uuid('quote_id')
      .notNull()
      .unique()
      .references(() => swapQuotes.id, { onDelete: 'restrict' }),
    idempotencyKey: text('idempotency_key').notNull(),
    /** sha256 of the request's normalised fields (domain/orders/idempotency.ts); NULL on rows from before it, compared field by field. */
    requestHash: text('request_hash'),
    state: text('state', { enum: ['PENDING', 'COMPLETED', 'EXPIRED', 'CANCELLED'] }).notNull(),
    sourceCurrency: text('source_currency').notNull(),
    destinationCurrency: text('destination_currency').notNull(),
    sourceAmount: units('source_amount').notNull(),
    destinationAmount: units('destination_amount').notNull(),
    feeAmount: units('fee_amount').notNull(),
    rate: text('rate').notNull(),
    walletTransactionId: uuid('wallet_transaction_id').references(() => walletTransactions.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [
    unique('swap_orders_account_key').on(t.walletAccountId, t.idempotencyKey),
    index('swap_orders_pending_expiry').on(t.expiresAt).where(sql`${t.state} = 'PENDING'`),
  ],
);
