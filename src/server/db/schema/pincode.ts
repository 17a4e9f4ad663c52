import { index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.ts';

/**
 * A user's passcode (SPEC §5, §6) and its wrong-code counter, shared by every gateway process: `failures` counts
 * wrong codes in a row, `locked_until` is the wait of B2C_USM0030, `blocked_at` the block of B2C_USM0032.
 */
export const userPincodes = pgTable('user_pincodes', {
  userId: uuid('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  /** argon2id of the 4 digits; null while the passcode is off. */
  pinHash: text('pin_hash'),
  failures: integer('failures').notNull().default(0),
  lockedUntil: timestamp('locked_until', { withTimezone: true }),
  blockedAt: timestamp('blocked_at', { withTimezone: true }),
  /** The mailed code that lifts a block (its keyed hash only), its expiry and the wrong tries at it. */
  resetCodeHash: text('reset_code_hash'),
  resetExpiresAt: timestamp('reset_expires_at', { withTimezone: true }),
  resetAttempts: integer('reset_attempts').notNull().default(0),
  /** Reset codes mailed since `reset_sends_since`: a day's codes are capped, and so is the guessing across them. */
  resetSends: integer('reset_sends').notNull().default(0),
  resetSendsSince: timestamp('reset_sends_since', { withTimezone: true }),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * One e-mail change in progress per user (SPEC §4 E-mail verification): the old address proves itself first
 * (stage 'old'), then the new one (stage 'new'). Only a keyed hash of the 4-character code is kept.
 */
export const emailChanges = pgTable(
  'email_changes',
  {
    userId: uuid('user_id')
      .primaryKey()
      .references(() => users.id, { onDelete: 'cascade' }),
    newEmail: text('new_email').notNull(),
    stage: text('stage', { enum: ['old', 'new'] }).notNull(),
    codeHash: text('code_hash').notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** Codes mailed for this change so far: resending is capped by count (the 59 s wait is the screen's). */
    sends: integer('sends').notNull().default(1),
    sentAt: timestamp('sent_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('email_changes_new_email').on(t.newEmail)],
);
