import { index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.ts';

/** A published proof of reserves (domain/reserves.ts): the JSON served at /api/reserves, as it was signed. */
export const reserveProofs = pgTable(
  'reserve_proofs',
  {
    id: uuid('id').primaryKey(),
    asOf: timestamp('as_of', { withTimezone: true }).notNull(),
    rootHash: text('root_hash').notNull(),
    body: jsonb('body').notNull(),
  },
  (t) => [index('reserve_proofs_as_of').on(t.asOf)],
);

/** Each user's leaf of a proof: the secret nonce, the balances it commits to (atomic units per asset) and its path to the root. */
export const reserveLeaves = pgTable(
  'reserve_leaves',
  {
    proofId: uuid('proof_id')
      .notNull()
      .references(() => reserveProofs.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    nonce: text('nonce').notNull(),
    leafHash: text('leaf_hash').notNull(),
    balances: jsonb('balances').$type<string[]>().notNull(),
    path: jsonb('path').$type<{ side: 'left' | 'right'; hash: string; sums: string[] }[]>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.proofId, t.userId] })],
);
