import { bigint, numeric, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The TRON adapter's signed transactions, one per reference (a withdrawal's id, a sweep's or a gas top-up's
 * reference): a TRON transaction names a recent block and expires, so signing again would give other bytes and
 * another hash. The first signed one is kept and returned again for the same reference; it is replaced only once
 * its expiration has passed on the chain and the chain does not have it (adapters/chains/tron/README.md).
 */
export const tronTransactions = pgTable('tron_transactions', {
  reference: text('reference').primaryKey(),
  txHash: text('tx_hash').notNull().unique(),
  /** The signed transaction as the full node's broadcasttransaction takes it (JSON). */
  rawTx: text('raw_tx').notNull(),
  fromAddress: text('from_address').notNull(),
  /** raw_data.expiration: after a block with a later timestamp, the transaction can never be included. */
  expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  /** The network fee it was estimated to cost, in sun (what a sweep reports). */
  feeEstimate: numeric('fee_estimate', { precision: 78, scale: 0 }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
