import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';
import { auditFailures, quietLog, TEST_MNEMONIC, TEST_SECRETS_KEY, waitFor } from '../../support/custody.ts';
import { startInProcess, type InProcessServer } from '../../support/in-process.ts';
import { startLitecoind, type Litecoind } from '../../support/litecoind.ts';
import { loadConfig } from '../../../src/server/config.ts';
import { openCustody, type Custody } from '../../../src/server/custody.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import type { AssetItem } from '../../../src/server/domain/assets.ts';
import { custodyBalances } from '../../../src/server/domain/custody-balances.ts';
import type { TransactionItem } from '../../../src/server/domain/history.ts';
import type { WithdrawalView } from '../../../src/server/domain/withdrawals/view.ts';

/**
 * Batched withdrawals (UTXO_BATCH_SECONDS) on Litecoin Core -regtest: eight withdrawals made at once leave in one
 * transaction with eight outputs and change, each completing with its own ledger entries, the network fee booked once
 * in parts that add up to it, the audit clean and `custody balances` matching; fewer wait at most the window; a worker
 * killed at each point around gathering, signing and sending still pays each withdrawal exactly once; a stuck batch
 * is replaced by fee for all its members; a batch a reorganisation took off the chain reopens each of its members.
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PASSWORD = 'a long enough passphrase 42';
const WINDOW_SECONDS = 2;

type Row = { state: string; tx_hash: string | null; raw_tx: string | null; replaced_tx_hashes: string[]; network_fee: string | null; batch_id: string | null; block_height: string | null; reopened: number };

describe('batched withdrawals on Litecoin Core regtest', () => {
  let node: Litecoind;
  let testDatabase: TestDatabase;
  let server: InProcessServer;
  let database: Database;
  let custody: Custody;
  let env: Record<string, string>;
  const call = gatewayClient(() => server.url);
  const at = (user: SignedInUser, path: string) => `/api/${user.accountId}${path}`;

  const work = async () => {
    for (const job of custody.jobs) if (job.name.startsWith('chain.') || job.name.startsWith('custody.movements')) await job.run();
  };
  const mine = async (blocks: number) => {
    await node.mine(blocks);
    await work();
  };
  const signUp = (name: string) => signUpAndSignIn(server.url, { email: `ltc-batch-${name}-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: testDatabase.url });
  const ltc = async (user: SignedInUser) => (await call<AssetItem[]>(user, 'GET', at(user, '/asset'))).body.find((a) => a.currency === 'LTC');
  const balance = async (user: SignedInUser) => {
    const found = await ltc(user);
    return { available: found?.totalAvailable ?? '0', onHold: found?.onHold ?? '0' };
  };
  const history = async (user: SignedInUser) =>
    (await call<{ result: TransactionItem[] }>(user, 'POST', at(user, '/asset/transactions'), { currency: 'LTC', sort: 'DESC', properties: ['createdDate'], pageSize: 100, pageNumber: 1 })).body.result;
  const withdraw = async (user: SignedInUser, amount: string, to: string) => {
    const answer = await call<WithdrawalView>(user, 'POST', at(user, '/withdrawal'), { currency: 'LTC', amount, depositAddress: to, idempotencyKey: randomUUID() });
    expect(answer.status).toBe(200);
    return answer.body.id;
  };
  const rows = async (ids: readonly string[]) =>
    (
      await database.pool.query<Row & { id: string }>(
        'SELECT id, state, tx_hash, raw_tx, replaced_tx_hashes, network_fee, batch_id, block_height, reopened FROM withdrawals WHERE id = ANY($1::uuid[]) ORDER BY id',
        [ids],
      )
    ).rows;
  const funded = async (name: string, amount: string) => {
    const user = await signUp(name);
    await call(user, 'POST', at(user, '/account/currency'), { currency: 'LTC' });
    await node.send((await ltc(user))?.depositAddress ?? '', amount);
    await work();
    await mine(2);
    expect(await balance(user)).toEqual({ available: amount, onHold: '0' });
    return user;
  };
  const allCompleted = async (ids: readonly string[]) => {
    await waitFor('the batch completed', async () => {
      await mine(1);
      return (await rows(ids)).every((r) => r.state === 'COMPLETED');
    }, 30_000);
  };
  const matching = async () => (await custodyBalances(database.pool, custody.chain)).find((r) => r.network === 'LITECOIN' && r.currency === 'LTC');
  const outputsOf = async (txHash: string) => (await node.rpc.call<{ vout: { value: number; scriptPubKey: { addresses?: string[]; address?: string } }[] }>('getrawtransaction', txHash, true)).vout;
  const signedOf = async (reference: string) =>
    (await database.pool.query<{ attempt: number; tx_hash: string; fee: string; parent_tx: string | null }>('SELECT attempt, tx_hash, fee::text, parent_tx FROM utxo_transactions WHERE reference = $1 ORDER BY attempt', [reference])).rows;

  beforeAll(async () => {
    node = await startLitecoind();
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    env = {
      DATABASE_URL: testDatabase.url,
      WALLET_SEED: TEST_MNEMONIC,
      SECRETS_KEY: TEST_SECRETS_KEY,
      WORKERS: 'off',
      RATES_WALK_MS: '0',
      PUBLIC_RATE_LIMIT: '0',
      CHAIN_ENV: 'regtest',
      LITECOIN_RPC_URL: node.url,
      CONFIRMATIONS: 'LITECOIN:2',
      FEE_RATE_FALLBACK: 'LITECOIN:5',
      RBF_AFTER_BLOCKS: '2',
      WITHDRAWAL_FEES: JSON.stringify({ LTC: '0.001' }),
      UTXO_BATCH_SECONDS: String(WINDOW_SECONDS),
      UTXO_BATCH_MAX_OUTPUTS: '8',
    };
    server = await startInProcess(env);
    const config = loadConfig({ ...env, DATA_DIR: await mkdtemp(join(tmpdir(), 'utxo-batch-')) }, '0.0.0-test');
    database = await openDatabase(config, quietLog);
    custody = await openCustody(config, quietLog, database.pool, { owner: false });
  }, 120_000);
  afterAll(async () => {
    if (database) expect(await auditFailures(database.pool)).toEqual([]);
    await custody?.close();
    await database?.close();
    await server?.close();
    await testDatabase?.drop();
    await node?.stop();
  });

  it('pays eight withdrawals made at once by one transaction with eight outputs and change, each settled on its own, the network fee booked once', async () => {
    const alice = await funded('alice', '2');
    const bob = await funded('bob', '2');
    const before = (await matching())?.holdings ?? 0n;
    const recipients = await Promise.all(Array.from({ length: 8 }, () => node.newAddress()));
    // 0.1 … 0.8 LTC, four from each user, all at once.
    const ids = await Promise.all(recipients.map((to, i) => withdraw(i % 2 === 0 ? alice : bob, `0.${i + 1}`, to)));
    await work();
    const sent = await rows(ids);
    const txHash = sent[0]?.tx_hash ?? '';
    expect(txHash).toMatch(/^[0-9a-f]{64}$/);
    expect(sent.map((r) => ({ state: r.state, tx_hash: r.tx_hash, batch_id: r.batch_id }))).toEqual(sent.map(() => ({ state: 'BROADCAST', tx_hash: txHash, batch_id: sent[0]?.batch_id })));
    const outputs = await outputsOf(txHash);
    expect(outputs).toHaveLength(9);
    expect(await matching()).toMatchObject({ matches: true, inFlight: 8 });
    expect((await history(alice)).filter((t) => t.hash === txHash)).toHaveLength(4);

    await allCompleted(ids);
    // Each recipient got its amount less the custody's fee, to the litoshi.
    for (const [i, to] of recipients.entries()) expect(await node.received(to)).toBe(BigInt(i + 1) * 10_000_000n - 100_000n);
    const [record] = await signedOf(sent[0]?.batch_id ?? '');
    const done = await rows(ids);
    const networkFee = BigInt(record?.fee ?? '0');
    expect(networkFee).toBeGreaterThan(0n);
    expect(done.reduce((sum, r) => sum + BigInt(r.network_fee ?? '0'), 0n)).toBe(networkFee);
    for (const w of done) {
      const keys = await database.pool.query<{ key: string }>('SELECT idempotency_key AS key FROM ledger_entries WHERE reference = $1 ORDER BY id', [`withdrawal:${w.id}`]);
      expect(keys.rows.map((r) => r.key.replace(w.id, 'ID'))).toEqual(['withdrawal:hold:ID', 'withdrawal:settle:ID', 'withdrawal:networkFee:ID']);
    }
    // The users paid what they were charged: the amount, the fee inside it; the network fee is the custody's.
    expect(await balance(alice)).toEqual({ available: '0.4', onHold: '0' });
    expect(await balance(bob)).toEqual({ available: '0', onHold: '0' });
    expect((await history(bob)).filter((t) => t.hash === txHash).map((t) => t.state)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED']);
    const now = await matching();
    expect(now).toMatchObject({ matches: true, inFlight: 0 });
    expect(now?.holdings).toBe(before - (36n * 10_000_000n - 8n * 100_000n) - networkFee);
    expect(await auditFailures(database.pool)).toEqual([]);
  });

  it('lets fewer withdrawals wait at most UTXO_BATCH_SECONDS, then pays them together', async () => {
    const user = await funded('window', '1');
    const recipients = [await node.newAddress(), await node.newAddress()];
    const ids = [await withdraw(user, '0.2', recipients[0] ?? ''), await withdraw(user, '0.3', recipients[1] ?? '')];
    await work();
    expect((await rows(ids)).map((r) => ({ state: r.state, batch_id: r.batch_id }))).toEqual([
      { state: 'PENDING', batch_id: null },
      { state: 'PENDING', batch_id: null },
    ]);
    await sleep(WINDOW_SECONDS * 1000 + 100);
    await work();
    const sent = await rows(ids);
    expect(sent.map((r) => r.state)).toEqual(['BROADCAST', 'BROADCAST']);
    expect(sent[1]?.tx_hash).toBe(sent[0]?.tx_hash);
    expect(await outputsOf(sent[0]?.tx_hash ?? '')).toHaveLength(3);
    await allCompleted(ids);
    expect(await node.received(recipients[0] ?? '')).toBe(19_900_000n);
    expect(await node.received(recipients[1] ?? '')).toBe(29_900_000n);
    expect(await matching()).toMatchObject({ matches: true, inFlight: 0 });
  });

  it('pays each withdrawal of a batch exactly once when the worker is killed after gathering, after the adapter signed, after recording and after sending', async () => {
    const user = await funded('crash', '2');
    for (const dieAfter of ['batched', 'batch-signed', 'signed', 'sent']) {
      const recipients = [await node.newAddress(), await node.newAddress(), await node.newAddress()];
      const ids = await Promise.all(recipients.map((to) => withdraw(user, '0.1', to)));
      // Three of at most three: the batch is due at once.
      const died = await runScript('tests/support/utxo-worker-dies.ts', { UTXO_DIE_AFTER: dieAfter, UTXO_BATCH_MAX_OUTPUTS: '3' });
      expect(died.signal).toBe('SIGKILL');
      const left = await rows(ids);
      const batch = left[0]?.batch_id ?? '';
      expect(left.every((r) => r.batch_id === batch && batch !== '')).toBe(true);
      expect(left.map((r) => r.state)).toEqual(Array(3).fill(dieAfter === 'batched' || dieAfter === 'batch-signed' ? 'PENDING' : 'SIGNED'));
      const stored = await signedOf(batch);
      expect(stored).toHaveLength(dieAfter === 'batched' ? 0 : 1);
      if (dieAfter === 'sent') expect(await node.rpc.call('getmempoolentry', left[0]?.tx_hash)).toBeTruthy();
      await work();
      const sent = await rows(ids);
      const txHash = sent[0]?.tx_hash ?? '';
      expect(sent.every((r) => r.state === 'BROADCAST' && r.tx_hash === txHash)).toBe(true);
      // The transaction signed before the crash is the one sent, never a second one.
      if (dieAfter !== 'batched') expect(txHash).toBe(stored[0]?.tx_hash);
      expect(await signedOf(batch)).toHaveLength(1);
      await allCompleted(ids);
      for (const to of recipients) expect(await node.received(to)).toBe(9_900_000n);
    }
    expect(await balance(user)).toEqual({ available: '0.8', onHold: '0' });
    expect(await matching()).toMatchObject({ matches: true, inFlight: 0 });
    expect(await auditFailures(database.pool)).toEqual([]);
  }, 120_000);

  it('replaces a stuck batch by fee for all its members, and reopens each member when a reorganisation takes the batch off the chain', async () => {
    const user = await funded('rbf', '1');
    const recipients = [await node.newAddress(), await node.newAddress(), await node.newAddress()];
    const ids = await Promise.all(recipients.map((to) => withdraw(user, '0.2', to)));
    await sleep(WINDOW_SECONDS * 1000 + 100);
    await work();
    const first = await rows(ids);
    const stuck = first[0]?.tx_hash ?? '';
    expect(first.every((r) => r.state === 'BROADCAST' && r.tx_hash === stuck)).toBe(true);
    await node.rpc.call('prioritisetransaction', stuck, 0, -100_000_000);
    await mine(1);
    await mine(1);
    const replaced = await rows(ids);
    const replacement = replaced[0]?.tx_hash ?? '';
    expect(replacement).not.toBe(stuck);
    expect(replaced.map((r) => ({ tx_hash: r.tx_hash, replaced_tx_hashes: r.replaced_tx_hashes }))).toEqual(replaced.map(() => ({ tx_hash: replacement, replaced_tx_hashes: [stuck] })));
    // One replacement for the batch, paying the three again.
    const attempts = await signedOf(first[0]?.batch_id ?? '');
    expect(attempts.map((a) => ({ attempt: a.attempt, parent_tx: a.parent_tx }))).toEqual([
      { attempt: 0, parent_tx: null },
      { attempt: 1, parent_tx: null },
    ]);
    expect(await outputsOf(replacement)).toHaveLength(4);
    expect((await history(user)).filter((t) => t.hash === replacement)).toHaveLength(3);
    await allCompleted(ids);
    const done = await rows(ids);
    expect(done.every((r) => r.tx_hash === replacement)).toBe(true);
    expect(done.reduce((sum, r) => sum + BigInt(r.network_fee ?? '0'), 0n)).toBe(BigInt(attempts[1]?.fee ?? '0'));
    for (const to of recipients) expect(await node.received(to)).toBe(19_900_000n);
    expect(await matching()).toMatchObject({ matches: true, inFlight: 0 });

    // The block that mined the batch is replaced by one without it: every member is in flight again, then completes again.
    await node.rpc.call('invalidateblock', await node.rpc.call<string>('getblockhash', Number(done[0]?.block_height)));
    await node.rpc.call('prioritisetransaction', replacement, 0, -100_000_000);
    await node.mine(3);
    await work();
    const reopened = await rows(ids);
    expect(reopened.map((r) => ({ state: r.state, reopened: r.reopened, network_fee: r.network_fee }))).toEqual(reopened.map(() => ({ state: 'BROADCAST', reopened: 1, network_fee: null })));
    expect(await balance(user)).toEqual({ available: '0.4', onHold: '0.6' });
    await node.rpc.call('prioritisetransaction', replacement, 0, 100_000_000);
    await allCompleted(ids);
    expect((await rows(ids)).every((r) => r.tx_hash === replacement && r.reopened === 1)).toBe(true);
    expect(await balance(user)).toEqual({ available: '0.4', onHold: '0' });
    expect(await matching()).toMatchObject({ matches: true, inFlight: 0 });
    expect(await auditFailures(database.pool)).toEqual([]);
  });

  // Last: the dust withdrawal stays in flight (the node refuses it; item 1's status keeps an own transaction whose inputs are unspent).
  it('never puts an amount below dust into a batch, where the node would refuse every payment with it', async () => {
    const user = await funded('dust', '1');
    const to = await node.newAddress();
    const id = await withdraw(user, '0.2', to);
    // 200 litoshi to the recipient after the custody's fee: below dust. It is signed alone at once.
    const dust = await withdraw(user, '0.001002', await node.newAddress());
    await work();
    const [alone] = await rows([dust]);
    expect(alone?.batch_id).toBeNull();
    expect(alone?.state).not.toBe('PENDING');
    expect((await rows([id]))[0]).toMatchObject({ state: 'PENDING', batch_id: null });
    await sleep(WINDOW_SECONDS * 1000 + 100);
    await work();
    const [batched] = await rows([id]);
    expect(batched).toMatchObject({ state: 'BROADCAST', batch_id: expect.any(String) });
    expect(batched?.tx_hash).not.toBe(alone?.tx_hash);
    await allCompleted([id]);
    expect(await node.received(to)).toBe(19_900_000n);
    expect(await auditFailures(database.pool)).toEqual([]);
  });

  const runScript = (script: string, extra: Record<string, string> = {}) =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [script], { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'warn', ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
});
