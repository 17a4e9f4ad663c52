import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, numeric, pgTable, text, timestamp, unique, uuid, type AnyPgColumn } from 'drizzle-orm/pg-core';
import type { Network } from '../../../lib/currencies.ts';
import { users, walletAccounts } from './users.ts';
import { walletTransactions } from './wallet.ts';
import { operationId } from './ids.ts';

const units = (name: string) => numeric(name, { precision: 78, scale: 0 });

/**
 * A withdrawal (SPEC §7 POST withdrawal): `amount` is debited, the recipient gets `amount - fee`. INTERNAL ones
 * (to another user's deposit address) settle in the request's transaction; EXTERNAL ones go PENDING (held) →
 * SIGNED (raw transaction recorded before it is broadcast) → BROADCAST → COMPLETED, or FAILED (hold returned). A
 * COMPLETED one whose transaction a reorganisation took off the chain is BROADCAST again (`reopened`: its settlement
 * taken back onto the hold) until it is mined again or fails.
 * One over the limits' review thresholds (domain/withdrawals/limits.ts), of either kind, waits UNDER_REVIEW with its
 * amount held until an operator approves it (→ PENDING, or COMPLETED for an internal one) or rejects it (→ FAILED).
 */
export const withdrawals = pgTable(
  'withdrawals',
  {
    id: operationId(),
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => walletAccounts.id, { onDelete: 'restrict' }),
    idempotencyKey: text('idempotency_key').notNull(),
    /** sha256 of the request's normalised fields (domain/orders/idempotency.ts); NULL on rows from before it, compared field by field. */
    requestHash: text('request_hash'),
    kind: text('kind', { enum: ['INTERNAL', 'EXTERNAL'] }).notNull(),
    state: text('state', { enum: ['UNDER_REVIEW', 'PENDING', 'SIGNED', 'BROADCAST', 'COMPLETED', 'FAILED'] }).notNull(),
    currency: text('currency').notNull(),
    network: text('network').$type<Network>().notNull(),
    amount: units('amount').notNull(),
    fee: units('fee').notNull(),
    toAddress: text('to_address').notNull(),
    fromAddress: text('from_address'),
    recipientAccountId: uuid('recipient_account_id').references(() => walletAccounts.id, { onDelete: 'restrict' }),
    walletTransactionId: uuid('wallet_transaction_id').references(() => walletTransactions.id),
    recipientTransactionId: uuid('recipient_transaction_id').references(() => walletTransactions.id),
    /** The signed transaction exactly as broadcast (and broadcast again, unchanged, if it never reached the chain). */
    rawTx: text('raw_tx'),
    txHash: text('tx_hash'),
    confirmations: integer('confirmations').notNull().default(0),
    confirmationsRequired: integer('confirmations_required'),
    broadcastAttempts: integer('broadcast_attempts').notNull().default(0),
    /** Hashes of earlier transactions of this withdrawal replaced by fee (oldest first): any of them may still be the one mined. */
    replacedTxHashes: text('replaced_tx_hashes').array().notNull().default(sql`'{}'::text[]`),
    /** The chain's height when the current transaction went out: it is replaced by fee once unmined for the network's blocks. */
    broadcastHeight: bigint('broadcast_height', { mode: 'number' }),
    /** What the network charged (the mined transaction's fee in the network's coin), booked from the gas float (ETHEREUM, TRON, TON) or NETWORK_FEES to WORLD. */
    networkFee: units('network_fee'),
    /** The block the completing transaction was mined in: a reorganisation from there puts the completion in doubt. */
    blockHeight: bigint('block_height', { mode: 'number' }),
    /** A reorganisation replaced the block of this COMPLETED withdrawal: `status` must show it still confirmed, else it is reopened. */
    inDoubtSince: timestamp('in_doubt_since', { withTimezone: true }),
    /** Times it was reopened (COMPLETED → BROADCAST) after its transaction left the chain: each round's settlement has keys of its own. */
    reopened: integer('reopened').notNull().default(0),
    /**
     * The batch (UTXO_BATCH_SECONDS) whose one transaction pays it with the other members' outputs: set while it is
     * PENDING, in the transaction that creates the batch; its network fee is a share of the batch's (worker.ts).
     */
    batchId: uuid('batch_id').references((): AnyPgColumn => withdrawalBatches.id, { onDelete: 'restrict' }),
    failureReason: text('failure_reason'),
    /**
     * Since when a PENDING one waits for the hot wallet (its signing found too little to pay it): shown "Pending" with
     * that reason, signed again only once the hot wallet holds enough (worker.ts); NULL otherwise.
     */
    waitingForFundsSince: timestamp('waiting_for_funds_since', { withTimezone: true }),
    /**
     * The approval seal (domain/signing.ts): an HMAC over id, network, currency, destination, amount and fee, made as it
     * became PENDING with a key the database does not hold; the signer signs nothing whose figures no longer match it.
     */
    approvalSeal: text('approval_seal'),
    /** The amount's USD value at the request (PRICE_SCALE decimals), for the daily limit; NULL without a current price. */
    usdValue: numeric('usd_value', { precision: 38, scale: 8 }),
    /** Why it waited for review (ABOVE_THRESHOLD, NEW_ADDRESS, NO_PRICE); empty when it did not. */
    reviewReasons: text('review_reasons').array().notNull().default(sql`'{}'::text[]`),
    /** The review's decision, who made it (a users row: the operator), when, and the operator's words. */
    reviewDecision: text('review_decision', { enum: ['APPROVED', 'REJECTED'] }),
    reviewedBy: uuid('reviewed_by').references(() => users.id, { onDelete: 'restrict' }),
    reviewedAt: timestamp('reviewed_at', { withTimezone: true }),
    reviewNote: text('review_note'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    signedAt: timestamp('signed_at', { withTimezone: true }),
    broadcastAt: timestamp('broadcast_at', { withTimezone: true }),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [
    unique('withdrawals_idempotency').on(t.walletAccountId, t.idempotencyKey),
    index('withdrawals_open').on(t.state, t.createdAt).where(sql`${t.state} IN ('PENDING', 'SIGNED', 'BROADCAST')`),
    index('withdrawals_tx_hash').on(t.network, t.txHash),
    // The daily limit sums an account's withdrawals of the last 24 hours; the review queue reads its oldest first.
    index('withdrawals_account_created').on(t.walletAccountId, t.createdAt),
    index('withdrawals_under_review').on(t.createdAt).where(sql`${t.state} = 'UNDER_REVIEW'`),
    index('withdrawals_batch').on(t.batchId).where(sql`${t.batchId} IS NOT NULL`),
    index('withdrawals_in_doubt').on(t.network).where(sql`${t.inDoubtSince} IS NOT NULL`),
    check('withdrawals_amounts', sql`${t.amount} > 0 AND ${t.fee} >= 0 AND ${t.fee} < ${t.amount}`),
  ],
);

/**
 * Withdrawals of one UTXO network paid by one transaction (UTXO_BATCH_SECONDS): created, unsigned, in the transaction
 * that claims its members (PENDING, `batch_id` set); signed from its id (the adapter's reference) and its members in
 * id order, the transaction recorded on each member (SIGNED) and here before anything is sent. From there each member
 * follows the ordinary rules with the shared transaction: broadcast (or found on the chain by its hash), replaced or
 * bumped by CPFP together, completed or reopened each with its own ledger entries.
 */
export const withdrawalBatches = pgTable(
  'withdrawal_batches',
  {
    id: operationId(),
    network: text('network').$type<Network>().notNull(),
    /** How many withdrawals it pays (one output each). */
    size: integer('size').notNull(),
    /** The first transaction signed for it (replacements are on its members' rows). */
    txHash: text('tx_hash'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    signedAt: timestamp('signed_at', { withTimezone: true }),
  },
  (t) => [index('withdrawal_batches_unsigned').on(t.network, t.createdAt).where(sql`${t.signedAt} IS NULL`), check('withdrawal_batches_size', sql`${t.size} > 0`)],
);

/**
 * A withdrawal fee fixed for 300 s (SPEC §9 review validity) by the preliminary fee, for one account, currency and
 * outside address: the withdrawal that names it, while it is live, pays `fee` whatever the network asks by then.
 * `estimate` is the network's estimate it was made from (atomic units of `estimate_currency`, the network's coin).
 * One withdrawal uses it (`withdrawal_id`); unused ones are purged an hour after they expire (market/quotes.ts).
 */
export const withdrawalFeeQuotes = pgTable(
  'withdrawal_fee_quotes',
  {
    id: operationId(),
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => walletAccounts.id, { onDelete: 'cascade' }),
    currency: text('currency').notNull(),
    /** The recipient in the address book's spelling (rules.ts bookAddress): the estimate depends on it. */
    toAddress: text('to_address').notNull(),
    fee: units('fee').notNull(),
    estimate: units('estimate').notNull(),
    estimateCurrency: text('estimate_currency').notNull(),
    marginBps: integer('margin_bps').notNull(),
    withdrawalId: uuid('withdrawal_id').references(() => withdrawals.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('withdrawal_fee_quotes_expires').on(t.expiresAt), check('withdrawal_fee_quotes_amounts', sql`${t.fee} >= 0 AND ${t.estimate} >= 0`)],
);

/** SPEC §3 address book entry: a named address on one network (`blockchain` holds the network code). */
export const addressBookEntries = pgTable(
  'address_book_entries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => walletAccounts.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    blockchain: text('blockchain').notNull(),
    address: text('address').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [unique('address_book_entries_address').on(t.walletAccountId, t.blockchain, t.address), index('address_book_entries_account').on(t.walletAccountId, t.createdAt)],
);

/** Wallet accounts of businesses (SPEC §3 accountType B2B, shown as a badge); set by the operator. */
export const businessAccounts = pgTable('business_accounts', {
  walletAccountId: uuid('wallet_account_id')
    .primaryKey()
    .references(() => walletAccounts.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** Every broadcast the devnet received, accepted or not: proves a withdrawal reached the network once. */
export const devnetBroadcasts = pgTable(
  'devnet_broadcasts',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    network: text('network').notNull(),
    txHash: text('tx_hash').notNull(),
    outcome: text('outcome', { enum: ['ACCEPTED', 'DUPLICATE', 'REJECTED', 'DROPPED'] }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('devnet_broadcasts_hash').on(t.txHash)],
);

/** The devnet told to fail the next broadcast to an address: REJECT refuses it, DROP accepts it and never mines it. */
export const devnetFailures = pgTable(
  'devnet_failures',
  {
    network: text('network').notNull(),
    address: text('address').notNull(),
    mode: text('mode', { enum: ['REJECT', 'DROP'] }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [unique('devnet_failures_address').on(t.network, t.address)],
);
