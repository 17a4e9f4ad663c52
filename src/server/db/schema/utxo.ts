import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, numeric, pgTable, primaryKey, text, timestamp, unique } from 'drizzle-orm/pg-core';

const units = (name: string) => numeric(name, { precision: 78, scale: 0 });

/**
 * The UTXO adapter's own index (adapters/chains/utxo): every mined output paying an address of the custody (a
 * deposit address, external chain `key_chain` 0, or a change address, internal chain 1), fed by walking blocks.
 * `spent_tx` is set when a mined transaction spends it; `reserved_by` when the custody signed a transaction that
 * spends it (a withdrawal's or a cold sweep's reference), so two transactions of ours never spend one output.
 * A reorganisation deletes the outputs and clears the spends of the blocks it replaced (they are read again).
 */
export const utxoOutputs = pgTable(
  'utxo_outputs',
  {
    network: text('network').notNull(),
    txHash: text('tx_hash').notNull(),
    vout: integer('vout').notNull(),
    address: text('address').notNull(),
    amount: units('amount').notNull(),
    keyChain: integer('key_chain').notNull(),
    keyIndex: integer('key_index').notNull(),
    blockHeight: bigint('block_height', { mode: 'number' }).notNull(),
    blockHash: text('block_hash').notNull(),
    spentTx: text('spent_tx'),
    spentHeight: bigint('spent_height', { mode: 'number' }),
    reservedBy: text('reserved_by'),
  },
  (t) => [
    primaryKey({ columns: [t.network, t.txHash, t.vout] }),
    index('utxo_outputs_unspent').on(t.network, t.blockHeight).where(sql`${t.spentTx} IS NULL`),
    index('utxo_outputs_reserved').on(t.reservedBy),
  ],
);

/** The custody's change addresses (BIP32 internal chain), one fresh index per transaction it signs. */
export const utxoChangeAddresses = pgTable(
  'utxo_change_addresses',
  {
    network: text('network').notNull(),
    derivationIndex: integer('derivation_index').notNull(),
    address: text('address').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.network, t.derivationIndex] }), unique('utxo_change_addresses_address').on(t.network, t.address)],
);

/**
 * Every transaction the custody signed on a UTXO network, per reference (a withdrawal's id, a cold sweep's) and
 * attempt (0, then each replacement by fee or CPFP child): the same reference always gives back the stored
 * transaction. A replacement or child the node refused, never having taken it, is released (`released_at`).
 */
export const utxoTransactions = pgTable(
  'utxo_transactions',
  {
    reference: text('reference').notNull(),
    attempt: integer('attempt').notNull(),
    network: text('network').notNull(),
    txHash: text('tx_hash').notNull(),
    rawTx: text('raw_tx').notNull(),
    toAddress: text('to_address').notNull(),
    amount: units('amount').notNull(),
    /** What it pays the network: inputs less outputs, atomic units. */
    fee: units('fee').notNull(),
    /** Per virtual byte (sat/vB, koinu/vB), rounded up. */
    feeRate: units('fee_rate').notNull(),
    /** Outpoints `hash:vout` it spends. */
    inputs: text('inputs').array().notNull(),
    changeIndex: integer('change_index'),
    /**
     * A batch's (withdrawal_batches): every payment in output order, `[{ address, amount }]` (amount a decimal string of
     * atomic units); `to_address`/`amount` then hold the first address and the total. NULL for one payment.
     */
    payments: jsonb('payments').$type<{ address: string; amount: string }[]>(),
    /**
     * A CPFP child's (it spends the change of a stuck transaction of ours to a fresh change address): the hash of the
     * transaction it pays for. Its fee is booked with the withdrawal's network fee once both are mined.
     */
    parentTx: text('parent_tx'),
    /** When a fee bump of this reference was refused by MAX_FEE_RATE and alerted (once per reference). */
    feeAlertedAt: timestamp('fee_alerted_at', { withTimezone: true }),
    /**
     * When the node first took it (or was found holding or having mined it): a replacement or child with it set is
     * never released, since peers may have it and mine it.
     */
    acceptedAt: timestamp('accepted_at', { withTimezone: true }),
    /** Set when the node refused it for good and its inputs were freed: it no longer reserves them. */
    releasedAt: timestamp('released_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.reference, t.attempt] }),
    unique('utxo_transactions_hash').on(t.network, t.txHash),
    index('utxo_transactions_cpfp').on(t.network, t.parentTx).where(sql`${t.parentTx} IS NOT NULL`),
  ],
);
