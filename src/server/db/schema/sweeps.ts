import type { Network } from '../../../lib/currencies.ts';
import { sql } from 'drizzle-orm';
import { bigint, index, integer, numeric, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { chainDeposits } from './chains.ts';
import { operationId } from './ids.ts';

const units = (name: string) => numeric(name, { precision: 78, scale: 0 });

/**
 * Collecting a deposit address's credited deposits of one currency into the hot wallet (account-based networks).
 * PENDING → (TOPPING_UP: the hot wallet sent the gas a token transfer needs → PENDING) → SENT → CONFIRMED, or
 * SKIPPED (the adapter found nothing worth moving) or FAILED (mined and reverted). The network fees of the sweep and
 * of its top-ups are booked once it is mined (GAS_FLOAT → WORLD, entry keys `sweep:<id>:…`).
 */
export const sweeps = pgTable(
  'sweeps',
  {
    id: operationId(),
    network: text('network').$type<Network>().notNull(),
    currency: text('currency').notNull(),
    address: text('address').notNull(),
    derivationIndex: integer('derivation_index').notNull(),
    /** The credited deposits it collects, in atomic units of `currency`. */
    amount: units('amount').notNull(),
    state: text('state', { enum: ['PENDING', 'TOPPING_UP', 'SENT', 'CONFIRMED', 'SKIPPED', 'FAILED'] }).notNull().default('PENDING'),
    txHash: text('tx_hash'),
    /** The network's own coin the sweep paid, once mined. */
    fee: units('fee'),
    /** Top-ups sent so far (each a hot-wallet transfer with reference `sweep:<id>:top-up:<n>`) and the last one's hash. */
    topUps: integer('top_ups').notNull().default(0),
    topUpTxHash: text('top_up_tx_hash'),
    /** The network's own coin the top-ups paid, booked as each is mined. */
    topUpFees: units('top_up_fees').notNull().default('0'),
    reason: text('reason'),
    /** The block the sweep was mined in: a reorganisation from there puts the confirmation in doubt. */
    blockHeight: bigint('block_height', { mode: 'number' }),
    /** A reorganisation replaced the block of this CONFIRMED sweep: `status` must show it still confirmed, else it is reopened. */
    inDoubtSince: timestamp('in_doubt_since', { withTimezone: true }),
    /** Times it was reopened (CONFIRMED → SENT, its fee's booking taken back) after its transaction left the chain. */
    reopened: integer('reopened').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [index('sweeps_open').on(t.network, t.address).where(sql`${t.state} IN ('PENDING', 'TOPPING_UP', 'SENT')`)],
);

/** Which sweep collects each credited deposit: a deposit is swept by one sweep at most. */
export const sweepDeposits = pgTable('sweep_deposits', {
  depositId: uuid('deposit_id')
    .primaryKey()
    .references(() => chainDeposits.id, { onDelete: 'restrict' }),
  sweepId: uuid('sweep_id')
    .notNull()
    .references(() => sweeps.id, { onDelete: 'cascade' }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export type SweepRow = typeof sweeps.$inferSelect;
