import { bigserial, index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Every mail the product sends. Outside production without SMTP_URL this is the developer's mailbox (links in the
 * log too); otherwise a row keeps the mail with its link or code removed (adapters/mail/mailer.ts).
 */
export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: bigserial('id', { mode: 'bigint' }).primaryKey(),
    recipient: text('recipient').notNull(),
    subject: text('subject').notNull(),
    text: text('text').notNull(),
    html: text('html').notNull(),
    /** What the mail is for ('confirm_email', 'reset_password'), so tests and operators can find it. */
    kind: text('kind').notNull(),
    status: text('status', { enum: ['outbox', 'sent', 'failed'] }).notNull(),
    error: text('error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('mail_outbox_recipient').on(t.recipient, t.createdAt)],
);
