import type { Network } from '../../../lib/currencies.ts';
import { sql } from 'drizzle-orm';
import { bigint, index, integer, numeric, pgTable, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core';
import { walletAccounts } from './users.ts';
import { walletTransactions } from './wallet.ts';
import { operationId } from './ids.ts';

const units = (name: string) => numeric(name, { precision: 78, scale: 0 });

/**
 * A transfer seen on a chain to one of our deposit addresses. Unique per chain output, so a deposit seen
 * twice, or by two workers at once, is one row, credited once (state PENDING → CREDITED in one transaction).
 * PENDING → FAILED when its transaction left the chain (→ PENDING again if it is mined again); BELOW_MINIMUM is
 * recorded, never credited (MIN_DEPOSIT). A CREDITED one a reorganisation put in doubt (`in_doubt_since`) that left
 * the chain becomes REVERSED (the credit taken back) or, when the balance no longer holds it, REVERSAL_DUE (the
 * account frozen for withdrawals until it is reversed or mined again). A REVERSED one mined again is PENDING once more
 * (`revivals` counts it) and is credited again by an entry of its own. A CREDITED one in doubt whose transaction is
 * on a chain again but with fewer than its confirmations (back in the mempool, mined anew higher up) is HELD: its
 * amount on hold (not spendable, shown Pending) until it has them again (CREDITED) or leaves the chain (REVERSED).
 */
export const chainDeposits = pgTable(
  'chain_deposits',
  {
    id: operationId(),
    network: text('network').$type<Network>().notNull(),
    txHash: text('tx_hash').notNull(),
    outputIndex: integer('output_index').notNull(),
    currency: text('currency').notNull(),
    fromAddress: text('from_address'),
    toAddress: text('to_address').notNull(),
    amount: units('amount').notNull(),
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => walletAccounts.id, { onDelete: 'restrict' }),
    walletTransactionId: uuid('wallet_transaction_id').references(() => walletTransactions.id),
    blockHeight: bigint('block_height', { mode: 'number' }),
    confirmations: integer('confirmations').notNull().default(0),
    confirmationsRequired: integer('confirmations_required').notNull(),
    state: text('state', { enum: ['PENDING', 'CREDITED', 'HELD', 'FAILED', 'BELOW_MINIMUM', 'REVERSAL_DUE', 'REVERSED'] }).notNull().default('PENDING'),
    /** A reorganisation replaced the block of this credited deposit: `status` must show it mined again, else it is reversed. */
    inDoubtSince: timestamp('in_doubt_since', { withTimezone: true }),
    /** Times it was mined again after its credit was reversed: each revival's credit and reversal have keys of their own (entry-keys.ts). */
    revivals: integer('revivals').notNull().default(0),
    /** Times its credit was put on hold (HELD) because its transaction lost its confirmations: the n-th hold and its release are entries of their own (entry-keys.ts). */
    holds: integer('holds').notNull().default(0),
    ledgerEntryId: bigint('ledger_entry_id', { mode: 'number' }),
    detectedAt: timestamp('detected_at', { withTimezone: true }).notNull().defaultNow(),
    creditedAt: timestamp('credited_at', { withTimezone: true }),
  },
  (t) => [
    unique('chain_deposits_output').on(t.network, t.txHash, t.outputIndex),
    index('chain_deposits_pending').on(t.detectedAt).where(sql`${t.state} = 'PENDING'`),
    index('chain_deposits_in_doubt').on(t.network, t.blockHeight).where(sql`${t.inDoubtSince} IS NOT NULL OR ${t.state} IN ('REVERSAL_DUE', 'HELD')`),
  ],
);

/** How far the deposit scanner has read each network's transfers. */
export const chainCursors = pgTable('chain_cursors', {
  network: text('network').primaryKey(),
  position: text('position').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** The devnet's block clock per network: height = (now - genesis) / block time, the same for every process. */
export const devnetChains = pgTable('devnet_chains', {
  network: text('network').primaryKey(),
  genesisAt: timestamp('genesis_at', { withTimezone: true }).notNull().defaultNow(),
  blockMs: integer('block_ms').notNull(),
});

/** Transfers on the devnet chains, each mined in the block after the one current when it was sent. */
export const devnetTransactions = pgTable(
  'devnet_transactions',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    network: text('network').notNull(),
    txHash: text('tx_hash').notNull(),
    outputIndex: integer('output_index').notNull(),
    currency: text('currency').notNull(),
    fromAddress: text('from_address').notNull(),
    toAddress: text('to_address').notNull(),
    amount: units('amount').notNull(),
    blockHeight: bigint('block_height', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [unique('devnet_transactions_output').on(t.network, t.txHash, t.outputIndex), index('devnet_transactions_to').on(t.network, t.toAddress)],
);
