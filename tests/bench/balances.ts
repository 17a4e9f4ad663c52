import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, startTestPostgres } from '../support/database.ts';
import { freePort, launchServer } from '../support/server.ts';
import { signUpAndSignIn } from '../support/auth.ts';
import { TEST_MNEMONIC, waitFor } from '../support/custody.ts';

/**
 * GET /api/{account}/asset (bearer token, owner check, balances and addresses from PostgreSQL) at 50
 * connections against the real server, beside a bare Hono hello-world server measured in the same run on the
 * same machine. Targets: req/s ≥ 0.5 × hello-world, p99 ≤ 20 ms.
 */
const CONNECTIONS = 50;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// The baseline: Hono on @hono/node-server answering a constant, in a process of its own like the real server.
const HELLO = `
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
const app = new Hono();
app.get('/', (c) => c.text('Hello, world'));
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' }, () => console.log('ready'));
`;

type Result = { rps: number; p99: number; p50: number; errors: number; non2xx: number };

async function load(url: string, headers: Record<string, string>, seconds = SECONDS): Promise<Result> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers });
  return { rps: result.requests.average, p99: result.latency.p99, p50: result.latency.p50, errors: result.errors + result.timeouts, non2xx: result.non2xx };
}

function startHello(port: number): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', HELLO], { cwd: ROOT, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
    child.once('error', reject);
    child.stdout.once('data', () => resolve(() => child.kill('SIGTERM')));
  });
}

const postgres = await startTestPostgres();
const database = await createTestDatabase(postgres.adminUrl, 'wallet_bench');
const port = await freePort();
const server = await launchServer({ DATABASE_URL: database.url, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, WALLET_SEED: TEST_MNEMONIC, DEVNET_BLOCK_MS: '200', DEVNET_CONFIRMATIONS: 'BITCOIN:1,ETHEREUM:1,TRON:1' });
const helloPort = await freePort();
const stopHello = await startHello(helloPort);
let failed = false;
try {
  const user = await signUpAndSignIn(server.url, { email: `bench-${Date.now()}@example.com`, password: 'bench password that is long enough', databaseUrl: database.url });
  const headers = { authorization: `Bearer ${user.accessToken}` };
  const assetsUrl = `${server.url}/api/${user.accountId}/asset`;
  await fetch(`${server.url}/api/${user.accountId}/account/currency/list`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ currencies: ['BTC', 'ETH', 'USDT_TRX', 'TON'] }),
  });
  const assets = (await (await fetch(assetsUrl, { headers })).json()) as Array<{ currency: string; depositAddress: string }>;
  for (const [currency, amount] of [['BTC', '0.5'], ['ETH', '2'], ['USDT_TRX', '150']] as const) {
    const address = assets.find((a) => a.currency === currency)?.depositAddress ?? '';
    await fetch(`${server.url}/sandbox/devnet/deposit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ currency, address, amount }) });
  }
  await waitFor('the deposits to be credited', async () => {
    const list = (await (await fetch(assetsUrl, { headers })).json()) as Array<{ totalAvailable: string }>;
    return list.filter((a) => a.totalAvailable !== '0').length === 3;
  }, 30_000);
  console.log(`sample response: ${await (await fetch(assetsUrl, { headers })).text()}`);

  // Warm both up (JIT, connection pools, caches), then measure one after the other.
  await load(`http://127.0.0.1:${helloPort}/`, {}, 2);
  await load(assetsUrl, headers, 2);
  const hello = await load(`http://127.0.0.1:${helloPort}/`, {});
  const balances = await load(assetsUrl, headers);
  const ratio = balances.rps / hello.rps;
  const row = (name: string, r: Result) =>
    `${name.padEnd(28)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${String(r.p50).padStart(3)} ms   p99 ${String(r.p99).padStart(3)} ms   errors ${r.errors + r.non2xx}`;
  console.log(`\n${CONNECTIONS} connections, ${SECONDS} s each`);
  console.log(row('hono hello-world', hello));
  console.log(row('GET /api/{account}/asset', balances));
  console.log(`ratio ${ratio.toFixed(2)} (target ≥ 0.5), p99 ${balances.p99} ms (target ≤ 20 ms)`);
  if (balances.errors + balances.non2xx > 0) {
    console.error('bench:balances: some requests failed');
    failed = true;
  }
  if (ratio < 0.5 || balances.p99 > 20) failed = true;
  console.log(failed ? 'bench:balances: FAIL' : 'bench:balances: PASS');
} finally {
  stopHello();
  await server.stop();
  await database.drop();
  await postgres.stop();
}
process.exit(failed ? 1 : 0);
