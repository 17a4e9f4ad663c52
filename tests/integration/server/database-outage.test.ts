import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { launchServer, launchWorker, type LaunchedServer, type LaunchedWorker } from '../../support/server.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { startDisposablePostgres, type DisposablePostgres } from '../../support/disposable-postgres.ts';
import { TEST_MNEMONIC, waitFor } from '../../support/custody.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PASSWORD = 'correct horse battery staple';

type Outcome = { status: number; body: unknown; ms: number };

/** Runs a command of package.json's like `npm run` does, with this Node; resolves with its exit code and output. */
function run(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('the database goes away under load and comes back', () => {
  let postgres: DisposablePostgres;
  let server: LaunchedServer;
  let worker: LaunchedWorker;
  let alice: SignedInUser;

  beforeAll(async () => {
    postgres = await startDisposablePostgres();
    // The traffic signs up on every round from one address: the sign-up limit per address (kept in the database,
    // through the outage) must not be what refuses it once the database is back.
    const env = { DATABASE_URL: postgres.url, WALLET_SEED: TEST_MNEMONIC, WORKER_POLL_MS: '100', RATES_WALK_MS: '0', DEVNET_BLOCK_MS: '200', CONFIRMATIONS: 'BITCOIN:1', AUTH_RATE_LIMIT: '1000000' };
    server = await launchServer(env);
    // The worker alone, as `npm run worker` runs it beside a gateway: it must live through the outage too.
    worker = launchWorker({ ...env, LOG_LEVEL: 'info' });
    await worker.started();
    alice = await signUpAndSignIn(server.url, { email: `outage-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: postgres.url });
  }, 120_000);

  afterAll(async () => {
    await worker?.stop();
    await server?.stop();
    await postgres?.stop();
  });

  const call = async (method: string, path: string, body?: unknown, token = alice.accessToken): Promise<Outcome> => {
    const started = Date.now();
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
      text = await response.text();
    } catch (error) {
      // No answer at all (a dead process, a dropped connection, a hang): status 0 fails every assertion below.
      return { status: 0, body: String(error), ms: Date.now() - started };
    }
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text for the assertion's message
    }
    return { status: response.status, body: parsed, ms: Date.now() - started };
  };
  // Requests that each need the database: a profile read, the history, a sign-up, an address, the balances.
  const traffic = () => [
    call('GET', '/api/user'),
    call('POST', `/api/${alice.accountId}/asset/transactions`, { currency: 'BTC', sort: 'DESC', properties: ['createdDate'], pageSize: 10, pageNumber: 1 }),
    call('POST', '/api/user', { email: `outage-${Math.random().toString(36).slice(2)}@example.com`, password: PASSWORD }, ''),
    call('POST', `/api/${alice.accountId}/account/currency`, { currency: 'BTC' }),
    call('GET', `/api/${alice.accountId}/asset`),
  ];
  const alive = () => server.process.exitCode === null && server.process.signalCode === null;

  it('answers 503 in the error shape while it is gone, and serves again by itself once it is back', async () => {
    for (const outcome of await Promise.all(traffic())) expect(outcome.status, JSON.stringify(outcome)).toBeLessThan(300);

    // Load while it dies: eight clients keep calling through the kill.
    let loading = true;
    const during: Outcome[] = [];
    const clients = Array.from({ length: 8 }, async () => {
      while (loading) during.push(...(await Promise.all(traffic())));
    });
    await new Promise((r) => setTimeout(r, 300));
    await postgres.kill();
    await new Promise((r) => setTimeout(r, 1500));
    loading = false;
    await Promise.all(clients);

    // Gone: every answer that needed it is a 503 in the error shape, quickly; none is a 500; the process lives.
    const down = await Promise.all([...traffic(), ...traffic()]);
    for (const outcome of down.filter((o) => o.status >= 500 || o.status === 0)) {
      expect(outcome.status, JSON.stringify(outcome)).toBe(503);
      expect(outcome.body, JSON.stringify(outcome)).toMatchObject({ exceptionCode: 'SERVICE_UNAVAILABLE', message: expect.any(String) });
    }
    expect(down.filter((o) => o.status === 503).length).toBeGreaterThanOrEqual(6);
    for (const outcome of down) expect(outcome.ms).toBeLessThan(12_000);
    for (const outcome of during.filter((o) => o.status >= 500 || o.status === 0)) expect(outcome, JSON.stringify(outcome)).toMatchObject({ status: 503, body: { exceptionCode: 'SERVICE_UNAVAILABLE' } });
    const health = await fetch(`${server.url}/api/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ database: 'down' });
    // The identity provider answers 503 as the gateway does, and does not take the process down.
    const token = await fetch(`${server.url}/oidc/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=refresh_token&client_id=wallet-web&refresh_token=${alice.refreshToken}` });
    expect(token.status).toBe(503);
    expect(token.headers.get('retry-after')).toBe('5');
    expect(alive(), server.output()).toBe(true);
    expect(worker.process.exitCode, worker.output()).toBeNull();

    await postgres.restart();

    // Back: the same calls succeed again without a restart of the server.
    await waitFor('the gateway to serve again', async () => (await Promise.all(traffic())).every((o) => o.status < 300), 30_000);
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
    expect(alive(), server.output()).toBe(true);
    expect(worker.process.exitCode, worker.output()).toBeNull();
    expect(server.output()).not.toMatch(/Unhandled 'error' event|uncaughtException|unhandledRejection/);

    // Money moves again: a deposit is credited by the worker and the ledger audits clean.
    const assets = (await call('GET', `/api/${alice.accountId}/asset`)).body as Array<{ currency: string; depositAddress?: string; totalAvailable?: string }>;
    const address = assets.find((a) => a.currency === 'BTC')?.depositAddress ?? '';
    const sent = await fetch(`${server.url}/sandbox/devnet/deposit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ currency: 'BTC', address, amount: '0.01' }) });
    expect(sent.status).toBe(201);
    await waitFor('the deposit to be credited', async () => {
      const now = (await call('GET', `/api/${alice.accountId}/asset`)).body as Array<{ currency: string; totalAvailable?: string }>;
      return now.find((a) => a.currency === 'BTC')?.totalAvailable === '0.01';
    }, 30_000);
    const audit = await run('src/server/cli/ledger-audit.ts', { DATABASE_URL: postgres.url });
    expect(audit.code, audit.output).toBe(0);
    expect(audit.output).toMatch(/0 failed/);
    expect(alive(), server.output()).toBe(true);
    expect(worker.process.exitCode, worker.output()).toBeNull();
  }, 120_000);
});
