/**
 * The one type a periodic job has, apart from the worker that runs it, so that composition and the job list can
 * name jobs without importing the worker loop (and adapters never need the loop at all).
 */

/** A periodic job: run at most every `everyMs`, by one process at a time; `run` must be idempotent. */
export type JobHandler = { name: string; everyMs: number; run: () => Promise<void> };
