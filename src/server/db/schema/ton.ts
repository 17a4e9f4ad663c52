import { index, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The TON adapter's signed external messages (adapters/chains/ton/messages.ts): one per reference (a withdrawal's
 * or a sweep's) and attempt, with the seqno it took on its wallet and its `valid_until`. The same reference gives the
 * stored message again; a new attempt is made only once the chain proves the previous one can no longer land.
 */
export const tonMessages = pgTable(
  'ton_messages',
  {
    reference: text('reference').notNull(),
    attempt: integer('attempt').notNull(),
    /** The sending wallet, raw (`0:…` lower case hex). */
    wallet: text('wallet').notNull(),
    seqno: integer('seqno').notNull(),
    /** Unix seconds after which the wallet contract refuses the message. */
    validUntil: integer('valid_until').notNull(),
    /** The external-in message's cell hash (hex): the hash the custody stores and toncenter v3 finds it by. */
    messageHash: text('message_hash').notNull().unique(),
    /** The message as a base64 BoC, what v2 sendBoc takes. */
    boc: text('boc').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.reference, t.attempt] }), index('ton_messages_wallet_seqno').on(t.wallet, t.seqno)],
);
