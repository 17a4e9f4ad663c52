import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { request, type Agent } from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export type LaunchedServer = { url: string; port: number; process: ChildProcess; output: () => string; stop: () => Promise<number | null> };

/** CPU milliseconds a process has used (all its threads, user and system): neighbours on a shared machine do not move this. */
export function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU milliseconds of every PostgreSQL process on the machine (the postmaster and each connection's backend): a
 * bench's queries run there, on the same cores as the server. A backend that ended meanwhile takes its share with it.
 */
export function postgresCpuMs(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') total += processCpuMs(Number(entry));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Starts the real server (`node src/server/main.ts`, as `npm start` does) and waits until /api/health answers.
 * `logFile` sends its stdout to a file instead of this process (a bench's access log would otherwise cost the
 * measuring process as much as the server). `ownGroup` runs it in a process group of its own, as a terminal does, so a
 * test can send a Ctrl-C to the whole group.
 */
export async function launchServer(env: Record<string, string>, options: { waitMs?: number; logFile?: string; ownGroup?: boolean } = {}): Promise<LaunchedServer> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  let output = '';
  const logFd = options.logFile === undefined ? undefined : openSync(options.logFile, 'a');
  const child = spawn(process.execPath, ['src/server/main.ts'], {
    cwd: ROOT,
    // Analytics is off in tests unless a test turns it on (ANALYTICS_WRITE_KEY unset or a key of its own).
    env: { ...process.env, LOG_LEVEL: 'warn', ANALYTICS_WRITE_KEY: 'off', ...env, PORT: String(port) },
    stdio: ['ignore', logFd ?? 'pipe', 'pipe'],
    detached: options.ownGroup ?? false,
  });
  if (logFd !== undefined) closeSync(logFd);
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${output}`);
    const ok = await fetch(`${url}/api/health`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server did not become healthy:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    port,
    process: child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

export type LaunchedWorker = {
  process: ChildProcess;
  output: () => string;
  /** Resolves once it logged 'worker started' (an info line: give it LOG_LEVEL info), rejects if it exits first. */
  started: (timeoutMs?: number) => Promise<void>;
  /** Ends it (SIGTERM, or SIGKILL for a death at any line) and resolves with its exit code. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
};

/**
 * `npm run worker` (src/server/jobs/main.ts) beside a server started with WORKERS=off and the same `env` (its
 * DATA_DIR too, where the server's embedded signer listens), as production runs the two. `alone`: with `env` and PATH
 * only, none of the test process's own environment (a test that reads the worker's /proc/<pid>/environ).
 */
export function launchWorker(env: Record<string, string>, options: { alone?: boolean } = {}): LaunchedWorker {
  let output = '';
  const inherited = options.alone ? { PATH: process.env.PATH ?? '' } : process.env;
  const child = spawn(process.execPath, ['src/server/jobs/main.ts'], { cwd: ROOT, env: { ...inherited, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    process: child,
    output: () => output,
    started: async (timeoutMs = 60_000) => {
      await waitFor(
        'the worker to start',
        async () => {
          if (output.includes('worker started')) return true;
          if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the worker exited before it started:\n${output}`);
          return false;
        },
        timeoutMs,
      );
    },
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs the server expecting it to refuse to start; resolves with its exit code and everything it printed. */
export function runUntilExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['src/server/main.ts'], { cwd: ROOT, env: { ...process.env, ANALYTICS_WRITE_KEY: 'off', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Production's signer as it runs (README "Processes and the seed"): `npm run signer` apart, the only process given
 * the seed (`env.WALLET_SEED`), on a DATA_DIR of its own. `env` is what the gateway and worker beside it run on: the
 * same socket and token, no seed. `stop` stops it and removes its directory.
 */
export async function startProductionSigner(base: Record<string, string>): Promise<{ env: Record<string, string>; stop: () => Promise<void> }> {
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { existsSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = await mkdtemp(join(tmpdir(), 'prod-signer-'));
  const shared = { ...base, APP_ENV: 'production', SIGNER: 'external', SIGNER_TOKEN: 'p'.repeat(64), SIGNER_SOCKET: join(dir, 's.sock'), DATA_DIR: dir };
  let output = '';
  const signer = spawn(process.execPath, ['src/server/signer/main.ts'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...shared }, stdio: ['ignore', 'pipe', 'pipe'] });
  signer.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  signer.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => signer.once('exit', resolve));
  const stop = async () => {
    if (signer.exitCode === null) signer.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  while (!existsSync(shared.SIGNER_SOCKET)) {
    if (signer.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the signer did not start: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { env: { ...shared, WALLET_SEED: '' }, stop };
}

/** Production as it runs: the signer apart with the seed (startProductionSigner), then the server without it. `stop` stops both. */
export async function launchProductionServer(env: Record<string, string>, options: { waitMs?: number } = {}): Promise<LaunchedServer> {
  const signer = await startProductionSigner(env);
  try {
    const server = await launchServer(signer.env, options);
    return { ...server, stop: async () => { const code = await server.stop(); await signer.stop(); return code; } };
  } catch (error) {
    await signer.stop();
    throw error;
  }
}

/**
 * A POST /api/rate (it reads the prices from the database) whose body is still coming for 500 ms: what a stop must
 * let finish. Returns once the request is under way, with its status to come.
 */
export async function rateRequestInFlight(url: string, agent?: Agent): Promise<{ answered: Promise<number> }> {
  const answered = new Promise<number>((resolve, reject) => {
    const req = request(`${url}/api/rate`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.write('{"from":"BTC",');
    setTimeout(() => req.end('"to":"USD"}'), 500);
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
  return { answered };
}
