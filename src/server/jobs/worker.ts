/**
 * The worker loop: periodic jobs, each claimed through its job_schedule row with FOR UPDATE SKIP LOCKED, so any
 * number of processes share them and no job runs twice at once. The row stays locked while its handler runs; a
 * crashed process releases it with its connection. Handlers must be idempotent (they may run again after a crash).
 */
import type pg from 'pg';
import type { Logger } from '../log.ts';
import type { JobHandler } from './port.ts';

export type Worker = { start: () => void; stop: () => Promise<void>; runOnce: () => Promise<number> };

/** One run of a job as this process saw it (the metrics count runs, failures and durations by job). */
export type JobRun = { job: string; ok: boolean; seconds: number };

export function createWorker(options: { pool: pg.Pool; log: Logger; handlers: readonly JobHandler[]; pollMs: number; observe?: ((run: JobRun) => void) | undefined }): Worker {
  const { pool, log, handlers, pollMs, observe } = options;
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let registered = false;

  const register = async () => {
    if (registered) return;
    await pool.query('INSERT INTO job_schedule (name) SELECT unnest($1::text[]) ON CONFLICT (name) DO NOTHING', [handlers.map((h) => h.name)]);
    registered = true;
  };

  /** Runs every due job this process can claim; returns how many ran. */
  const runOnce = async (): Promise<number> => {
    await register();
    let ran = 0;
    for (const handler of handlers) {
      // Stopping: finish the job in hand, start no other.
      if (loop && !running) break;
      if (await runIfDue(handler)) ran++;
    }
    return ran;
  };

  const runIfDue = async (handler: JobHandler): Promise<boolean> => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const claimed = await client.query('SELECT name FROM job_schedule WHERE name = $1 AND run_at <= now() FOR UPDATE SKIP LOCKED', [handler.name]);
      if (claimed.rowCount === 0) {
        await client.query('COMMIT');
        return false;
      }
      const started = Date.now();
      let failure: string | null = null;
      try {
        await handler.run();
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
        log.error({ err: error, job: handler.name }, 'job failed');
      }
      observe?.({ job: handler.name, ok: failure === null, seconds: (Date.now() - started) / 1000 });
      // A failed job waits a little longer, so a persistent fault does not spin.
      const delay = failure ? Math.max(handler.everyMs, 5_000) : handler.everyMs;
      await client.query(
        `UPDATE job_schedule SET run_at = now() + $2 * interval '1 millisecond', last_started_at = to_timestamp($3 / 1000.0),
                last_finished_at = now(), last_error = $4, runs = runs + 1 WHERE name = $1`,
        [handler.name, delay, started, failure],
      );
      await client.query('COMMIT');
      return true;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  return {
    start() {
      if (running) return;
      running = true;
      loop = (async () => {
        while (running) {
          try {
            await runOnce();
          } catch (error) {
            log.warn({ err: error }, 'worker round failed');
          }
          if (running) await sleep(pollMs);
        }
      })();
      log.info({ jobs: handlers.map((h) => h.name) }, 'worker started');
    },
    async stop() {
      if (!running) return;
      running = false;
      wake?.();
      await loop;
      log.info('worker stopped');
    },
    runOnce,
  };
}
