import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../../src/server/db/database.ts';
import { runningPort } from '../../../src/server/db/embedded.ts';
import { loggerOptions } from '../../../src/server/log.ts';
import { killLeftPostgres } from '../../support/database.ts';

describe('closing the database', () => {
  it('ends every pooled connection before it stops the embedded PostgreSQL it started', async () => {
    // Under a directory PostgreSQL's own user can reach (as root it runs as 'postgres').
    const dir = await mkdtemp(join(tmpdir(), 'wallet-close-'));
    await chmod(dir, 0o755);
    const lines: string[] = [];
    const log = pino(loggerOptions('info'), { write: (line: string) => void lines.push(line) });
    try {
      // Three rounds (the stop races PostgreSQL's own): forty connections open, each idle in the pool when the close
      // comes, as at the end of a busy server's stop.
      for (let round = 0; round < 3; round++) {
        const database = await openDatabase({ databaseUrl: undefined, dataDir: join(dir, 'data'), poolSize: 40 }, log);
        await Promise.all(Array.from({ length: 40 }, () => database.pool.query('SELECT pg_sleep(0.05)')));
        expect(database.pool.totalCount).toBe(40);
        await database.close();
      }
      expect(lines.filter((line) => /connection failed|terminating connection/.test(line)), 'no connection met PostgreSQL stopping under it').toEqual([]);
      expect(await runningPort(join(dir, 'data', 'pg')), 'PostgreSQL stopped').toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it.each([
    ['a command calls process.exit', false, 'process.exit(3)'],
    ['the server crashes', true, "throw new Error('crash')"],
  ] as const)('takes the embedded PostgreSQL it started with it when %s', async (_, ownGroup, end) => {
    const dir = await mkdtemp(join(tmpdir(), 'wallet-exit-'));
    await chmod(dir, 0o755);
    const embedded = fileURLToPath(new URL('../../../src/server/db/embedded.ts', import.meta.url));
    const log = fileURLToPath(new URL('../../../src/server/log.ts', import.meta.url));
    const script = `const { startEmbeddedPostgres } = await import(${JSON.stringify(embedded)});
      const { createLogger } = await import(${JSON.stringify(log)});
      await startEmbeddedPostgres(${JSON.stringify(join(dir, 'data'))}, createLogger('warn'), { ownGroup: ${ownGroup} });
      console.log('started');
      ${end};`;
    try {
      const out = await new Promise<string>((resolve) => execFile(process.execPath, ['--input-type=module', '-e', script], (_error, stdout) => resolve(stdout)));
      expect(out).toContain('started');
      let left = await runningPort(join(dir, 'data', 'pg'));
      for (let waited = 0; left !== undefined && waited < 5_000; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        left = await runningPort(join(dir, 'data', 'pg'));
      }
      expect(left, 'PostgreSQL stopped with its process').toBeUndefined();
    } finally {
      await killLeftPostgres(join(dir, 'data', 'pg'));
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
