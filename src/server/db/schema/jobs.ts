import { bigint, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The worker's periodic jobs: a process runs one while holding its row (FOR UPDATE SKIP LOCKED), so several
 * processes share the work and a crashed one releases it with its connection. A failing job backs off: `failures`
 * counts its failed runs in a row (0 after a success) and `run_at` is pushed out exponentially (jobs/worker.ts).
 */
export const jobSchedule = pgTable('job_schedule', {
  name: text('name').primaryKey(),
  runAt: timestamp('run_at', { withTimezone: true }).notNull().defaultNow(),
  lastStartedAt: timestamp('last_started_at', { withTimezone: true }),
  lastFinishedAt: timestamp('last_finished_at', { withTimezone: true }),
  lastError: text('last_error'),
  failures: integer('failures').notNull().default(0),
  runs: bigint('runs', { mode: 'number' }).notNull().default(0),
});
