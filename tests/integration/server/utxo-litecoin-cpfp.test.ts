import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { auditFailures, quietLog, waitFor } from '../../support/custody.ts';
import { litecoinCustody } from '../../support/litecoin-custody.ts';
import type { Litecoind } from '../../support/litecoind.ts';
import { loadConfig } from '../../../src/server/config.ts';
import { openCustody, type Custody } from '../../../src/server/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';

/**
 * Litecoin Core on its default relay policy (`-mempoolreplacement=0`: no BIP125 replacement is relayed). A stuck
 * withdrawal's replacement is refused by the node: it is never recorded on the withdrawal nor shown to the user;
 * the custody bumps it by CPFP instead (a child spending its change), both are mined, the withdrawal completes under
 * its original hash with both fees booked, and `custody balances` matches. A bump that would pass MAX_FEE_RATE is
 * not sent and logged once at error level. A stuck batch (UTXO_BATCH_SECONDS) is bumped the same way, for all its
 * members. (Replacement with `-mempoolreplacement=1`: utxo-litecoin.test.ts, utxo-litecoin-batch.test.ts.)
 */
type Line = { level: number; msg: string; withdrawal?: string };

describe("the custody on Litecoin Core's default relay policy (replacement refused)", () => {
  // Litecoin Core's own default, stated: the support's `-mempoolreplacement=1` comes first and this one wins.
  // One round of work is the chain's jobs only.
  const lc = litecoinCustody({ env: { RBF_AFTER_BLOCKS: '2' }, nodeArgs: ['-mempoolreplacement=0'], jobs: ['chain.'] });
  const { work: chainJobs, mine, signUp, addressOf, ltc, history, withdraw, matching } = lc;
  let node: Litecoind;
  let database: Database;
  let custody: Custody;
  /** A second worker whose MAX_FEE_RATE (5 litoshi/vB) is what the first withdrawal already pays. */
  let lowCeiling: Custody;
  const lowCeilingLines: Line[] = [];
  /** A worker that pays withdrawals in batches of three (UTXO_BATCH_SECONDS). */
  let batching: Custody;
  const row = async (id: string) =>
    (
      await database.pool.query<{ state: string; tx_hash: string; raw_tx: string; replaced_tx_hashes: string[]; network_fee: string | null }>(
        'SELECT state, tx_hash, raw_tx, replaced_tx_hashes, network_fee FROM withdrawals WHERE id = $1',
        [id],
      )
    ).rows[0];
  const signedOf = async (reference: string) =>
    (
      await database.pool.query<{ attempt: number; tx_hash: string; fee: string; parent_tx: string | null; released: boolean }>(
        'SELECT attempt, tx_hash, fee::text, parent_tx, released_at IS NOT NULL AS released FROM utxo_transactions WHERE reference = $1 ORDER BY attempt',
        [reference],
      )
    ).rows;

  beforeAll(async () => {
    const started = await lc.start();
    ({ node, database, custody } = started);
    const low = loadConfig({ ...started.env, MAX_FEE_RATE: 'LITECOIN:5', DATA_DIR: await mkdtemp(join(tmpdir(), 'utxo-cpfp-low-')) }, '0.0.0-test');
    const lowLog = pino({ level: 'warn' }, { write: (line: string) => void lowCeilingLines.push(JSON.parse(line) as Line) });
    lowCeiling = await openCustody(low, lowLog, database.pool, { owner: false });
    const batched = loadConfig({ ...started.env, UTXO_BATCH_SECONDS: '600', UTXO_BATCH_MAX_OUTPUTS: '3', DATA_DIR: await mkdtemp(join(tmpdir(), 'utxo-cpfp-batch-')) }, '0.0.0-test');
    batching = await openCustody(batched, quietLog, database.pool, { owner: false });
  }, 120_000);
  afterAll(async () => {
    await lowCeiling?.close();
    await batching?.close();
    await lc.close();
  });

  it('bumps a stuck withdrawal by CPFP when the replacement is refused, keeps its hash, books both fees, balances matching', async () => {
    const user = await signUp('cpfp');
    await node.send(await addressOf(user), '1');
    await chainJobs(custody);
    await mine(2);
    expect((await ltc(user))?.totalAvailable).toBe('1');
    const before = (await matching())?.holdings ?? 0n;

    const to = await node.newAddress();
    const sent = await withdraw(user, '0.3', to);
    expect(sent.status).toBe(200);
    const id = sent.body.id;
    await chainJobs(custody);
    const first = await row(id);
    expect(first).toMatchObject({ state: 'BROADCAST', replaced_tx_hashes: [] });
    const original = { tx_hash: first?.tx_hash, raw_tx: first?.raw_tx };
    const [signed] = await signedOf(id);
    // Miners leave it out: its fee counts as nothing to them (a CPFP child can still pay for it).
    await node.rpc.call('prioritisetransaction', original.tx_hash, 0, -Number(signed?.fee));

    // Two blocks later a bump is due. The worker whose MAX_FEE_RATE is the rate it already pays sends nothing and
    // says so once at error level, however often it looks.
    await node.mine(2);
    await chainJobs(lowCeiling);
    await chainJobs(lowCeiling);
    const errors = lowCeilingLines.filter((l) => l.level >= 50);
    expect(errors).toEqual([expect.objectContaining({ msg: 'stuck withdrawal needs a fee above MAX_FEE_RATE; not bumped', withdrawal: id })]);
    expect(await node.rpc.call<string[]>('getrawmempool')).toEqual([original.tx_hash]);
    expect(await signedOf(id)).toHaveLength(1);

    // The custody's own worker, RBF_AFTER_BLOCKS later: the node refuses the replacement (txn-mempool-conflict), so
    // the withdrawal keeps its hash and bytes; a CPFP child spending the change pays for both.
    await mine(1);
    await mine(1);
    expect(await row(id)).toMatchObject({ state: 'BROADCAST', ...original, replaced_tx_hashes: [] });
    const attempts = await signedOf(id);
    expect(attempts).toEqual([
      expect.objectContaining({ attempt: 0, tx_hash: original.tx_hash, parent_tx: null, released: false }),
      expect.objectContaining({ attempt: 1, parent_tx: null, released: true }),
      expect.objectContaining({ attempt: 2, parent_tx: original.tx_hash, released: false }),
    ]);
    const refused = attempts[1]?.tx_hash;
    const child = attempts[2];
    expect(await node.rpc.call('getmempoolentry', refused).catch(() => 'unknown')).toBe('unknown');
    const entry = await node.rpc.call<{ depends: string[] }>('getmempoolentry', child?.tx_hash);
    expect(entry.depends).toEqual([original.tx_hash]);
    expect((await history(user))[0]).toMatchObject({ transactionType: 'WITHDRAWAL', state: 'IN_PROGRESS', hash: original.tx_hash });
    expect(JSON.stringify(await history(user))).not.toContain(refused);

    // Both are mined in the next block; the withdrawal completes under its own hash with both fees booked.
    await waitFor(`withdrawal ${id} completed`, async () => {
      await mine(1);
      return (await row(id))?.state === 'COMPLETED';
    }, 30_000);
    const done = await row(id);
    expect(done).toMatchObject({ tx_hash: original.tx_hash, replaced_tx_hashes: [] });
    const networkFee = BigInt(signed?.fee ?? '0') + BigInt(child?.fee ?? '0');
    expect(BigInt(done?.network_fee ?? '0')).toBe(networkFee);
    const mined = await node.rpc.call<{ blockhash: string }>('getrawtransaction', child?.tx_hash, true);
    expect(mined.blockhash).toBe((await node.rpc.call<{ blockhash: string }>('getrawtransaction', original.tx_hash, true)).blockhash);
    expect((await history(user))[0]).toMatchObject({ state: 'COMPLETED', hash: original.tx_hash });
    expect(await node.received(to)).toBe(29_900_000n);
    expect((await ltc(user))?.totalAvailable).toBe('0.7');
    // The chain shows what the ledger says: the amount sent less the custody's fee income, and both network fees.
    await mine(2);
    const now = await matching();
    expect(now).toMatchObject({ matches: true, inFlight: 0 });
    expect(now?.holdings).toBe(before - 29_900_000n - networkFee);
    expect(lowCeilingLines.filter((l) => l.level >= 50)).toHaveLength(1);
    expect(await auditFailures(database.pool)).toEqual([]);
  });

  it('bumps a stuck batch by CPFP for all its members when the replacement is refused, each settled with its part of both fees', async () => {
    const user = await signUp('cpfp-batch');
    await node.send(await addressOf(user), '1');
    await chainJobs(custody);
    await mine(2);
    expect((await ltc(user))?.totalAvailable).toBe('1');
    const recipients = [await node.newAddress(), await node.newAddress(), await node.newAddress()];
    const ids: string[] = [];
    for (const to of recipients) {
      const sent = await withdraw(user, '0.2', to);
      expect(sent.status).toBe(200);
      ids.push(sent.body.id);
    }
    await chainJobs(batching);
    const first = await Promise.all(ids.map(row));
    const stuck = first[0]?.tx_hash ?? '';
    expect(first.every((r) => r?.state === 'BROADCAST' && r.tx_hash === stuck)).toBe(true);
    const batch = (await database.pool.query<{ batch_id: string }>('SELECT batch_id FROM withdrawals WHERE id = $1', [ids[0]])).rows[0]?.batch_id ?? '';
    const [signed] = await signedOf(batch);
    await node.rpc.call('prioritisetransaction', stuck, 0, -Number(signed?.fee));

    // RBF_AFTER_BLOCKS (2) later: the node refuses the batch's replacement; one CPFP child pays for the batch.
    await mine(1);
    await mine(1);
    const attempts = await signedOf(batch);
    expect(attempts).toEqual([
      expect.objectContaining({ attempt: 0, tx_hash: stuck, parent_tx: null, released: false }),
      expect.objectContaining({ attempt: 1, parent_tx: null, released: true }),
      expect.objectContaining({ attempt: 2, parent_tx: stuck, released: false }),
    ]);
    const child = attempts[2];
    expect((await node.rpc.call<{ depends: string[] }>('getmempoolentry', child?.tx_hash)).depends).toEqual([stuck]);
    for (const id of ids) expect(await row(id)).toMatchObject({ state: 'BROADCAST', tx_hash: stuck, replaced_tx_hashes: [] });

    await waitFor('the batch completed', async () => {
      await mine(1);
      return (await Promise.all(ids.map(row))).every((r) => r?.state === 'COMPLETED');
    }, 30_000);
    const done = await Promise.all(ids.map(row));
    expect(done.every((r) => r?.tx_hash === stuck)).toBe(true);
    expect(done.reduce((sum, r) => sum + BigInt(r?.network_fee ?? '0'), 0n)).toBe(BigInt(signed?.fee ?? '0') + BigInt(child?.fee ?? '0'));
    for (const to of recipients) expect(await node.received(to)).toBe(19_900_000n);
    expect((await ltc(user))?.totalAvailable).toBe('0.4');
    await mine(2);
    expect(await matching()).toMatchObject({ matches: true, inFlight: 0 });
    expect(await auditFailures(database.pool)).toEqual([]);
  });
});
