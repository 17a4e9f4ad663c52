import { bigserial, index, jsonb, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';

/**
 * The embedded data plane's events (SPEC §3 analytics events), as the SDK sent them: a few columns the report
 * reads, and the whole event in `payload`. A retried post of the same event (same message id from the same
 * anonymous id) is stored once. Rows older than ANALYTICS_RETENTION_DAYS are deleted by a job.
 */
export const analyticsEvents = pgTable(
  'analytics_events',
  {
    id: bigserial('id', { mode: 'bigint' }).primaryKey(),
    messageId: text('message_id').notNull(),
    anonymousId: text('anonymous_id').notNull(),
    userId: text('user_id'),
    type: text('type', { enum: ['page', 'track', 'identify', 'alias', 'group'] }).notNull(),
    /** A track's event name ('load', 'Page Unloaded'), a page's name; null for identify, alias, group. */
    name: text('name'),
    /** The page's path (context.page.path), where the SDK gave one. */
    path: text('path'),
    /** SPEC §3: the 'load' event's app type, 'tg' or 'web'. */
    appType: text('app_type'),
    sentAt: timestamp('sent_at', { withTimezone: true }).notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    payload: jsonb('payload').notNull(),
  },
  (t) => [unique('analytics_events_message').on(t.anonymousId, t.messageId), index('analytics_events_received').on(t.receivedAt)],
);
