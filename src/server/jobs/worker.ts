/**
 * The worker: periodic jobs, each in its own lane, so a job waiting on a slow node delays no other job. A lane claims
 * its job through the job_schedule row with FOR UPDATE SKIP LOCKED, so any number of processes share the jobs and no
 * job runs twice at once. The row stays locked while its handler runs (a crashed process releases it with its
 * connection), so at most `concurrency` jobs run at once in a process: each holds a connection for its claim and
 * needs more for its work. A job that fails waits longer each time (exponential, capped, back to its schedule after
 * a success): `failures` and `run_at` in job_schedule show it, and only a first failure or a new error logs an ERROR.
 * Handlers must be idempotent (they may run again after a crash).
 */
import type pg from 'pg';
import type { Logger } from '../log.ts';
import type { JobHandler } from './port.ts';

export type Worker = { start: () => void; stop: () => Promise<void>; runOnce: () => Promise<number> };

/** One run of a job as this process saw it (the metrics count runs, failures and durations by job). */
export type JobRun = { job: string; ok: boolean; seconds: number };

/** A failing job's first wait (or its schedule, when longer), doubled for each failure in a row up to `maxMs`. */
export type Backoff = { baseMs: number; maxMs: number };
export const DEFAULT_BACKOFF: Backoff = { baseMs: 5_000, maxMs: 300_000 };

/** How long a job waits after its `failures`-th failure in a row (0: it succeeded, so its schedule). */
export function retryDelayMs(everyMs: number, failures: number, backoff: Backoff = DEFAULT_BACKOFF): number {
  if (failures <= 0) return everyMs;
  return Math.max(everyMs, Math.min(backoff.maxMs, Math.max(everyMs, backoff.baseMs) * 2 ** Math.min(failures - 1, 30)));
}

/** Jobs one process runs at once: half its pool's connections (a job holds one for its claim, its work needs more). */
export function defaultConcurrency(pool: pg.Pool): number {
  return Math.max(1, Math.floor((pool.options.max ?? 10) / 2));
}

/** The longest a lane sleeps before looking at its row again (another process may have moved it). */
const MAX_IDLE_MS = 60_000;

export function createWorker(options: {
  pool: pg.Pool;
  log: Logger;
  handlers: readonly JobHandler[];
  pollMs: number;
  observe?: ((run: JobRun) => void) | undefined;
  /** Jobs running at once in this process (default: defaultConcurrency). */
  concurrency?: number;
  backoff?: Backoff;
}): Worker {
  const { pool, log, handlers, pollMs, observe } = options;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const slots = createSlots(options.concurrency ?? defaultConcurrency(pool));
  let running = false;
  let stopping = false;
  let lanes: Promise<void>[] = [];
  const sleepers = new Set<() => void>();
  let registered = false;

  const register = async () => {
    if (registered) return;
    await pool.query('INSERT INTO job_schedule (name) SELECT unnest($1::text[]) ON CONFLICT (name) DO NOTHING', [handlers.map((h) => h.name)]);
    registered = true;
  };

  /**
   * Runs the job if it is due and no other process holds it. Answers whether it ran, and how long until its row is
   * worth looking at again (its next run, as far as this process knows).
   */
  const runIfDue = async (handler: JobHandler): Promise<{ ran: boolean; waitMs: number }> => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const claimed = await client.query<{ due: boolean; waitMs: number; failures: number; lastError: string | null }>(
        `SELECT run_at <= now() AS due, greatest(0, extract(epoch FROM run_at - now()) * 1000)::float8 AS "waitMs",
                failures, last_error AS "lastError"
           FROM job_schedule WHERE name = $1 FOR UPDATE SKIP LOCKED`,
        [handler.name],
      );
      const row = claimed.rows[0];
      if (!row?.due) {
        await client.query('COMMIT');
        // Held by another process (no row): look again at the next poll; not due: when it is.
        return { ran: false, waitMs: row ? row.waitMs : pollMs };
      }
      const started = Date.now();
      let thrown: { error: unknown } | undefined;
      try {
        await handler.run();
      } catch (error) {
        thrown = { error };
      }
      observe?.({ job: handler.name, ok: thrown === undefined, seconds: (Date.now() - started) / 1000 });
      const failure = thrown === undefined ? null : thrown.error instanceof Error ? thrown.error.message : String(thrown.error);
      const failures = failure === null ? 0 : row.failures + 1;
      const delay = retryDelayMs(handler.everyMs, failures, backoff);
      if (failure === null) {
        if (row.failures > 0) log.info({ job: handler.name, failures: row.failures }, 'job recovered');
      } else if (failures === 1 || failure !== row.lastError) {
        // One ERROR when a job starts failing or fails differently; failing the same way again is a WARN.
        log.error({ err: thrown?.error, job: handler.name, failures, retryInMs: delay }, 'job failed');
      } else {
        log.warn({ job: handler.name, failures, retryInMs: delay, error: failure }, 'job still failing');
      }
      await client.query(
        `UPDATE job_schedule SET run_at = now() + $2 * interval '1 millisecond', last_started_at = to_timestamp($3 / 1000.0),
                last_finished_at = now(), last_error = $4, failures = $5, runs = runs + 1 WHERE name = $1`,
        [handler.name, delay, started, failure, failures],
      );
      await client.query('COMMIT');
      return { ran: true, waitMs: delay };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  };

  /** One job, in turn for a slot: only `concurrency` jobs hold a connection for their claim at once. */
  const runInSlot = async (handler: JobHandler): Promise<{ ran: boolean; waitMs: number }> => {
    await slots.acquire();
    try {
      // Stopping: the jobs in hand finish, none waiting for a slot starts.
      if (stopping) return { ran: false, waitMs: 0 };
      return await runIfDue(handler);
    } finally {
      slots.release();
    }
  };

  /** Runs every due job this process can claim, at most `concurrency` at once; returns how many ran. */
  const runOnce = async (): Promise<number> => {
    await register();
    const results = await Promise.all(handlers.map((handler) => runInSlot(handler)));
    return results.filter((result) => result.ran).length;
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleepers.add(wake);
    });

  const lane = async (handler: JobHandler) => {
    // Claims that failed in a row (the database away): the lane waits longer each time and says so once.
    let claimFailures = 0;
    while (running) {
      let waitMs: number;
      try {
        await register();
        const result = await runInSlot(handler);
        claimFailures = 0;
        // Never busier than the poll interval, never asleep past a minute.
        waitMs = Math.min(MAX_IDLE_MS, Math.max(pollMs, result.waitMs));
      } catch (error) {
        if (claimFailures++ === 0) log.warn({ err: error, job: handler.name }, 'the worker could not claim a job; it tries again');
        waitMs = Math.min(MAX_IDLE_MS, pollMs * 2 ** Math.min(claimFailures, 16));
      }
      if (running) await sleep(waitMs);
    }
  };

  return {
    start() {
      if (running) return;
      running = true;
      stopping = false;
      lanes = handlers.map((handler) => lane(handler));
      log.info({ jobs: handlers.map((h) => h.name), concurrency: slots.size }, 'worker started');
    },
    async stop() {
      if (!running) return;
      running = false;
      stopping = true;
      // Every job in hand finishes, no other starts.
      for (const wake of [...sleepers]) wake();
      await Promise.all(lanes);
      log.info('worker stopped');
    },
    runOnce,
  };
}

/** A counting semaphore: `acquire` waits for a free slot, `release` hands it to the next waiter. */
function createSlots(size: number) {
  let free = size;
  const waiting: (() => void)[] = [];
  return {
    size,
    acquire(): Promise<void> {
      if (free > 0) {
        free--;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    release(): void {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
}
