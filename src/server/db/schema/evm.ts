import { bigint, index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The EVM adapter's nonce sequence per sending address (the hot wallet, a deposit address being swept): the next
 * nonce to hand out. One row locked FOR UPDATE per signing, so two processes never reuse or skip a nonce.
 */
export const evmNonces = pgTable('evm_nonces', {
  address: text('address').primaryKey(),
  nextNonce: bigint('next_nonce', { mode: 'bigint' }).notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Every transaction the EVM adapter signed, by the caller's reference (a withdrawal's id, a sweep's, a top-up's, a
 * replacement's): the same reference always gets the same nonce and the same signed bytes.
 */
export const evmTransactions = pgTable(
  'evm_transactions',
  {
    reference: text('reference').primaryKey(),
    fromAddress: text('from_address').notNull(),
    nonce: bigint('nonce', { mode: 'bigint' }).notNull(),
    txHash: text('tx_hash').notNull().unique('evm_transactions_tx_hash'),
    rawTx: text('raw_tx').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('evm_transactions_from_nonce').on(t.fromAddress, t.nonce)],
);
