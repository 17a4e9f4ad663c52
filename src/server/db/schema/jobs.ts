import { bigint, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The worker's periodic jobs: a process runs one under a lease (`run_at` a lease ahead, `lease_owner` its claim's
 * token, renewed while it runs), so several processes share the work and a crashed one's lease runs out; a process
 * whose lease was taken over changes the row no more (jobs/worker.ts). A failing job backs off: `failures`
 * counts its failed runs in a row (0 after a success) and `run_at` is pushed out exponentially (jobs/worker.ts).
 */
export const jobSchedule = pgTable('job_schedule', {
  name: text('name').primaryKey(),
  runAt: timestamp('run_at', { withTimezone: true }).notNull().defaultNow(),
  lastStartedAt: timestamp('last_started_at', { withTimezone: true }),
  lastFinishedAt: timestamp('last_finished_at', { withTimezone: true }),
  lastError: text('last_error'),
  failures: integer('failures').notNull().default(0),
  /** The running claim's token; NULL while no process runs the job. */
  leaseOwner: text('lease_owner'),
  runs: bigint('runs', { mode: 'number' }).notNull().default(0),
});
