import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loadConfig } from '../../src/server/config.ts';
import { startServer, type RunningServer } from '../../src/server/main.ts';
import { loggerOptions } from '../../src/server/log.ts';
import { TEST_MNEMONIC, TEST_SECRETS_KEY, TEST_SIGNER_TOKEN } from './custody.ts';
import { freePort, startProductionSigner } from './server.ts';

/**
 * What a test's server runs on whatever else it sets: its own database, the test seed and secrets key, prices that do
 * not walk, and one SIGNER_TOKEN. Without it each process makes its own in its DATA_DIR, and two processes on one
 * database record the wallet's public keys under two MACs: whichever reads them after the other wrote refuses to start.
 */
export function testServerEnv(databaseUrl: string): Record<string, string> {
  return { DATABASE_URL: databaseUrl, WALLET_SEED: TEST_MNEMONIC, SECRETS_KEY: TEST_SECRETS_KEY, SIGNER_TOKEN: TEST_SIGNER_TOKEN, RATES_WALK_MS: '0' };
}

export type LogLine = { level: number; msg: string; err?: { message?: string; code?: string } };
export type InProcessServer = RunningServer & { url: string; logs: LogLine[]; /** Every log line as written, as a spawned server's stdout. */ output: () => string };

/**
 * The whole product composed as `npm start` composes it (main.ts' startServer: /oidc, /api, /sandbox, pages), in
 * this process, with its log lines kept for assertions. Its `routes` are the gateway's registered endpoints. The log
 * is the server's own (its fields and redaction) at `env.LOG_LEVEL`, else warn, as launchServer runs a child.
 */
export async function startInProcess(env: Record<string, string>): Promise<InProcessServer> {
  const port = await freePort();
  const config = loadConfig({ HOST: '127.0.0.1', PORT: String(port), DATA_DIR: await mkdtemp(join(tmpdir(), 'wallet-in-process-')), ANALYTICS_WRITE_KEY: 'off', ...env }, '0.0.0-test');
  const logs: LogLine[] = [];
  let output = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString();
      output += text;
      for (const line of text.split('\n')) if (line.trim()) logs.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const running = await startServer(config, pino(loggerOptions(env.LOG_LEVEL ?? 'warn'), sink));
  return { ...running, url: `http://127.0.0.1:${running.port}`, logs, output: () => output };
}

/** Production in this process as it runs: the signer apart with `env.WALLET_SEED`, the server without it; `close` stops both. */
export async function startProductionInProcess(env: Record<string, string>): Promise<InProcessServer> {
  const signer = await startProductionSigner(env);
  try {
    const server = await startInProcess(signer.env);
    return { ...server, close: async () => { await server.close(); await signer.stop(); } };
  } catch (error) {
    await signer.stop();
    throw error;
  }
}
