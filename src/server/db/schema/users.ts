import { sql } from 'drizzle-orm';
import { boolean, pgTable, text, timestamp, uuid, uniqueIndex, index, integer, varchar, bigint } from 'drizzle-orm/pg-core';

/** A person who signs in (SPEC §3 User/profile); e-mail is stored lower-cased, unique when present. */
export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    email: text('email'),
    passwordHash: text('password_hash'),
    emailConfirmedAt: timestamp('email_confirmed_at', { withTimezone: true }),
    language: text('language', { enum: ['ENG', 'RUS'] }).notNull().default('ENG'),
    defaultFiatCurrency: text('default_fiat_currency').notNull().default('USD'),
    /** Settings' switch: the bot's messages about the user's money (deposits, withdrawals, purchases) while Telegram is linked. */
    telegramNotifications: boolean('telegram_notifications').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** The `sub` of an external OpenID issuer (OIDC_ISSUER), when one replaces the embedded provider. */
    externalSubject: text('external_subject'),
    /** Access tokens issued before this instant are refused (password reset ends every session). */
    sessionsRevokedAt: timestamp('sessions_revoked_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('users_email_unique').on(t.email).where(sql`${t.email} is not null`),
    uniqueIndex('users_external_subject_unique').on(t.externalSubject).where(sql`${t.externalSubject} is not null`),
  ],
);

/** A wallet account of a user (SPEC §3 Account): the `{account}` of every wallet path. */
export const walletAccounts = pgTable(
  'wallet_accounts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull().default('Account'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** Withdrawals refused (WITHDRAWALS_FROZEN) since: a credited deposit left the chain and the balance could not give it back. */
    withdrawalsFrozenAt: timestamp('withdrawals_frozen_at', { withTimezone: true }),
    withdrawalsFrozenReason: text('withdrawals_frozen_reason'),
  },
  (t) => [index('wallet_accounts_user').on(t.userId)],
);

/** One-time codes mailed to a user (e-mail confirmation, password reset); only their keyed hash is kept (domain/codes.ts). */
export const userCodes = pgTable(
  'user_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    purpose: text('purpose', { enum: ['confirm_email', 'reset_password'] }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('user_codes_user').on(t.userId, t.purpose)],
);

/** Failed sign-in attempts per e-mail and per client address, shared by every process. */
export const loginThrottle = pgTable(
  'login_throttle',
  {
    key: text('key').primaryKey(),
    failures: integer('failures').notNull(),
    windowStartedAt: timestamp('window_started_at', { withTimezone: true }).notNull(),
    lockedUntil: timestamp('locked_until', { withTimezone: true }),
  },
  (t) => [index('login_throttle_window').on(t.windowStartedAt)],
);

/**
 * rate-limiter-flexible's PostgreSQL store (domain/limits.ts), one table for every limit (keys carry the limit's
 * prefix): created here rather than by the library, so it exists before the first request of any instance and the
 * gateway's role needs no right to create tables. `expire` is epoch milliseconds, as the library writes it.
 */
export const rateLimit = pgTable(
  'rate_limit',
  {
    key: varchar('key', { length: 255 }).primaryKey(),
    points: integer('points').notNull().default(0),
    expire: bigint('expire', { mode: 'number' }),
  },
  (t) => [index('rate_limit_expire').on(t.expire)],
);
