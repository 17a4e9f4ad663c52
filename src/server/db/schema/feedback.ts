import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.ts';
import { operationId } from './ids.ts';

/** 'Leave feedback' (SPEC §2 Settings): what a user wrote, kept whether or not the mail to support went out. */
export const feedback = pgTable(
  'feedback',
  {
    id: operationId(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** Where support answers: the address the user left (the account's, prefilled), or none. */
    replyTo: text('reply_to'),
    text: text('text').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** When the mail to SUPPORT_EMAIL went through the mailer; null when it was refused (the per-address cap). */
    mailedAt: timestamp('mailed_at', { withTimezone: true }),
  },
  (t) => [index('feedback_created').on(t.createdAt)],
);
