import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { operationId } from './ids.ts';

/**
 * The outbox of signed webhooks an embedded provider (card sandbox, payout sandbox) sends to the gateway, retried
 * with backoff until the receiver answers 2xx (src/server/adapters/webhooks/delivery.ts). One row per event;
 * `topic` says which sender's worker job delivers it and with which secret.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: operationId(),
    topic: text('topic').notNull(),
    /** The sender's own name for the event: enqueuing the same key twice sends it once. */
    eventKey: text('event_key').notNull(),
    url: text('url').notNull(),
    body: text('body').notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    unique('webhook_deliveries_event').on(t.topic, t.eventKey),
    index('webhook_deliveries_due').on(t.topic, t.nextAttemptAt).where(sql`${t.deliveredAt} IS NULL`),
  ],
);
