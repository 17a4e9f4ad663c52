import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { auditFailures, TEST_MNEMONIC, waitFor } from '../../support/custody.ts';
import type { LogLine } from '../../support/in-process.ts';
import { litecoinCustody } from '../../support/litecoin-custody.ts';
import type { Litecoind } from '../../support/litecoind.ts';
import type { Custody } from '../../../src/server/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { signTransaction } from '../../../src/server/adapters/chains/utxo/builder.ts';
import { coinsToUnits } from '../../../src/server/adapters/chains/utxo/rpc.ts';
import { deriveAddress } from '../../../src/server/domain/addresses.ts';
import { changePath, utxoProfile } from '../../../src/server/adapters/chains/utxo/networks.ts';
import { sweepToCold } from '../../../src/server/domain/custody-movements.ts';
import { unitsOf } from '../../../src/lib/money.ts';
import { unitsFromRow } from '../../../src/server/db/amounts.ts';

/**
 * Finality that follows the chain, on Litecoin Core -regtest driven as users and the worker drive it: a credited
 * deposit whose block is invalidated goes on hold (and a withdrawal of it is refused) until it is mined again; a
 * completed withdrawal whose block is invalidated is in flight again, sent again with the same bytes by a node that
 * lost it and completed once more, or failed and refunded when its input was spent elsewhere; a node that comes back
 * from a backup having lost the blocks below the scan cursor is one reorganisation with one ERROR line. After each,
 * the ledger audit and `custody balances` hold.
 */
const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');

describe('reorganisations on Litecoin Core regtest', () => {
  const logs: LogLine[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (chunk.toString().split('\n').filter((l) => l.trim()).forEach((l) => logs.push(JSON.parse(l) as LogLine)), done()) }));
  // No replacement by fee here: a withdrawal keeps its one transaction through every reorganisation.
  const lc = litecoinCustody({ env: { RBF_AFTER_BLOCKS: '1000' }, log, emailPrefix: 'ltc-reorg' });
  const { work, mine, signUp, balance, addressOf, history, withdraw, completed, matching } = lc;
  let node: Litecoind;
  let database: Database;
  let custody: Custody;

  /** Invalidates the block at `height` (and those above it), keeps `keepOut` out of the next blocks and mines `blocks` to replace them. */
  const replaceFrom = async (height: number, blocks: number, keepOut: readonly string[]) => {
    await node.rpc.call('invalidateblock', await node.rpc.call<string>('getblockhash', height));
    for (const tx of keepOut) await node.rpc.call('prioritisetransaction', tx, 0, -100_000_000);
    await node.mine(blocks);
  };
  const withdrawal = async (id: string) =>
    (
      await database.pool.query<{ state: string; tx_hash: string; raw_tx: string; reopened: number; block_height: string | null; network_fee: string | null }>(
        'SELECT state, tx_hash, raw_tx, reopened, block_height, network_fee FROM withdrawals WHERE id = $1',
        [id],
      )
    ).rows[0];
  const deposit = async (tx: string) => (await database.pool.query<{ state: string; confirmations: number }>('SELECT state, confirmations FROM chain_deposits WHERE tx_hash = $1', [tx])).rows;
  /** A user holding `amount` LTC, credited from the node's wallet; the deposit's transaction and block. */
  const funded = async (name: string, amount: string) => {
    const user = await signUp(name);
    const tx = await node.send(await addressOf(user), amount);
    await work();
    const height = await node.mine(1);
    await mine(1);
    await work();
    expect(await balance(user)).toEqual({ available: amount, onHold: '0' });
    return { user, tx, height };
  };
  /** A recipient outside the node's wallet: a wallet sends its own transactions again when it starts, an outsider's node would not. */
  let outsiders = 0;
  const outsideAddress = () => deriveAddress(OUTSIDE_SEED, 'LITECOIN', outsiders++, 'regtest');
  /** Litoshi a transaction paid `address`, once it is mined on the best chain (0 before, or off it). */
  const paid = async (txHash: string, address: string) => {
    const tx = await node.rpc.call<{ confirmations?: number; vout: { value: string; scriptPubKey: { address?: string; addresses?: string[] } }[] }>('getrawtransaction', txHash, true);
    if (!tx.confirmations || tx.confirmations < 1) return 0n;
    return tx.vout.filter((o) => (o.scriptPubKey.address ?? o.scriptPubKey.addresses?.[0]) === address).reduce((sum, o) => sum + coinsToUnits(o.value), 0n);
  };

  beforeAll(async () => {
    ({ node, database, custody } = await lc.start());
  }, 120_000);
  afterAll(() => lc.close());

  it('puts a credited deposit whose block was invalidated on hold, refuses a withdrawal of it, and makes it available again once mined', async () => {
    const { user, tx, height } = await funded('deposit', '0.8');
    const to = await node.newAddress();
    // Its block (and the one above) replaced by two without it: the transaction is back in the mempool at 0 confirmations.
    await replaceFrom(height, 2, [tx]);
    await work();
    expect(await deposit(tx)).toEqual([{ state: 'HELD', confirmations: 0 }]);
    expect(await balance(user)).toEqual({ available: '0', onHold: '0.8' });
    expect((await history(user)).find((item) => item.hash === tx)).toMatchObject({ state: 'IN_PROGRESS' });
    const refused = await withdraw(user, '0.5', to);
    expect(refused).toMatchObject({ status: 400, body: { exceptionCode: 'WITHDRAWAL_NOT_ENOUGH_FUNDS' } });
    // `custody balances` tells the difference (the held deposit, which the node's confirmed outputs do not hold) as in flight.
    const held = await matching();
    expect(held).toMatchObject({ matches: false, inFlight: 1 });
    expect((held?.position ?? 0n) - (held?.holdings ?? 0n)).toBe(80_000_000n);

    // Mined again: on hold at one confirmation, available at two.
    await node.rpc.call('prioritisetransaction', tx, 0, 100_000_000);
    await mine(1);
    expect(await deposit(tx)).toEqual([{ state: 'HELD', confirmations: 1 }]);
    await mine(1);
    expect(await deposit(tx)).toEqual([{ state: 'CREDITED', confirmations: 2 }]);
    expect(await balance(user)).toEqual({ available: '0.8', onHold: '0' });
    expect((await history(user)).find((item) => item.hash === tx)).toMatchObject({ state: 'COMPLETED' });
    expect((await withdraw(user, '0.5', to)).status).toBe(200);
    await work();
    expect(await auditFailures(database.pool)).toEqual([]);
    expect(await matching()).toMatchObject({ matches: true, inFlight: 1 });
  });

  it('puts a completed withdrawal whose block was invalidated in flight again, sends the same bytes to a node that lost it, and completes it once mined', async () => {
    const { user } = await funded('withdrawal', '1');
    const to = await outsideAddress();
    const sent = await withdraw(user, '0.3', to);
    await work();
    await completed(sent.body.id);
    const done = await withdrawal(sent.body.id);
    expect(done).toMatchObject({ state: 'COMPLETED', block_height: expect.any(String), reopened: 0 });
    expect(await balance(user)).toEqual({ available: '0.7', onHold: '0' });

    await replaceFrom(Number(done?.block_height), 3, [done?.tx_hash ?? '']);
    await work();
    expect(await withdrawal(sent.body.id)).toMatchObject({ state: 'BROADCAST', tx_hash: done?.tx_hash, raw_tx: done?.raw_tx, reopened: 1, network_fee: null });
    expect(await balance(user)).toEqual({ available: '0.7', onHold: '0.3' });
    expect((await history(user)).find((item) => item.hash === done?.tx_hash)).toMatchObject({ state: 'IN_PROGRESS' });
    expect(await paid(done?.tx_hash ?? '', to)).toBe(0n);
    expect(await matching()).toMatchObject({ matches: true, inFlight: 1 });

    // The node restarts without its mempool: it has lost the transaction, whose input is unspent; the worker sends it again.
    await node.halt();
    await rm(join(node.datadir, 'regtest', 'mempool.dat'), { force: true });
    await node.restart();
    await expect(node.rpc.call('getmempoolentry', done?.tx_hash)).rejects.toThrow();
    await work();
    expect(await node.rpc.call('getmempoolentry', done?.tx_hash)).toBeTruthy();
    await completed(sent.body.id);
    expect(await withdrawal(sent.body.id)).toMatchObject({ state: 'COMPLETED', tx_hash: done?.tx_hash, reopened: 1, network_fee: done?.network_fee });
    expect(await paid(done?.tx_hash ?? '', to)).toBe(29_900_000n);
    expect(await balance(user)).toEqual({ available: '0.7', onHold: '0' });
    expect((await history(user)).find((item) => item.hash === done?.tx_hash)).toMatchObject({ state: 'COMPLETED' });
    const keys = await database.pool.query<{ key: string }>(`SELECT idempotency_key AS key FROM ledger_entries WHERE reference = $1 ORDER BY id`, [`withdrawal:${sent.body.id}`]);
    expect(keys.rows.map((r) => r.key.replace(sent.body.id, 'ID'))).toEqual([
      'withdrawal:hold:ID',
      'withdrawal:settle:ID',
      'withdrawal:networkFee:ID',
      'withdrawal:reopen:ID#1',
      'withdrawal:settle:ID#1',
      'withdrawal:networkFee:ID#1',
    ]);
    expect(await auditFailures(database.pool)).toEqual([]);
    expect(await matching()).toMatchObject({ matches: true, inFlight: 0 });
  });

  it('takes a node that came back from a backup without the blocks below the scan cursor as one reorganisation: one ERROR, its deposits unwound, no failing job', async () => {
    const backup = await mkdtemp(join(tmpdir(), 'litecoind-backup-'));
    await node.halt();
    await cp(join(node.datadir, 'regtest'), join(backup, 'regtest'), { recursive: true });
    await node.restart();
    const { user, tx } = await funded('lost', '0.6');
    await mine(3);
    const errorsBefore = logs.filter((line) => line.level >= 50).length;

    await node.halt();
    await rm(join(node.datadir, 'regtest'), { recursive: true, force: true });
    await cp(join(backup, 'regtest'), join(node.datadir, 'regtest'), { recursive: true });
    await node.restart();
    for (let i = 0; i < 4; i++) await work();
    const errors = logs.filter((line) => line.level >= 50).slice(errorsBefore);
    expect(errors).toEqual([expect.objectContaining({ msg: 'the node lost blocks below the scan cursor: handled as a reorganisation of that depth', lostBlocks: 5 })]);
    expect(await deposit(tx)).toEqual([expect.objectContaining({ state: 'REVERSED' })]);
    expect(await balance(user)).toEqual({ available: '0', onHold: '0' });
    await mine(2);
    expect(logs.filter((line) => line.level >= 50).slice(errorsBefore)).toHaveLength(1);
    expect(await auditFailures(database.pool)).toEqual([]);
    expect(await matching()).toMatchObject({ matches: true, inFlight: 0 });
    await rm(backup, { recursive: true, force: true });
  });

  it('puts a completed cold sweep whose block was invalidated in flight again, its booking taken back, and books it again once mined', async () => {
    const cold = await outsideAddress();
    const movement = await sweepToCold(database.pool, { chain: custody.chain, addresses: custody.addresses }, { currency: 'LTC', address: cold, amount: '0.1' });
    const state = async () => (await database.pool.query<{ state: string; reopened: number }>('SELECT state, reopened FROM custody_movements WHERE id = $1', [movement.id])).rows[0];
    await waitFor('the cold sweep booked', async () => {
      await mine(1);
      return (await state())?.state === 'COMPLETED';
    });
    const booked = await matching();
    expect(booked).toMatchObject({ matches: true, cold: 10_000_000n });
    const txHash = movement.txHash ?? expect.fail('the sweep was signed');
    const mined = await node.rpc.call<{ blockhash: string }>('getrawtransaction', txHash, true);
    const { height } = await node.rpc.call<{ height: number }>('getblockheader', mined.blockhash);

    await replaceFrom(height, 4, [txHash]);
    await work();
    expect(await state()).toEqual({ state: 'BROADCAST', reopened: 1 });
    expect(await matching()).toMatchObject({ matches: true, cold: 0n, inFlight: 1 });
    expect(logs.some((line) => line.msg.startsWith('a completed cold sweep’s transaction left the chain'))).toBe(true);

    await node.rpc.call('prioritisetransaction', txHash, 0, 100_000_000);
    await waitFor('the cold sweep booked again', async () => {
      await mine(1);
      return (await state())?.state === 'COMPLETED';
    });
    expect(await paid(txHash, cold)).toBe(10_000_000n);
    expect(await matching()).toMatchObject({ matches: true, cold: 10_000_000n, position: booked?.position });
    const keys = await database.pool.query<{ key: string }>(`SELECT idempotency_key AS key FROM ledger_entries WHERE reference = $1 ORDER BY id`, [`custody-movement:${movement.id}`]);
    expect(keys.rows.map((r) => r.key.replace(movement.id, 'ID'))).toEqual([
      'cold-sweep:ID',
      'cold-sweep:network-fee:ID',
      'cold-sweep:reopen:ID#1',
      'cold-sweep:ID#1',
      'cold-sweep:network-fee:ID#1',
    ]);
    expect(await auditFailures(database.pool)).toEqual([]);
  });

  it('fails and refunds a completed withdrawal whose block was invalidated once its input is spent elsewhere', async () => {
    const { user } = await funded('double-spent', '1');
    const to = await outsideAddress();
    const sent = await withdraw(user, '0.4', to);
    await work();
    await completed(sent.body.id);
    const done = await withdrawal(sent.body.id);
    await node.rpc.call('invalidateblock', await node.rpc.call<string>('getblockhash', Number(done?.block_height)));
    // The node loses the withdrawal (restarted without its mempool) and a transaction of the custody's key spends its input.
    await node.halt();
    await rm(join(node.datadir, 'regtest', 'mempool.dat'), { force: true });
    await node.restart();
    const inputs = await database.pool.query<{ tx_hash: string; vout: number; amount: string; key_chain: number; key_index: number }>(
      'SELECT tx_hash, vout, amount::text, key_chain, key_index FROM utxo_outputs WHERE reserved_by = $1',
      [sent.body.id],
    );
    expect(inputs.rows.length).toBeGreaterThan(0);
    const master = HDKey.fromMasterSeed(mnemonicToSeedSync(TEST_MNEMONIC));
    const coins = inputs.rows.map((input) => {
      const external = custody.addresses.path('LITECOIN', input.key_index);
      const key = master.derive(input.key_chain === 0 ? external : changePath(custody.addresses.path('LITECOIN', 0), input.key_index));
      return { txHash: input.tx_hash, vout: input.vout, amount: unitsFromRow(input.amount), keyChain: input.key_chain, keyIndex: input.key_index, privateKey: key.privateKey as Uint8Array, publicKey: key.publicKey as Uint8Array };
    });
    const total = coins.reduce((sum, coin) => sum + coin.amount, 0n);
    const conflictFee = 10_000n;
    const profile = utxoProfile('LITECOIN', 'regtest', custody.addresses.utxoParams('LITECOIN'));
    const conflict = signTransaction(profile, coins, [{ address: await custody.chain.hotWalletAddress('LITECOIN'), amount: unitsOf(total - conflictFee) }]);
    await node.rpc.call('sendrawtransaction', conflict.rawTx);
    await node.mine(3);
    await work();
    await work();
    expect(await withdrawal(sent.body.id)).toMatchObject({ state: 'FAILED', reopened: 1 });
    expect(await balance(user)).toEqual({ available: '1', onHold: '0' });
    expect((await history(user)).find((item) => item.transactionType !== 'DEPOSIT')).toMatchObject({ state: 'FAILED' });
    expect(await paid(done?.tx_hash ?? '', to)).toBe(0n);
    const spent = await database.pool.query('SELECT DISTINCT spent_tx FROM utxo_outputs WHERE reserved_by = $1', [sent.body.id]);
    expect(spent.rows).toEqual([{ spent_tx: conflict.txHash }]);
    expect(await auditFailures(database.pool)).toEqual([]);
    // The ledger knows nothing of the conflicting transaction's fee (no withdrawal paid it): the only difference.
    const now = await matching();
    expect(now?.position !== undefined && now.holdings !== undefined && now.position - now.holdings).toBe(conflictFee);
  });
});
