import { describe, expect, it } from 'vitest';
import { defaultConcurrency, DEFAULT_BACKOFF, retryDelayMs } from '../../../../src/server/jobs/worker.ts';
import type pg from 'pg';

describe("a failing job's wait", () => {
  it('is its schedule after a success, then doubles from max(schedule, 5 s) per failure in a row, capped at 5 min', () => {
    expect(retryDelayMs(500, 0)).toBe(500);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 40].map((failures) => retryDelayMs(500, failures))).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
    expect(DEFAULT_BACKOFF).toEqual({ baseMs: 5_000, maxMs: 300_000 });
  });

  it('never runs a job more often than its schedule, even past the cap', () => {
    expect(retryDelayMs(3_600_000, 1)).toBe(3_600_000);
    expect(retryDelayMs(3_600_000, 10)).toBe(3_600_000);
    expect(retryDelayMs(60_000, 1)).toBe(60_000);
    expect(retryDelayMs(60_000, 3)).toBe(240_000);
    expect(retryDelayMs(60_000, 4)).toBe(300_000);
  });

  it('follows a given base and cap', () => {
    expect([1, 2, 3, 4].map((failures) => retryDelayMs(0, failures, { baseMs: 100, maxMs: 300 }))).toEqual([100, 200, 300, 300]);
  });
});

describe("the worker's concurrency", () => {
  it("is a quarter of the pool's connections, at least one", () => {
    const pool = (max: number | undefined) => ({ options: { max } }) as unknown as pg.Pool;
    expect(defaultConcurrency(pool(20))).toBe(5);
    expect(defaultConcurrency(pool(4))).toBe(1);
    expect(defaultConcurrency(pool(1))).toBe(1);
    expect(defaultConcurrency(pool(undefined))).toBe(2);
  });
});
