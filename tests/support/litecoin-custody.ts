import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, inject } from 'vitest';
import { loadConfig } from '../../src/server/config.ts';
import { openCustody, type Custody } from '../../src/server/custody.ts';
import { openDatabase, type Database } from '../../src/server/db/database.ts';
import type { AssetItem } from '../../src/server/domain/assets.ts';
import { custodyBalances } from '../../src/server/domain/custody-balances.ts';
import type { TransactionItem } from '../../src/server/domain/history.ts';
import type { WithdrawalView } from '../../src/server/domain/withdrawals/view.ts';
import type { Logger } from '../../src/server/log.ts';
import { signUpAndSignIn, type SignedInUser } from './auth.ts';
import { auditFailures, quietLog, waitFor } from './custody.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { gatewayClient } from './http.ts';
import { startInProcess, testServerEnv, type InProcessServer } from './in-process.ts';
import { startLitecoind, type Litecoind } from './litecoind.ts';

/**
 * The set-up of the tests that drive the custody on Litecoin Core -regtest end to end: a node (`startLitecoind`), a
 * database of their own, the whole server in this process with the worker off, and beside it the custody core on the
 * same configuration, whose jobs a test runs itself (`work`), with the helpers those tests share.
 *
 * Made at describe level (its helpers may be taken apart there); `start` in `beforeAll` (it returns the node, the
 * database, the custody, the server and its environment), `close` in `afterAll`.
 */
export type LitecoinCustodyOptions = {
  /** Variables set over (or beside) the regtest environment below: RBF_AFTER_BLOCKS, limits, … */
  env?: Record<string, string>;
  /** litecoind's arguments after the support's own (a later one wins: `-mempoolreplacement=0`). */
  nodeArgs?: string[];
  /** The logger of the test's custody core and its database (silent unless given). */
  log?: Logger;
  /** Sign-up addresses are `<emailPrefix>-<name>-<time>@example.com`. */
  emailPrefix?: string;
  /** The job names (by prefix) one round of `work` runs: the chain's jobs and the custody's movements unless given. */
  jobs?: readonly string[];
};

/** The regtest environment every one of these tests runs: worker off, fixed rates, no rate limit, two confirmations. */
function regtestEnv(databaseUrl: string, nodeUrl: string): Record<string, string> {
  return {
    ...testServerEnv(databaseUrl),
    WORKERS: 'off',
    PUBLIC_RATE_LIMIT: '0',
    CHAIN_ENV: 'regtest',
    LITECOIN_RPC_URL: nodeUrl,
    CONFIRMATIONS: 'LITECOIN:2',
    FEE_RATE_FALLBACK: 'LITECOIN:5',
    WITHDRAWAL_FEES: JSON.stringify({ LTC: '0.001' }),
  };
}

const PASSWORD = 'a long enough passphrase 42';

/** What `start` returns; `env` is the server's environment (a child process of a test runs with it). */
type Started = { node: Litecoind; testDatabase: TestDatabase; server: InProcessServer; database: Database; custody: Custody; env: Record<string, string> };

export function litecoinCustody(options: LitecoinCustodyOptions = {}) {
  let started: Started | undefined;
  /** What `close` undoes, in the order it was done (a failed `start` undoes its part). */
  const opened: Array<() => Promise<void>> = [];
  const get = (): Started => {
    if (!started) throw new Error('the Litecoin custody is not started (call start() in beforeAll)');
    return started;
  };
  const log = options.log ?? quietLog;
  const jobs = options.jobs ?? ['chain.', 'custody.movements'];

  const call = gatewayClient(() => get().server.url);
  const at = (user: SignedInUser, path: string) => `/api/${user.accountId}${path}`;
  /** One round of the worker's chain jobs (of the custody unless another is given), as jobs/main.ts runs them (a failing job fails the test). */
  const work = async (of: Custody = get().custody) => {
    for (const job of of.jobs) if (jobs.some((prefix) => job.name.startsWith(prefix))) await job.run();
  };
  const mine = async (blocks: number) => {
    await get().node.mine(blocks);
    await work();
  };
  const signUp = (name: string) =>
    signUpAndSignIn(get().server.url, { email: `${options.emailPrefix ?? 'ltc'}-${name}-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: get().testDatabase.url });
  const ltc = async (user: SignedInUser) => (await call<AssetItem[]>(user, 'GET', at(user, '/asset'))).body.find((a) => a.currency === 'LTC');
  const balance = async (user: SignedInUser) => {
    const found = await ltc(user);
    return { available: found?.totalAvailable ?? '0', onHold: found?.onHold ?? '0' };
  };
  /** The user's LTC deposit address (the asset added first). */
  const addressOf = async (user: SignedInUser) => {
    await call(user, 'POST', at(user, '/account/currency'), { currency: 'LTC' });
    return (await ltc(user))?.depositAddress ?? '';
  };
  const history = async (user: SignedInUser) =>
    (await call<{ result: TransactionItem[] }>(user, 'POST', at(user, '/asset/transactions'), { currency: 'LTC', sort: 'DESC', properties: ['createdDate'], pageSize: 100, pageNumber: 1 })).body.result;
  const withdraw = (user: SignedInUser, amount: string, to: string) => call<WithdrawalView>(user, 'POST', at(user, '/withdrawal'), { currency: 'LTC', amount, depositAddress: to, idempotencyKey: randomUUID() });
  /** A user holding `amount` LTC, credited from the node's wallet. */
  const funded = async (name: string, amount: string) => {
    const user = await signUp(name);
    const address = await addressOf(user);
    await get().node.send(address, amount);
    await work();
    await mine(2);
    expect(await balance(user)).toEqual({ available: amount, onHold: '0' });
    return user;
  };
  const state = async (id: string) => (await get().database.pool.query<{ state: string }>('SELECT state FROM withdrawals WHERE id = $1', [id])).rows[0]?.state;
  /** Mines a block at a time until the withdrawal is COMPLETED. */
  const completed = async (id: string) => {
    await waitFor(`withdrawal ${id} completed`, async () => {
      await mine(1);
      return (await state(id)) === 'COMPLETED';
    }, 30_000);
  };
  /** `custody balances`' LTC row on LITECOIN. */
  const matching = async () => (await custodyBalances(get().database.pool, get().custody.chain)).find((r) => r.network === 'LITECOIN' && r.currency === 'LTC');

  const start = async () => {
    try {
      const node = await startLitecoind(options.nodeArgs);
      opened.push(() => node.stop());
      const testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
      opened.push(() => testDatabase.drop());
      const env = { ...regtestEnv(testDatabase.url, node.url), ...options.env };
      const server = await startInProcess(env);
      opened.push(() => server.close());
      const config = loadConfig({ ...env, DATA_DIR: await mkdtemp(join(tmpdir(), 'litecoin-custody-')) }, '0.0.0-test');
      const database = await openDatabase(config, log);
      opened.push(() => database.close());
      const custody = await openCustody(config, log, database.pool, { owner: false });
      opened.push(() => custody.close());
      started = { node, testDatabase, server, database, custody, env };
      return started;
    } catch (error) {
      await close();
      throw error;
    }
  };
  /** Undoes `start` (custody, its database, the server, the test database, the node), after checking the ledger audit passes. */
  const close = async () => {
    try {
      if (started) expect(await auditFailures(started.database.pool)).toEqual([]);
    } finally {
      started = undefined;
      while (opened.length > 0) await opened.pop()?.();
    }
  };

  return {
    start,
    close,
    call,
    at,
    work,
    mine,
    signUp,
    ltc,
    balance,
    addressOf,
    history,
    withdraw,
    funded,
    completed,
    matching,
  };
}

export type LitecoinCustody = ReturnType<typeof litecoinCustody>;
