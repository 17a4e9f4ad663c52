import { sql } from 'drizzle-orm';
import { bigint, check, integer, numeric, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';
import type { Network } from '../../../lib/currencies.ts';
import { operationId } from './ids.ts';

const units = (name: string) => numeric(name, { precision: 78, scale: 0 });

/**
 * A custodian movement (`npm run custody -- sweep-to-cold`): the custody's own coins sent from its outputs to a cold
 * address. SIGNING (the order recorded before the adapter signs it by the movement's id) → SIGNED (the transaction
 * recorded before it is sent) → BROADCAST → COMPLETED when confirmed, booked
 * COLD_STORAGE → WORLD plus its network fee; `idempotency_key` makes a repeated command the same movement. A
 * COMPLETED one whose transaction a reorganisation took off the chain is BROADCAST again, its booking taken back
 * (`reopened` counts it; each round's booking has keys of its own).
 */
export const custodyMovements = pgTable(
  'custody_movements',
  {
    id: operationId(),
    idempotencyKey: text('idempotency_key').notNull(),
    /**
     * COLD: to the operator's cold address (booked COLD_STORAGE → WORLD plus its fee); CONSOLIDATION: the UTXO
     * networks' deposit outputs into the hot wallet's own (nothing leaves the custody: only its fee is booked).
     */
    kind: text('kind', { enum: ['COLD', 'CONSOLIDATION'] }).notNull().default('COLD'),
    network: text('network').$type<Network>().notNull(),
    currency: text('currency').notNull(),
    toAddress: text('to_address').notNull(),
    amount: units('amount').notNull(),
    state: text('state', { enum: ['SIGNING', 'SIGNED', 'BROADCAST', 'COMPLETED', 'FAILED'] }).notNull(),
    /** Set from SIGNED on (a SIGNING one is recorded, with its amount, before the adapter signs it). */
    txHash: text('tx_hash'),
    rawTx: text('raw_tx'),
    confirmations: integer('confirmations').notNull().default(0),
    networkFee: units('network_fee'),
    /** The block the completing transaction was mined in: a reorganisation from there puts the completion in doubt. */
    blockHeight: bigint('block_height', { mode: 'number' }),
    /** A reorganisation replaced the block of this COMPLETED movement: `status` must show it still confirmed, else it is reopened. */
    inDoubtSince: timestamp('in_doubt_since', { withTimezone: true }),
    /** Times it was reopened (COMPLETED → BROADCAST, its booking taken back) after its transaction left the chain. */
    reopened: integer('reopened').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [unique('custody_movements_idempotency').on(t.idempotencyKey), check('custody_movements_amount', sql`${t.amount} > 0`),
    check('custody_movements_signed', sql`${t.state} IN ('SIGNING', 'FAILED') OR (${t.txHash} IS NOT NULL AND ${t.rawTx} IS NOT NULL)`),
  ],
);
