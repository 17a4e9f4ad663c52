import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { pino } from 'pino';
import { randomUUID } from 'node:crypto';
import { mnemonicToSeedSync } from '@scure/bip39';
import { countedPool, createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { auditFailures, createWalletAccount, openTestCustody, quietLog, waitFor } from '../../support/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import type { TestCustody } from '../../support/custody.ts';
import { ALERT_AFTER_ATTEMPTS } from '../../../src/server/log.ts';
import type { WithdrawalChainPort } from '../../../src/server/adapters/chains/port.ts';
import { deriveAddress } from '../../../src/server/domain/addresses.ts';
import { addAssets, listAssets } from '../../../src/server/domain/assets.ts';
import { confirmDeposits, scanDeposits } from '../../../src/server/domain/deposits.ts';
import { createWithdrawalService, type WithdrawalService } from '../../../src/server/domain/withdrawals/requests.ts';
import { broadcastWithdrawals, confirmWithdrawals, processWithdrawals, signWithdrawals, withdrawalsHaveWork } from '../../../src/server/domain/withdrawals/worker.ts';

/**
 * The withdrawal worker against real PostgreSQL, ledger and devnet: one withdrawal the signer refuses, or whose
 * broadcast fails for a while, must not hold up the others, keeps its hold, and goes through once the fault is gone.
 */
// A BIP39 test vector nobody in this wallet owns: outside recipients.
const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');
const outside = (index: number) => deriveAddress(OUTSIDE_SEED, 'BITCOIN', index, 'mainnet');

type Row = { id: string; state: string; raw_tx: string | null; tx_hash: string | null; broadcast_attempts: number };

describe('the withdrawal worker with one bad withdrawal', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let custody: TestCustody;
  let service: WithdrawalService;
  type Line = { msg: string; level: number; withdrawal?: string; attempts?: number };
  const warnings: Line[] = [];
  // Warnings land in `warnings`, so the test sees what the worker logged about the bad row.
  const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line) as Line) });

  /** The real devnet chain, except that it fails signing or broadcasting for the addresses in these sets. */
  const refuseSigning = new Set<string>();
  const failBroadcast = new Set<string>();
  let statusDown = false;
  const port = (): WithdrawalChainPort => {
    const chain = custody.chain;
    return {
      networks: chain.networks,
      requiredConfirmations: (network) => chain.requiredConfirmations(network),
      scan: (network, cursor, limit) => chain.scan(network, cursor, limit),
      status: async (network, transfers) => {
        if (statusDown) throw new Error('connect ECONNREFUSED: the node is unreachable');
        return chain.status(network, transfers);
      },
      explorerUrl: (network) => chain.explorerUrl(network),
      hotWalletAddress: (network) => chain.hotWalletAddress(network),
      signWithdrawal: async (order) => {
        if (refuseSigning.has(order.toAddress)) throw new Error('the signer refuses this withdrawal');
        return chain.signWithdrawal(order);
      },
      broadcast: async (network, rawTx) => {
        const sentTo = await database.pool.query<{ to_address: string }>('SELECT to_address FROM withdrawals WHERE raw_tx = $1', [rawTx]);
        if (failBroadcast.has(sentTo.rows[0]?.to_address ?? '')) throw new Error('connect ECONNREFUSED: the node is unreachable');
        return chain.broadcast(network, rawTx);
      },
    };
  };

  const fundedAccount = async (amount: string) => {
    const { accountId } = await createWalletAccount(database.pool);
    await addAssets(database.pool, accountId, ['BTC'], custody.catalogue, custody);
    const address = (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === 'BTC')?.depositAddress ?? '';
    await custody.chain.send({ currency: 'BTC', toAddress: address, amount });
    await waitFor(`${amount} BTC credited`, async () => {
      await scanDeposits(database.pool, custody.chain, 'BITCOIN');
      await confirmDeposits(database.pool, custody.chain, quietLog);
      return (await balance(accountId)).available === amount;
    });
    return accountId;
  };
  const balance = async (accountId: string) => {
    const btc = (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === 'BTC');
    return { available: btc?.totalAvailable ?? '0', onHold: btc?.onHold ?? '0' };
  };
  const withdraw = (accountId: string, to: string) => service.create(accountId, { currency: 'BTC', amount: '0.01', depositAddress: to, idempotencyKey: randomUUID() });
  const row = async (id: string) => (await database.pool.query<Row>('SELECT id, state, raw_tx, tx_hash, broadcast_attempts FROM withdrawals WHERE id = $1', [id])).rows[0];
  const ledgerKeys = async (id: string) =>
    (await database.pool.query<{ idempotency_key: string }>('SELECT idempotency_key FROM ledger_entries WHERE idempotency_key LIKE $1 ORDER BY idempotency_key', [`withdrawal:%:${id}`])).rows.map(
      (r) => r.idempotency_key,
    );
  /** Confirms broadcast withdrawals until each of `ids` is COMPLETED (the devnet mines on its block clock). */
  const completed = (ids: string[]) =>
    waitFor('withdrawals completed', async () => {
      await confirmWithdrawals(database.pool, port(), quietLog);
      const states = await database.pool.query<{ state: string }>('SELECT state FROM withdrawals WHERE id = ANY($1::uuid[])', [ids]);
      return states.rows.every((r) => r.state === 'COMPLETED') && states.rowCount === ids.length;
    });

  // Each case on its own database: one that fails half-way leaves no rows or faults behind for the other.
  beforeEach(async () => {
    refuseSigning.clear();
    statusDown = false;
    failBroadcast.clear();
    warnings.length = 0;
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    ({ database, custody } = await openTestCustody(testDatabase.url));
    service = createWithdrawalService({ pool: database.pool, chain: custody.chain, rates: custody.rates, addresses: custody.addresses, catalogue: custody.catalogue, settings: { fees: { BTC: '0.0001' }, blockedAddresses: [], feeMarginBps: 2000 } });
  });
  afterEach(async () => {
    if (database) expect(await auditFailures(database.pool)).toEqual([]);
    await database?.close();
    await testDatabase?.drop();
  });

  it('signs the rest of the batch when the signer refuses one withdrawal, which stays PENDING and is signed once it can be', async () => {
    const accountId = await fundedAccount('0.05');
    const [a, bad, c] = [await outside(1), await outside(2), await outside(3)];
    // The refused one sits in the middle of the batch: what was signed before it must not be lost with it.
    const first = await withdraw(accountId, a);
    const stuck = await withdraw(accountId, bad);
    const third = await withdraw(accountId, c);
    expect(await balance(accountId)).toEqual({ available: '0.02', onHold: '0.03' });

    refuseSigning.add(bad);
    await signWithdrawals(database.pool, port(), log);
    for (const id of [first.id, third.id]) expect(await row(id)).toMatchObject({ state: 'SIGNED', raw_tx: expect.any(String), tx_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await row(stuck.id)).toMatchObject({ state: 'PENDING', raw_tx: null, tx_hash: null });
    expect(warnings.some((w) => w.withdrawal === stuck.id)).toBe(true);
    // Nothing was released: all three are still held.
    expect(await balance(accountId)).toEqual({ available: '0.02', onHold: '0.03' });
    expect(await ledgerKeys(stuck.id)).toEqual([`withdrawal:hold:${stuck.id}`]);

    // Still refused on the next run: still PENDING, and the others go on to the chain.
    await signWithdrawals(database.pool, port(), log);
    expect((await row(stuck.id))?.state).toBe('PENDING');
    expect(await broadcastWithdrawals(database.pool, port(), log)).toBe(2);
    for (const id of [first.id, third.id]) expect((await row(id))?.state).toBe('BROADCAST');

    // The signer takes it again: it is signed, sent and completed like the others.
    refuseSigning.delete(bad);
    await signWithdrawals(database.pool, port(), log);
    expect(await row(stuck.id)).toMatchObject({ state: 'SIGNED', tx_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await broadcastWithdrawals(database.pool, port(), log)).toBe(1);
    await completed([first.id, stuck.id, third.id]);
    expect(await balance(accountId)).toEqual({ available: '0.02', onHold: '0' });
    expect(await ledgerKeys(stuck.id)).toEqual([`withdrawal:hold:${stuck.id}`, `withdrawal:settle:${stuck.id}`]);
  });

  it('broadcasts the others when one broadcast fails with a passing error, counts its attempt and keeps its hold, and sends it later', async () => {
    const accountId = await fundedAccount('0.05');
    const [bad, b, c] = [await outside(4), await outside(5), await outside(6)];
    const stuck = await withdraw(accountId, bad);
    const second = await withdraw(accountId, b);
    const third = await withdraw(accountId, c);
    await signWithdrawals(database.pool, port(), log);
    const ids = [stuck.id, second.id, third.id];
    for (const id of ids) expect((await row(id))?.state).toBe('SIGNED');
    // The failing one is the oldest signed, so it is the first the broadcaster claims.
    await database.pool.query(`UPDATE withdrawals SET signed_at = signed_at - interval '1 hour' WHERE id = $1`, [stuck.id]);
    const stuckHash = (await row(stuck.id))?.tx_hash ?? '';

    failBroadcast.add(bad);
    expect(await broadcastWithdrawals(database.pool, port(), log)).toBe(2);
    for (const id of [second.id, third.id]) expect((await row(id))?.state).toBe('BROADCAST');
    const failed = await row(stuck.id);
    expect(failed).toMatchObject({ state: 'SIGNED', tx_hash: stuckHash });
    expect(failed?.broadcast_attempts).toBeGreaterThanOrEqual(1);
    expect(warnings.some((w) => w.withdrawal === stuck.id && w.msg.startsWith('broadcast failed'))).toBe(true);
    // A passing error is not a refusal: the hold stays, nothing was released, nothing reached the chain.
    expect(await balance(accountId)).toEqual({ available: '0.02', onHold: '0.03' });
    expect(await ledgerKeys(stuck.id)).toEqual([`withdrawal:hold:${stuck.id}`]);
    expect(await custody.chain.broadcasts(stuckHash)).toEqual([]);

    // Another run with the node still down only counts more attempts.
    const attempts = failed?.broadcast_attempts ?? 0;
    expect(await broadcastWithdrawals(database.pool, port(), log)).toBe(0);
    expect(await row(stuck.id)).toMatchObject({ state: 'SIGNED' });
    expect((await row(stuck.id))?.broadcast_attempts).toBeGreaterThan(attempts);
    // From the tenth failed try on, each one is logged as an error: the money is held and the operator should look.
    expect(warnings.filter((w) => w.withdrawal === stuck.id).every((w) => w.level === 40)).toBe(true);
    await database.pool.query('UPDATE withdrawals SET broadcast_attempts = $2 WHERE id = $1', [stuck.id, ALERT_AFTER_ATTEMPTS - 1]);
    expect(await broadcastWithdrawals(database.pool, port(), log)).toBe(0);
    expect(warnings.filter((w) => w.withdrawal === stuck.id).at(-1)).toMatchObject({ level: 50, attempts: ALERT_AFTER_ATTEMPTS });

    // A node that cannot even answer for the hash counts an attempt the same way, and the run goes on.
    statusDown = true;
    const before = (await row(stuck.id))?.broadcast_attempts ?? 0;
    expect(await broadcastWithdrawals(database.pool, port(), log)).toBe(0);
    expect((await row(stuck.id))?.broadcast_attempts).toBe(before + 1);
    statusDown = false;

    // The node is back: the stuck one is sent, once, and everything completes.
    failBroadcast.delete(bad);
    expect(await broadcastWithdrawals(database.pool, port(), log)).toBe(1);
    expect((await row(stuck.id))?.state).toBe('BROADCAST');
    expect((await custody.chain.broadcasts(stuckHash)).map((x) => x.outcome)).toEqual(['ACCEPTED']);
    await completed(ids);
    expect(await balance(accountId)).toEqual({ available: '0.02', onHold: '0' });
    expect(await ledgerKeys(stuck.id)).toEqual([`withdrawal:hold:${stuck.id}`, `withdrawal:settle:${stuck.id}`]);
  });
  it('asks one question per poll while no withdrawal waits, and runs the steps while one does, whatever its state', async () => {
    // The pool as the worker's job sees it, counting what reaches PostgreSQL: statements and checked-out connections.
    const { pool: counted, counts } = countedPool(database.pool);
    const idlePoll = async () => {
      counts.statements = 0;
      counts.connections = 0;
      await processWithdrawals(counted, port(), log);
      return { ...counts };
    };
    const has = () => withdrawalsHaveWork(database.pool, ['BITCOIN']);
    expect(await has()).toBe(false);
    expect(await idlePoll()).toEqual({ statements: 1, connections: 0 });

    const accountId = await fundedAccount('0.05');
    const pending = await withdraw(accountId, await outside(7));
    expect(await has()).toBe(true);
    // Another network's poll does not see it.
    expect(await withdrawalsHaveWork(database.pool, ['ETHEREUM'])).toBe(false);
    await processWithdrawals(database.pool, port(), log);
    expect((await row(pending.id))?.state).toBe('BROADCAST');
    expect(await has()).toBe(true);
    await completed([pending.id]);
    expect(await has()).toBe(false);
    expect(await idlePoll()).toEqual({ statements: 1, connections: 0 });

    // A completed one a reorganisation put in doubt is work: the poll re-checks it on the chain and clears the doubt.
    await database.pool.query('UPDATE withdrawals SET in_doubt_since = now() WHERE id = $1', [pending.id]);
    expect(await has()).toBe(true);
    await processWithdrawals(database.pool, port(), log);
    expect((await database.pool.query<{ doubt: Date | null; state: string }>('SELECT in_doubt_since AS doubt, state FROM withdrawals WHERE id = $1', [pending.id])).rows[0]).toEqual({ doubt: null, state: 'COMPLETED' });
    expect(await has()).toBe(false);

    // So is a batch not signed yet.
    const batch = await database.pool.query<{ id: string }>(`INSERT INTO withdrawal_batches (network, size) VALUES ('BITCOIN', 1) RETURNING id`);
    expect(await has()).toBe(true);
    await database.pool.query('DELETE FROM withdrawal_batches WHERE id = $1', [batch.rows[0]?.id]);
    expect(await has()).toBe(false);
  });
});
