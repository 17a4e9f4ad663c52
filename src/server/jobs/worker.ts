/**
 * The worker: periodic jobs, run by one poller per process. Every tick (`WORKER_POLL_MS`, at most a third of a lease)
 * it sends one statement that writes the ends of the runs finished since the last tick and claims the jobs now due,
 * oldest first, as many as it has free slots: a claim moves the job_schedule row's `run_at` a lease ahead and puts
 * the tick's token in `lease_owner` (`FOR UPDATE SKIP LOCKED`: of any number of processes exactly one wins each row).
 * A run whose next run is due by then is claimed again in the same write, in its turn among the due ones. Each
 * claimed job runs on its own (a job waiting on a slow node delays no other job and no tick), renews its lease while
 * it runs, and its end changes the row only while its token still holds it; a process that dies mid-job leaves the
 * lease to run out, and another process takes the job up then (a process that could not renew in time logs that it
 * lost it). No connection is held between ticks, so the jobs' work and the gateway's requests share the pool; at most
 * `concurrency` jobs run at once in a process. A job runs every `everyMs` counted from its start (one that took
 * longer runs again at the next tick). A job that fails waits longer each time, counted from its end (exponential,
 * capped, back to its schedule after a success): `failures` and `run_at` in job_schedule show it, and only a first
 * failure or a new error logs an ERROR. Handlers must be idempotent (they may run again after a crash).
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from '../log.ts';
import type { JobHandler } from './port.ts';

/** `runOnce` is for tests and tools: it runs what is due now, to the end, and is not meant to overlap `start`. */
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
 * The schedule's bookkeeping (a tick, a renewal) commits without waiting for its WAL flush (`synchronous_commit` off
 * for that one statement's transaction, then back to the connection's own setting). A crash can forget the last of
 * them, and nothing is lost by that: the row goes back to an earlier claim or schedule, and the job, idempotent, runs
 * again. It spares the disk a flush per tick.
 */
export const RELAXED_COMMIT = "WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))";

/**
 * A tick, in one statement. $1–$7: the runs that ended (name, claim token, ms until the next run is due (≤ 0: due),
 * ms since the run started and since it finished, its error, its failures in a row); $8: the jobs not in this
 * process's hands; $9: ended jobs not to claim again (runOnce's); $10: free slots; $11: the lease in ms; $12: this
 * tick's token. The ended rows and the waiting rows are disjoint, so each row is written once.
 */
const TICK = `${RELAXED_COMMIT},
  ends AS (SELECT * FROM unnest($1::text[], $2::text[], $3::float8[], $4::float8[], $5::float8[], $6::text[], $7::int[]) AS e(name, owner, wait_ms, started_ago, finished_ago, error, failures)),
  waiting AS (SELECT name, run_at AS due FROM job_schedule WHERE name = ANY($8::text[]) AND run_at <= now() FOR UPDATE SKIP LOCKED),
  due AS (SELECT name, due FROM waiting UNION ALL SELECT name, now() + wait_ms * interval '1 millisecond' FROM ends WHERE wait_ms <= 0 AND NOT name = ANY($9::text[])),
  chosen AS (SELECT name FROM due ORDER BY due LIMIT $10),
  ended AS (
    UPDATE job_schedule s SET
      lease_owner = CASE WHEN s.name IN (SELECT name FROM chosen) THEN $12 END,
      run_at = now() + CASE WHEN s.name IN (SELECT name FROM chosen) THEN $11 ELSE e.wait_ms END * interval '1 millisecond',
      last_started_at = now() - e.started_ago * interval '1 millisecond', last_finished_at = now() - e.finished_ago * interval '1 millisecond',
      last_error = e.error, failures = e.failures, runs = s.runs + 1
    FROM relaxed, ends e WHERE s.name = e.name AND s.lease_owner = e.owner
    RETURNING s.name, s.lease_owner IS NOT NULL AS claimed, s.failures, s.last_error),
  claimed AS (
    UPDATE job_schedule s SET run_at = now() + $11 * interval '1 millisecond', lease_owner = $12 FROM relaxed
    WHERE s.name IN (SELECT name FROM chosen) AND s.name = ANY($8::text[])
    RETURNING s.name, true AS claimed, s.failures, s.last_error)
SELECT name, claimed, failures, last_error AS "lastError", (SELECT count(*) FROM due)::int AS due FROM ended
UNION ALL SELECT name, claimed, failures, last_error, (SELECT count(*) FROM due)::int FROM claimed`;

/** The longest the poller waits after ticks that failed in a row (the database away). */
const MAX_IDLE_MS = 60_000;

/** A claim in hand: its job, the tick's token and what the row said of its failures. */
type Claim = { handler: JobHandler; owner: string; started: number; failures: number; lastError: string | null };
/** A finished run waiting for the next tick to write it: `dueAt` is its next run (this process's clock). */
type End = { claim: Claim; finished: number; failure: string | null; failures: number; dueAt: number };

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
  const concurrency = options.concurrency ?? defaultConcurrency(pool);
  // A finished run's end is written before the lease it still holds (renewed at most a third of a lease before) runs out.
  const tickMs = Math.min(pollMs, leaseMs / 3);
  const byName = new Map(handlers.map((handler) => [handler.name, handler]));
  // The jobs this process holds: running, or ended with the end not written yet.
  const held = new Set<string>();
  const ended = new Map<string, End>();
  const runs = new Set<Promise<void>>();
  let running = false;
  /** The last tick left due jobs waiting for a slot: a run that ends wakes the poller. */
  let full = false;
  let poller: Promise<void> = Promise.resolve();
  const sleepers = new Set<() => void>();
  const wakeAll = () => {
    for (const wake of [...sleepers]) wake();
  };
  let registered = false;

  const register = async () => {
    if (registered) return;
    await pool.query('INSERT INTO job_schedule (name) SELECT unnest($1::text[]) ON CONFLICT (name) DO NOTHING', [handlers.map((h) => h.name)]);
    registered = true;
  };

  /** Runs a claimed job on its own, renewing its lease; its end waits in `ended` for the next tick. */
  const launch = (claim: Claim) => {
    const { handler, owner, started } = claim;
    held.add(handler.name);
    const run = (async () => {
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
        // A renewal under way must not land after the end is written.
        await renewal;
      }
      const finished = Date.now();
      observe?.({ job: handler.name, ok: thrown === undefined, seconds: (finished - started) / 1000 });
      const failure = thrown === undefined ? null : thrown.error instanceof Error ? thrown.error.message : String(thrown.error);
      const failures = failure === null ? 0 : claim.failures + 1;
      const delay = retryDelayMs(handler.everyMs, failures, backoff);
      if (failure === null) {
        if (claim.failures > 0) log.info({ job: handler.name, failures: claim.failures }, 'job recovered');
      } else if (failures === 1 || failure !== claim.lastError) {
        // One ERROR when a job starts failing or fails differently; failing the same way again is a WARN.
        log.error({ err: thrown?.error, job: handler.name, failures, retryInMs: delay }, 'job failed');
      } else {
        log.warn({ job: handler.name, failures, retryInMs: delay, error: failure }, 'job still failing');
      }
      // A success keeps the schedule from the run's start; a failure waits from its end.
      ended.set(handler.name, { claim, finished, failure, failures, dueAt: failure === null ? started + delay : finished + delay });
      // Due jobs wait for a slot since the last tick: the next tick is now.
      if (full) {
        full = false;
        wakeAll();
      }
    })();
    runs.add(run);
    void run.finally(() => runs.delete(run));
  };

  /**
   * One tick: writes the ends waiting, claims what is due into the free slots (none when `claiming` is false) and
   * launches it; answers the names it claimed, and whether more were due than it had free slots.
   * `again` lists ended jobs not to claim again now.
   */
  const tick = async (claiming: boolean, again: ReadonlySet<string> = new Set()): Promise<{ claimed: string[]; more: boolean }> => {
    const ends = [...ended.values()];
    const free = claiming ? Math.max(0, concurrency - runs.size) : 0;
    const waiting = free > 0 ? handlers.filter((h) => !held.has(h.name) && !again.has(h.name)).map((h) => h.name) : [];
    if (ends.length === 0 && waiting.length === 0) return { claimed: [], more: false };
    const now = Date.now();
    const token = randomUUID();
    const result = await pool.query<{ name: string; claimed: boolean; failures: number; lastError: string | null; due: number }>(TICK, [
      ends.map((end) => end.claim.handler.name),
      ends.map((end) => end.claim.owner),
      ends.map((end) => end.dueAt - now),
      ends.map((end) => now - end.claim.started),
      ends.map((end) => now - end.finished),
      ends.map((end) => end.failure),
      ends.map((end) => end.failures),
      waiting,
      [...again],
      free,
      leaseMs,
      token,
    ]);
    // Written, or no longer this process's to write (its lease was taken over: logged while it ran).
    for (const end of ends) {
      ended.delete(end.claim.handler.name);
      held.delete(end.claim.handler.name);
    }
    const claimed: string[] = [];
    const started = Date.now();
    for (const row of result.rows) {
      const handler = byName.get(row.name);
      if (!row.claimed || !handler) continue;
      claimed.push(row.name);
      launch({ handler, owner: token, started, failures: row.failures, lastError: row.lastError });
    }
    return { claimed, more: (result.rows[0]?.due ?? 0) > free };
  };

  /** Runs every due job this process can claim, each once, at most `concurrency` at once, to the end; returns how many ran. */
  const runOnce = async (): Promise<number> => {
    await register();
    const ran = new Set<string>();
    for (;;) {
      for (const name of (await tick(true, ran)).claimed) ran.add(name);
      if (runs.size === 0) break;
      await Promise.race(runs);
    }
    if (ended.size > 0) await tick(false);
    return ran.size;
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

  const poll = async () => {
    // Ticks that failed in a row (the database away): the poller waits longer each time and says so once.
    let failures = 0;
    while (running) {
      let waitMs = tickMs;
      try {
        await register();
        const { more } = await tick(true);
        failures = 0;
        // More were due than there were slots: tick again as soon as one is free (now, if a run ended meanwhile).
        if (more && runs.size < concurrency) continue;
        full = more;
      } catch (error) {
        if (failures++ === 0) log.warn({ err: error }, 'the worker could not claim its jobs; it tries again');
        waitMs = Math.min(MAX_IDLE_MS, tickMs * 2 ** Math.min(failures, 16));
      }
      if (running) await sleep(waitMs);
    }
  };

  return {
    start() {
      if (running) return;
      running = true;
      poller = poll();
      log.info({ jobs: handlers.map((h) => h.name), concurrency }, 'worker started');
    },
    async stop() {
      if (!running) return;
      running = false;
      wakeAll();
      await poller;
      // Every job in hand finishes, none starts; their ends are written.
      await Promise.all([...runs]);
      try {
        if (ended.size > 0) await tick(false);
      } catch (error) {
        log.warn({ err: error }, 'the worker could not record its last runs; their leases run out');
      }
      log.info('worker stopped');
    },
    runOnce,
  };
}
