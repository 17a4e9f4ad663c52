import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { Writable } from 'node:stream';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { countedPool, createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { quietLog, waitFor } from '../../support/custody.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import { createWorker, RELAXED_COMMIT } from '../../../src/server/jobs/worker.ts';
import type { JobHandler } from '../../../src/server/jobs/port.ts';

/**
 * The worker on a real job_schedule: one statement per tick for all of a process's jobs (the ends of its runs and its
 * claims), each job running on its own (a job that hangs delays no other), due jobs taken oldest first, a job every
 * `everyMs` from its start, at most `concurrency` at once, never one job twice at once across processes, failures backing off exponentially up to the
 * cap and back to the schedule after a success, one ERROR line per failing streak, and a graceful stop.
 */
type Line = { level: number; msg: string; job?: string; failures?: number; retryInMs?: number };

const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
};
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the worker', () => {
  let testDatabase: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: await mkdtemp(join(tmpdir(), 'worker-lanes-')) }, quietLog);
  }, 60_000);
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });
  beforeEach(async () => {
    await database.pool.query('DELETE FROM job_schedule');
  });

  it("keeps the schedule's bookkeeping off the disk's flush, and only it: the connection's next statement commits durably", async () => {
    // The relaxed commit is the statement's own transaction's (set_config local): inside a transaction it shows.
    const client = await database.pool.connect();
    try {
      await client.query('BEGIN');
      expect((await client.query<{ s: string }>(`${RELAXED_COMMIT} SELECT current_setting('synchronous_commit') AS s FROM relaxed`)).rows[0]?.s).toBe('off');
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    // One connection: the job's own statements and the next ones after a claim and a run's end take the same one.
    const single = new pg.Pool({ connectionString: testDatabase.url, max: 1 });
    try {
      const seen: string[] = [];
      const handler: JobHandler = { name: 'test.durable', everyMs: 0, run: async () => void seen.push((await single.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s")).rows[0]?.s ?? '') };
      const worker = createWorker({ pool: single, log: quietLog, handlers: [handler], pollMs: 20 });
      expect(await worker.runOnce()).toBe(1);
      expect(await worker.runOnce()).toBe(1);
      expect(seen).toEqual(['on', 'on']);
      expect((await single.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s")).rows[0]?.s).toBe('on');
      expect((await single.query<{ runs: number }>("SELECT runs::int AS runs FROM job_schedule WHERE name = 'test.durable'")).rows[0]?.runs).toBe(2);
    } finally {
      await single.end();
    }
  });

  it("writes its jobs' ends and claims in one statement a tick, however many jobs ran", async () => {
    const { pool, counts } = countedPool(database.pool);
    const ran = new Map<string, number>();
    const handlers: JobHandler[] = ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => ({ name: `test.${name}`, everyMs: 0, run: async () => void ran.set(name, (ran.get(name) ?? 0) + 1) }));
    const worker = createWorker({ pool, log: quietLog, handlers, pollMs: 50, concurrency: 6 });
    worker.start();
    await waitFor('every job to run ten times', async () => [...ran.values()].filter((n) => n >= 10).length === 6, 10_000);
    await worker.stop();
    const runs = [...ran.values()].reduce((a, n) => a + n, 0);
    // The registration, then one tick per poll: each ends the runs of the last and claims them again (it was two statements per run).
    expect(counts.statements).toBeLessThanOrEqual(runs / 6 + 3);
    expect(counts.connections).toBe(0);
    const rows = (await database.pool.query<{ runs: number; owner: string | null }>("SELECT runs::int AS runs, lease_owner AS owner FROM job_schedule WHERE name LIKE 'test.%' ORDER BY name")).rows;
    // Every run's end is written, the last ones by the stop, and no lease is left held.
    expect(rows).toEqual(['a', 'b', 'c', 'd', 'e', 'f'].map((name) => ({ runs: ran.get(name), owner: null })));
  });

  it('keeps a job to its schedule from its start, and gives a slot to the job waiting longest', async () => {
    const starts = new Map<string, number[]>();
    const handler = (name: string, everyMs: number, takesMs: number): JobHandler => ({
      name: `test.${name}`,
      everyMs,
      run: async () => {
        starts.set(name, [...(starts.get(name) ?? []), Date.now()]);
        await pause(takesMs);
      },
    });
    // One slot, three jobs always due: none waits behind another's runs more than its turn.
    const worker = createWorker({ pool: database.pool, log: quietLog, handlers: [handler('x', 0, 20), handler('y', 0, 20), handler('z', 0, 20)], pollMs: 10, concurrency: 1 });
    worker.start();
    try {
      await waitFor('each of the three jobs to run five times', async () => ['x', 'y', 'z'].every((name) => (starts.get(name)?.length ?? 0) >= 5), 10_000);
    } finally {
      await worker.stop();
    }
    const order = [...starts.entries()].flatMap(([name, at]) => at.map((t) => [t, name] as const)).sort((a, b) => a[0] - b[0]).map(([, name]) => name);
    // Round robin: no job runs twice before each of the others ran once since.
    for (let i = 0; i + 2 < order.length; i++) expect(new Set(order.slice(i, i + 3)).size).toBe(3);

    // A 200 ms job every 400 ms starts every 400 ms, not 400 ms after it ended.
    starts.clear();
    const paced = createWorker({ pool: database.pool, log: quietLog, handlers: [handler('paced', 400, 200)], pollMs: 10 });
    paced.start();
    try {
      await waitFor('five runs', async () => (starts.get('paced')?.length ?? 0) >= 5, 10_000);
    } finally {
      await paced.stop();
    }
    const at = starts.get('paced') ?? [];
    for (const gap of at.slice(1).map((t, i) => t - (at[i] ?? t))) {
      expect(gap).toBeGreaterThanOrEqual(395);
      expect(gap).toBeLessThan(550);
    }
  });

  it('runs a job while another hangs: each job has its own lane', async () => {
    const hung = gate();
    let ticks = 0;
    const handlers: JobHandler[] = [
      { name: 'test.hang', everyMs: 0, run: () => hung.opened },
      { name: 'test.tick', everyMs: 0, run: async () => void ticks++ },
    ];
    const worker = createWorker({ pool: database.pool, log: quietLog, handlers, pollMs: 20 });
    worker.start();
    try {
      await waitFor('test.tick to run five times while test.hang hangs', async () => ticks >= 5, 5_000);
    } finally {
      hung.open();
      await worker.stop();
    }
  });

  it('runs at most `concurrency` jobs at once, and the rest as slots free up', async () => {
    const hung = gate();
    let running = 0;
    let most = 0;
    const ran = new Set<string>();
    const handlers: JobHandler[] = ['a', 'b', 'c', 'd'].map((name) => ({
      name: `test.${name}`,
      everyMs: 60_000,
      run: async () => {
        running++;
        most = Math.max(most, running);
        ran.add(name);
        await hung.opened;
        running--;
      },
    }));
    const worker = createWorker({ pool: database.pool, log: quietLog, handlers, pollMs: 20, concurrency: 2 });
    worker.start();
    try {
      await waitFor('two jobs running', async () => running === 2, 5_000);
      await pause(200);
      expect(running).toBe(2);
      hung.open();
      await waitFor('all four jobs run', async () => ran.size === 4, 5_000);
      expect(most).toBe(2);
    } finally {
      hung.open();
      await worker.stop();
    }
  });

  it('gives a slot that frees up to the next due job at once, not at the next tick', async () => {
    const ran = new Set<string>();
    const handlers: JobHandler[] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((name) => ({ name: `test.${name}`, everyMs: 60_000, run: async () => (await pause(30), void ran.add(name)) }));
    // A tick every 2 s (the poll), two slots, eight jobs due: four rounds of 30 ms, well inside the first poll.
    const worker = createWorker({ pool: database.pool, log: quietLog, handlers, pollMs: 2_000, concurrency: 2 });
    const from = Date.now();
    worker.start();
    try {
      await waitFor('all eight jobs to run', async () => ran.size === 8, 5_000);
      expect(Date.now() - from).toBeLessThan(1_500);
    } finally {
      await worker.stop();
    }
  });

  it('never runs one job twice at once across two processes', async () => {
    const pools = [new pg.Pool({ connectionString: testDatabase.url, max: 4 }), new pg.Pool({ connectionString: testDatabase.url, max: 4 })];
    let inFlight = 0;
    let most = 0;
    let runs = 0;
    const handler: JobHandler = {
      name: 'test.shared',
      everyMs: 0,
      run: async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        await pause(30);
        inFlight--;
        runs++;
      },
    };
    const workers = pools.map((pool) => createWorker({ pool, log: quietLog, handlers: [handler], pollMs: 5 }));
    for (const worker of workers) worker.start();
    try {
      await waitFor('ten runs', async () => runs >= 10, 10_000);
      expect(most).toBe(1);
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()));
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it('changes its job row no more once another process took the lease over, and says so once', async () => {
    const lines: Line[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (chunk.toString().split('\n').filter((t) => t.trim()).forEach((t) => lines.push(JSON.parse(t) as Line)), done()) }));
    const release = gate();
    let running = false;
    const handler: JobHandler = {
      name: 'test.lease',
      everyMs: 0,
      run: async () => {
        running = true;
        await release.opened;
      },
    };
    const worker = createWorker({ pool: database.pool, log, handlers: [handler], pollMs: 5, leaseMs: 150 });
    worker.start();
    try {
      await waitFor('the job to run', async () => running, 5_000);
      // Another process's claim: its token and its next run on the row (as if this one had failed to renew in time).
      await database.pool.query(`UPDATE job_schedule SET lease_owner = 'other', run_at = now() + interval '1 hour' WHERE name = 'test.lease'`);
      await waitFor('the lost lease to be noticed', async () => lines.some((line) => line.msg === 'job lease lost while running: another process may run it too'), 5_000);
      release.open();
      await pause(100);
      const row = (await database.pool.query<{ owner: string; later: boolean }>(`SELECT lease_owner AS owner, run_at > now() + interval '30 minutes' AS later FROM job_schedule WHERE name = 'test.lease'`)).rows[0];
      expect(row).toEqual({ owner: 'other', later: true });
      expect(lines.filter((line) => line.msg === 'job lease lost while running: another process may run it too')).toHaveLength(1);
    } finally {
      release.open();
      await worker.stop();
    }
  });

  it('backs a failing job off exponentially up to the cap, logs one ERROR per streak, and returns to its schedule after a success', async () => {
    const lines: Line[] = [];
    const log = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const text of chunk.toString().split('\n')) if (text.trim()) lines.push(JSON.parse(text) as Line);
          done();
        },
      }),
    );
    const started: number[] = [];
    const failuresSeen: number[] = [];
    const handler: JobHandler = {
      name: 'test.flaky',
      everyMs: 0,
      run: async () => {
        started.push(Date.now());
        // Fails four times the same way, then works.
        if (started.length <= 4) throw new Error('the node did not answer');
      },
    };
    const worker = createWorker({ pool: database.pool, log, handlers: [handler], pollMs: 10, backoff: { baseMs: 100, maxMs: 300 } });
    const failures = async () => (await database.pool.query<{ failures: number }>(`SELECT failures FROM job_schedule WHERE name = 'test.flaky'`)).rows[0]?.failures;
    worker.start();
    try {
      for (let n = 1; n <= 4; n++) failuresSeen.push(await waitFor(`failure ${n}`, async () => ((await failures()) === n ? n : undefined), 5_000));
      await waitFor('a success after the failures', async () => started.length >= 6, 5_000);
    } finally {
      await worker.stop();
    }
    expect(failuresSeen).toEqual([1, 2, 3, 4]);
    expect(await failures()).toBe(0);
    const gaps = started.slice(1).map((at, i) => at - (started[i] ?? at));
    // After failures 1, 2, 3, 4: 100, 200, 300 (the cap), 300 ms; after the success, the schedule (0 ms) again.
    for (const [i, wanted] of [100, 200, 300, 300].entries()) {
      expect(gaps[i]).toBeGreaterThanOrEqual(wanted - 5);
      expect(gaps[i]).toBeLessThan(wanted + 150);
    }
    expect(gaps[4]).toBeLessThan(100);
    const own = lines.filter((line) => line.job === 'test.flaky');
    expect(own.filter((line) => line.level >= 50).map((line) => [line.msg, line.failures, line.retryInMs])).toEqual([['job failed', 1, 100]]);
    expect(own.filter((line) => line.level === 40).map((line) => [line.msg, line.failures, line.retryInMs])).toEqual([
      ['job still failing', 2, 200],
      ['job still failing', 3, 300],
      ['job still failing', 4, 300],
    ]);
    expect(own.filter((line) => line.level === 30).map((line) => [line.msg, line.failures])).toEqual([['job recovered', 4]]);
  });

  it('stops gracefully: the job in hand finishes, no other starts', async () => {
    const hung = gate();
    let started = false;
    let finished = false;
    let others = 0;
    const handlers: JobHandler[] = [
      {
        name: 'test.long',
        everyMs: 0,
        run: async () => {
          started = true;
          await hung.opened;
          finished = true;
        },
      },
      { name: 'test.other', everyMs: 0, run: async () => void others++ },
    ];
    const worker = createWorker({ pool: database.pool, log: quietLog, handlers, pollMs: 20, concurrency: 1 });
    worker.start();
    await waitFor('test.long to start', async () => started, 5_000);
    await pause(100);
    const othersBefore = others;
    let stopped = false;
    const stopping = worker.stop().then(() => (stopped = true));
    await pause(100);
    expect(stopped).toBe(false);
    hung.open();
    await stopping;
    expect(finished).toBe(true);
    // test.other waited for the one slot behind test.long and did not start after the stop.
    await pause(100);
    expect(others).toBe(othersBefore);
  });
});
