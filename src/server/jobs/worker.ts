/**
 * The worker: periodic jobs, each in its own lane, so a job waiting on a slow node delays no other job. A lane claims
 * its job by moving its job_schedule row's `run_at` a lease ahead (`UPDATE … WHERE run_at <= now()`: of any number of
 * processes exactly one wins, its token in `lease_owner`), renews the lease while the job runs and sets the next run
 * when it ends, each only while its token still holds the row; a process that dies mid-job leaves the lease to run
 * out, and another process takes the job up then (a process that could not renew in time logs that it lost it). No connection is held for a
 * claim, so the jobs' work and the gateway's requests share the pool; at most `concurrency` jobs run at once in a
 * process. A job that fails waits longer each time (exponential, capped, back to its schedule after a success):
 * `failures` and `run_at` in job_schedule show it, and only a first failure or a new error logs an ERROR.
 * Handlers must be idempotent (they may run again after a crash).
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from '../log.ts';
import type { JobHandler } from './port.ts';

export type Worker = { start: () => void; stop: () => Promise<void>; runOnce: () => Promise<number> };

/** One run of a job as this process saw it (the metrics count runs, failures and durations by job). */
export type JobRun = { job: string; ok: boolean; seconds: number };

/** Wraps one run of a job (OpenTelemetry's span per job run when tracing is on, metrics/tracing.ts); rethrows its failure. */
export type JobTrace = (job: string, run: () => Promise<void>) => Promise<void>;

/** A failing job's first wait (or its schedule, when longer), doubled for each failure in a row up to `maxMs`. */
export type Backoff = { baseMs: number; maxMs: number };
export const DEFAULT_BACKOFF: Backoff = { baseMs: 5_000, maxMs: 300_000 };

/** How long a job waits after its `failures`-th failure in a row (0: it succeeded, so its schedule). */
export function retryDelayMs(everyMs: number, failures: number, backoff: Backoff = DEFAULT_BACKOFF): number {
  if (failures <= 0) return everyMs;
  return Math.max(everyMs, Math.min(backoff.maxMs, Math.max(everyMs, backoff.baseMs) * 2 ** Math.min(failures - 1, 30)));
}

/** Jobs one process runs at once: a quarter of its pool's connections, the rest left to requests. */
export function defaultConcurrency(pool: pg.Pool): number {
  return Math.max(1, Math.floor((pool.options.max ?? 10) / 4));
}

/** A running job's claim: its row's next run is kept this far ahead, renewed every third of it while the job runs. */
export const LEASE_MS = 10_000;

/**
 * The schedule's bookkeeping (a claim, a renewal, a run's end) commits without waiting for its WAL flush
 * (`synchronous_commit` off for that one statement's transaction, then back to the connection's own setting). A crash
 * can forget the last of them, and nothing is lost by that: the row goes back to an earlier claim or schedule, and
 * the job, idempotent, runs again. It spares the disk two flushes per run: 21 lanes polling every 100 ms made 400 a
 * second per process, as many as the money's commits could use.
 */
export const RELAXED_COMMIT = "WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))";

/** The longest a lane sleeps before looking at its row again (another process may have moved it). */
const MAX_IDLE_MS = 60_000;

export function createWorker(options: {
  pool: pg.Pool;
  log: Logger;
  handlers: readonly JobHandler[];
  pollMs: number;
  observe?: ((run: JobRun) => void) | undefined;
  trace?: JobTrace | undefined;
  /** Jobs running at once in this process (default: defaultConcurrency). */
  concurrency?: number;
  /** A claim's lease (LEASE_MS). */
  leaseMs?: number;
  backoff?: Backoff;
}): Worker {
  const { pool, log, handlers, pollMs, observe, trace } = options;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const leaseMs = options.leaseMs ?? LEASE_MS;
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
    // The claim's token: renewals and the closing update change the row only while this claim still holds it.
    const owner = randomUUID();
    const claimed = await pool.query<{ failures: number; lastError: string | null }>(
      `${RELAXED_COMMIT} UPDATE job_schedule SET run_at = now() + $2 * interval '1 millisecond', lease_owner = $3 FROM relaxed
        WHERE name = $1 AND run_at <= now() RETURNING failures, last_error AS "lastError"`,
      [handler.name, leaseMs, owner],
    );
    const row = claimed.rows[0];
    if (!row) {
      // Not due, or running in another process (its lease): look again when it is due.
      const next = await pool.query<{ waitMs: number }>(`SELECT greatest(0, extract(epoch FROM run_at - now()) * 1000)::float8 AS "waitMs" FROM job_schedule WHERE name = $1`, [handler.name]);
      return { ran: false, waitMs: next.rows[0]?.waitMs ?? pollMs };
    }
    const started = Date.now();
    let renewal: Promise<unknown> = Promise.resolve();
    let lost = false;
    const renew = setInterval(() => {
      renewal = pool
        .query(`${RELAXED_COMMIT} UPDATE job_schedule SET run_at = now() + $2 * interval '1 millisecond' FROM relaxed WHERE name = $1 AND lease_owner = $3`, [handler.name, leaseMs, owner])
        .then((renewed) => {
          // Another process took the job over (this one could not renew in time): said once; its run goes on, the row is theirs.
          if (renewed.rowCount === 0 && !lost) log.error({ job: handler.name }, 'job lease lost while running: another process may run it too');
          lost ||= renewed.rowCount === 0;
        })
        .catch((error: unknown) => log.warn({ err: error, job: handler.name }, 'job lease not renewed'));
    }, leaseMs / 3);
    let thrown: { error: unknown } | undefined;
    try {
      await (trace ? trace(handler.name, () => handler.run()) : handler.run());
    } catch (error) {
      thrown = { error };
    } finally {
      clearInterval(renew);
      // A renewal under way must not land after the next run is set.
      await renewal;
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
    await pool.query(
      `${RELAXED_COMMIT} UPDATE job_schedule SET run_at = now() + $2 * interval '1 millisecond', last_started_at = to_timestamp($3 / 1000.0),
              last_finished_at = now(), last_error = $4, failures = $5, runs = runs + 1, lease_owner = NULL FROM relaxed WHERE name = $1 AND lease_owner = $6`,
      [handler.name, delay, started, failure, failures, owner],
    );
    return { ran: true, waitMs: delay };
  };

  /** One job, in turn for a slot: only `concurrency` jobs run at once. */
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
