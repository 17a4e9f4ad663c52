import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.ts';
import { walletTransactions } from './wallet.ts';
import { operationId } from './ids.ts';

/** A Telegram account linked to a user (SPEC §3 tgAuth): one per user, one user per Telegram account. */
export const telegramAccounts = pgTable(
  'telegram_accounts',
  {
    telegramId: bigint('telegram_id', { mode: 'number' }).primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    username: text('username'),
    firstName: text('first_name').notNull().default(''),
    languageCode: text('language_code'),
    linkedAt: timestamp('linked_at', { withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('telegram_accounts_user_unique').on(t.userId)],
);

/** One-time codes that link a Telegram account to a web user (POST /user/tg/code); only their keyed hash is kept (domain/codes.ts). */
export const telegramLinkCodes = pgTable(
  'telegram_link_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('telegram_link_codes_user').on(t.userId), index('telegram_link_codes_expiry').on(t.expiresAt).where(sql`${t.usedAt} is null`)],
);

/**
 * The outbox of the bot's messages about a user's money (domain/notifications.ts): one row per event, written in
 * the transaction that changed the money's state, only while the user's Telegram is linked and the switch is on;
 * the `notifications.telegram` job sends each once, retried with backoff, and gives up after a while.
 */
export const telegramNotifications = pgTable(
  'telegram_notifications',
  {
    id: operationId(),
    /** `<event>:<order id>`: the same event queued twice is one message. */
    eventKey: text('event_key').notNull().unique(),
    event: text('event', { enum: ['deposit.pending', 'deposit.credited', 'withdrawal.sent', 'withdrawal.completed', 'withdrawal.failed', 'buy.completed'] }).notNull(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    walletTransactionId: uuid('wallet_transaction_id')
      .notNull()
      .references(() => walletTransactions.id, { onDelete: 'cascade' }),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    /** Set once Telegram took the message; `skipped` once the link or the switch was gone at sending, `failed` once given up. */
    sentAt: timestamp('sent_at', { withTimezone: true }),
    outcome: text('outcome', { enum: ['sent', 'skipped', 'failed'] }),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('telegram_notifications_due').on(t.nextAttemptAt).where(sql`${t.outcome} IS NULL`)],
);
