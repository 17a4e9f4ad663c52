import { sql } from 'drizzle-orm';
import { bigint, index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.ts';

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
