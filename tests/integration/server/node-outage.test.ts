import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createServer, type Server, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { parseEther, type Address } from 'viem';
import { hex } from '@scure/base';
import { p2wpkh } from '@scure/btc-signer';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';
import { startAnvil, type Anvil } from '../../support/anvil.ts';
import { waitFor } from '../../support/custody.ts';
import type { AssetItem } from '../../../src/server/domain/assets.ts';

/**
 * Issue 29 item 2: a Litecoin "node" that accepts connections and never answers (a TCP listener) beside Ethereum on
 * anvil, the worker on. Every gateway request that needs the Litecoin node answers 503 NETWORK_UNAVAILABLE naming
 * LITECOIN within the request's budget (CHAIN_REQUEST_BUDGET_MS: 3.5 s by default, 1 s here, shorter than the calls'
 * own timeout), never a 500 after 30 s; the
 * Ethereum deposit is credited at its normal pace meanwhile, because each network's jobs run in their own lane; the
 * Litecoin jobs fail, back off (5 s, then 10 s) and log one ERROR, not one per run.
 */
const PASSWORD = 'a long enough passphrase 42';
/** The background calls' timeout here (CHAIN_CALL_TIMEOUT_MS), so the Litecoin jobs fail within the test's time. */
const CALL_TIMEOUT_MS = 2_500;
/** A request's budget for all its chain calls (CHAIN_REQUEST_BUDGET_MS): shorter than one call's own timeout. */
const BUDGET_MS = 1_000;

type LogRecord = { level: number; msg: string; job?: string; failures?: number };
type ScheduleRow = { failures: number; last_error: string | null; wait_ms: number };

describe('a Litecoin node that never answers hurts only Litecoin', () => {
  let silent: Server;
  const sockets = new Set<Socket>();
  let anvil: Anvil;
  let database: TestDatabase;
  let pool: pg.Pool;
  let server: InProcessServer;
  let user: SignedInUser;
  let started: number;
  const call = gatewayClient<Record<string, unknown>>(() => server.url);
  const at = (path: string) => `/api/${user.accountId}${path}`;
  const depositAddress = async (currency: string) => (await call<AssetItem[]>(user, 'GET', at('/asset'))).body.find((a) => a.currency === currency)?.depositAddress ?? '';
  const timed = async <T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> => {
    const from = Date.now();
    const value = await work();
    return { value, ms: Date.now() - from };
  };
  const schedule = async (job: string) => (await pool.query<ScheduleRow>(`SELECT failures, last_error, extract(epoch FROM run_at - last_finished_at)::float8 * 1000 AS wait_ms FROM job_schedule WHERE name = $1`, [job])).rows[0];

  beforeAll(async () => {
    silent = createServer((socket) => {
      // Accepted, read, never answered.
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    anvil = await startAnvil();
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    // The database is dropped with FORCE at the end: a connection it ends is no failure of the test.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    started = Date.now();
    server = await startInProcess({
      ...testServerEnv(database.url),
      WORKER_POLL_MS: '100',
      PUBLIC_RATE_LIMIT: '0',
      CHAIN_ENV: 'regtest',
      LITECOIN_RPC_URL: `http://user:password@127.0.0.1:${port}`,
      ETHEREUM_RPC_URL: anvil.url,
      CONFIRMATIONS: 'ETHEREUM:2',
      CHAIN_CALL_TIMEOUT_MS: String(CALL_TIMEOUT_MS),
      CHAIN_REQUEST_BUDGET_MS: String(BUDGET_MS),
    });
    user = await signUpAndSignIn(server.url, { email: `outage-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
    for (const currency of ['ETH', 'LTC']) expect((await call(user, 'POST', at('/account/currency'), { currency })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await pool?.end();
    await database?.drop();
    anvil?.stop();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
  });

  it('answers 503 NETWORK_UNAVAILABLE naming LITECOIN within the budget for an address check, a fee and a withdrawal', async () => {
    const ltc = await depositAddress('LTC');
    expect(ltc).toMatch(/^rltc1/);
    // Somebody else's address on Litecoin's regtest (the secp256k1 generator's key).
    const outside = p2wpkh(hex.decode('0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798'), { bech32: 'rltc', pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef }).address ?? '';
    for (const [path, body] of [
      ['/withdrawal/check-address', { currency: 'LTC', address: outside }],
      ['/withdrawal/preliminary/fee', { currency: 'LTC', amount: '0.1', depositAddress: outside }],
      ['/withdrawal', { currency: 'LTC', amount: '0.1', depositAddress: outside, idempotencyKey: randomUUID() }],
    ] as const) {
      const { value, ms } = await timed(() => call(user, 'POST', at(path), body));
      expect({ path, status: value.status, body: value.body }).toMatchObject({ path, status: 503, body: { exceptionCode: 'NETWORK_UNAVAILABLE', network: 'LITECOIN' } });
      expect(ms).toBeLessThan(BUDGET_MS + 500);
    }
    // Another network's requests are untouched.
    const eth = await timed(() => call(user, 'POST', at('/withdrawal/check-address'), { currency: 'ETH', address: '0x00000000000000000000000000000000000000a1' }));
    expect(eth.value).toMatchObject({ status: 200, body: { checkResult: 'VALID' } });
    expect(eth.ms).toBeLessThan(1_000);
  });

  it("credits an Ethereum deposit at its normal pace while Litecoin's jobs hang and fail", async () => {
    const address = (await depositAddress('ETH')) as Address;
    await anvil.send({ to: address, value: parseEther('1.5') });
    const sent = Date.now();
    await anvil.mine(2);
    const balance = async () => (await call<AssetItem[]>(user, 'GET', at('/asset'))).body.find((a) => a.currency === 'ETH')?.totalAvailable;
    await waitFor('the ETH deposit credited', async () => Number(await balance()) === 1.5, 10_000);
    // Well under one Litecoin call's timeout: no Ethereum job waited for the Litecoin node.
    expect(Date.now() - sent).toBeLessThan(CALL_TIMEOUT_MS + 1_000);
    // Meanwhile the Litecoin deposit job hangs and fails, on its own.
    const failed = await waitFor('chain.deposits:LITECOIN to fail', async () => (await schedule('chain.deposits:LITECOIN'))?.last_error ?? undefined, 5_000);
    expect(failed).toMatch(/^LITECOIN: the node at http:\/\/127\.0\.0\.1:\d+ is unreachable/);
    expect((await schedule('chain.deposits:ETHEREUM'))).toMatchObject({ failures: 0, last_error: null });
  });

  it('backs the failing Litecoin job off (5 s, then 10 s) with one ERROR line, and nothing else fails', async () => {
    const second = await waitFor('the second failure of chain.deposits:LITECOIN', async () => {
      const row = await schedule('chain.deposits:LITECOIN');
      return row !== undefined && row.failures >= 2 && row;
    }, 20_000);
    expect(second.failures).toBe(2);
    expect(second.wait_ms).toBeGreaterThan(9_500);
    expect(second.wait_ms).toBeLessThan(10_500);
    // Two failures took a 5 s pause between them, not one run per poll (100 ms).
    expect(Date.now() - started).toBeGreaterThan(5_000 + 2 * CALL_TIMEOUT_MS);
    const lines = (server.logs as unknown as LogRecord[]).filter((line) => line.job === 'chain.deposits:LITECOIN');
    expect(lines.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual(['job failed']);
    expect(lines.filter((line) => line.level === 40).map((line) => [line.msg, line.failures])).toContainEqual(['job still failing', 2]);
    // No job of another network failed.
    const failing = await pool.query<{ name: string }>(`SELECT name FROM job_schedule WHERE failures > 0 AND name NOT LIKE '%:LITECOIN' ORDER BY name`);
    expect(failing.rows).toEqual([]);
  }, 30_000);
});
