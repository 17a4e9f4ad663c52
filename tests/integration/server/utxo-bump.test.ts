import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { hex } from '@scure/base';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { Transaction } from '@scure/btc-signer';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { quietLog, TEST_MNEMONIC } from '../../support/custody.ts';
import { applyMigrations } from '../../../src/server/db/database.ts';
import { chainAddressing } from '../../../src/server/domain/addresses.ts';
import { FeeBumpBlockedError, transferKey, type FeeEstimate } from '../../../src/server/adapters/chains/port.ts';
import { bumpFee } from '../../../src/server/adapters/chains/utxo/bump.ts';
import { utxoProfile } from '../../../src/server/adapters/chains/utxo/networks.ts';
import { transferStatus } from '../../../src/server/adapters/chains/utxo/reader.ts';
import { RpcError, type Rpc } from '../../../src/server/adapters/chains/utxo/rpc.ts';
import { changeAddress, signOrder, type WalletContext } from '../../../src/server/adapters/chains/utxo/wallet.ts';
import { unitsOf } from '../../../src/lib/money.ts';

/**
 * bump.ts and the status of CPFP children against a scripted Litecoin node (mempool, mined transactions, refusals set
 * per test) and a real database: the paths a live regtest node does not reach on its own (a worker killed between
 * steps, evictions, peers mining what this node forgot).
 */
type Refusal = { code: number; message: string };
class ScriptedNode {
  tip = 110;
  mempool = new Map<string, number>();
  mined = new Set<string>();
  /** Feerate estimate in LTC/kvB, or none. */
  estimate: string | undefined;
  refuse: (txid: string, tx: Transaction) => Refusal | undefined = () => undefined;
  sent: string[] = [];

  handle(method: string, params: unknown[]): unknown {
    const txid = String(params[0]);
    switch (method) {
      case 'getblockcount':
        return this.tip;
      case 'estimatesmartfee':
        return this.estimate ? { feerate: this.estimate, blocks: 6 } : { errors: ['Insufficient data or no feerate found'], blocks: 0 };
      case 'getnetworkinfo':
        return { version: 210201, relayfee: '0.00001000', incrementalfee: '0.00001000' };
      case 'getmempoolinfo':
        return { mempoolminfee: '0.00001000' };
      case 'getrawtransaction':
        if (this.mined.has(txid)) return { txid, blockhash: `block-${txid}` };
        if (this.mempool.has(txid)) return { txid };
        throw new RpcError(method, -5, 'No such mempool or blockchain transaction');
      case 'getblockheader':
        return { height: this.tip - 2, confirmations: 3 };
      case 'getmempoolentry': {
        const height = this.mempool.get(txid);
        if (height === undefined) throw new RpcError(method, -5, 'Transaction not in mempool');
        return { height };
      }
      case 'sendrawtransaction': {
        const tx = Transaction.fromRaw(hex.decode(txid), { allowUnknownOutputs: true });
        const id = tx.id;
        this.sent.push(id);
        if (this.mempool.has(id)) return id;
        const refusal = this.refuse(id, tx);
        if (refusal) throw new RpcError(method, refusal.code, refusal.message);
        this.mempool.set(id, this.tip);
        return id;
      }
      default:
        throw new Error(`unexpected ${method}`);
    }
  }

  rpc(): Rpc {
    const call = async <T>(method: string, ...params: unknown[]) => this.handle(method, params) as T;
    return {
      call,
      batch: async <T>(calls: readonly { method: string; params?: unknown[] }[]) =>
        calls.map((c) => {
          try {
            return this.handle(c.method, c.params ?? []) as T;
          } catch (error) {
            if (error instanceof RpcError) return error;
            throw error;
          }
        }),
    };
  }
}

const CONFLICT: Refusal = { code: -26, message: 'txn-mempool-conflict' };
const MIN_FEE: Refusal = { code: -26, message: 'mempool min fee not met, 1000 < 5000' };
const MISSING: Refusal = { code: -25, message: 'bad-txns-inputs-missingorspent' };

describe('utxo fee bumps against a scripted node', () => {
  let testDatabase: TestDatabase;
  let pool: pg.Pool;
  let node: ScriptedNode;
  let ctx: WalletContext;
  const master = HDKey.fromMasterSeed(mnemonicToSeedSync(TEST_MNEMONIC));
  const addressing = chainAddressing('regtest');
  const fee: FeeEstimate = { network: 'LITECOIN', currency: 'LTC', amount: unitsOf(1000n), rate: 5n };

  const rows = async (reference: string) =>
    (
      await pool.query<{ attempt: number; tx_hash: string; fee: string; fee_rate: string; change_index: number | null; parent_tx: string | null; released: boolean; accepted: boolean }>(
        `SELECT attempt, tx_hash, fee::text, fee_rate::text, change_index, parent_tx, released_at IS NOT NULL AS released, accepted_at IS NOT NULL AS accepted
           FROM utxo_transactions WHERE reference = $1 ORDER BY attempt`,
        [reference],
      )
    ).rows;
  /** A withdrawal of 0.3 LTC signed and in the node's mempool (fee rate 5/vB), from a fresh 1 LTC output. */
  const withdrawal = async () => {
    const funding = hex.encode(randomBytes(32));
    await pool.query(
      `INSERT INTO utxo_outputs (network, tx_hash, vout, address, amount, key_chain, key_index, block_height, block_hash) VALUES ('LITECOIN', $1, 0, $2, 100000000, 1, 0, 1, 'b1')`,
      [funding, changeAddress(ctx, 0)],
    );
    const reference = randomUUID();
    const toAddress = changeAddress(ctx, 9999);
    const signed = await signOrder(ctx, { reference, toAddress, amount: unitsOf(30_000_000n) });
    node.mempool.set(signed.txHash, node.tip);
    // The order as the worker hands it: a replacement must pay what it pays (bump.ts payingAsSealed).
    return { reference, signed, bump: () => bumpFee(ctx, { order: { reference, network: 'LITECOIN', currency: 'LTC', toAddress, amount: unitsOf(30_000_000n) }, signed, fee }, fee) };
  };

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    pool = new pg.Pool({ connectionString: testDatabase.url });
    pool.on('error', () => undefined);
    await applyMigrations(pool, quietLog);
  });
  afterAll(async () => {
    await pool?.end();
    await testDatabase?.drop();
  });
  beforeEach(() => {
    node = new ScriptedNode();
    ctx = {
      pool,
      rpc: node.rpc(),
      network: 'LITECOIN',
      profile: utxoProfile('LITECOIN', 'regtest', addressing.utxoParams('LITECOIN')),
      path: (index) => addressing.path('LITECOIN', index),
      master,
      fallbackRate: 5n,
      maxFeeRate: 50n,
      rbfAfterBlocks: 2,
      confirmations: 2,
    };
  });

  it('hands back a replacement the node took and mined though the caller never recorded it, even one marked released', async () => {
    const w = await withdrawal();
    const replacement = await w.bump();
    expect(replacement.txHash).not.toBe(w.signed.txHash);
    // The worker died before recording it (an earlier version then marked it released on a -25); it was mined and
    // its outputs spent: sending it again or the stuck one answers inputs missing.
    await pool.query('UPDATE utxo_transactions SET released_at = now(), accepted_at = NULL WHERE tx_hash = $1', [replacement.txHash]);
    node.mempool.clear();
    node.mined.add(replacement.txHash);
    node.refuse = () => MISSING;
    node.tip += 3;
    expect((await w.bump()).txHash).toBe(replacement.txHash);
    expect((await rows(w.reference))[1]).toMatchObject({ tx_hash: replacement.txHash, released: false, accepted: true });
  });

  it('never releases a child the node took: no second child of the same change, and its fee counts once mined from peers', async () => {
    const w = await withdrawal();
    const original = w.signed.txHash;
    // The replacement is refused (a conflict); the child is taken.
    let refusedReplacement = true;
    node.refuse = () => {
      if (refusedReplacement) {
        refusedReplacement = false;
        return CONFLICT;
      }
      return undefined;
    };
    expect((await w.bump()).txHash).toBe(original);
    const [, , child] = await rows(w.reference);
    expect(child).toMatchObject({ parent_tx: original, released: false, accepted: true });
    // The node evicts the child (its mempool minimum rose) and will not take it back yet.
    node.mempool.delete(child?.tx_hash ?? '');
    node.refuse = () => MIN_FEE;
    node.tip += 3;
    expect((await w.bump()).txHash).toBe(original);
    const after = await rows(w.reference);
    expect(after.filter((r) => r.parent_tx !== null)).toEqual([expect.objectContaining({ tx_hash: child?.tx_hash, released: false })]);
    // Peers mined both: the child's fee is the withdrawal's too.
    node.mined.add(original);
    node.mined.add(child?.tx_hash ?? '');
    const status = (await transferStatus(pool, ctx.rpc, 'LITECOIN', [{ txHash: original, outputIndex: 0 }])).get(transferKey({ txHash: original, outputIndex: 0 }));
    expect(status).toMatchObject({ state: 'SEEN', confirmations: 3, fee: BigInt(after[0]?.fee ?? '0') + BigInt(child?.fee ?? '0') });
  });

  it('counts a child the node has mined even when it was marked released', async () => {
    const w = await withdrawal();
    let first = true;
    node.refuse = () => (first ? ((first = false), CONFLICT) : undefined);
    await w.bump();
    const child = (await rows(w.reference))[2];
    await pool.query('UPDATE utxo_transactions SET released_at = now(), accepted_at = NULL WHERE tx_hash = $1', [child?.tx_hash]);
    node.mined.add(w.signed.txHash);
    node.mined.add(child?.tx_hash ?? '');
    const status = (await transferStatus(pool, ctx.rpc, 'LITECOIN', [{ txHash: w.signed.txHash, outputIndex: 0 }])).get(`${w.signed.txHash}:0`);
    const first0 = (await rows(w.reference))[0];
    expect(status).toMatchObject({ fee: BigInt(first0?.fee ?? '0') + BigInt(child?.fee ?? '0') });
    expect((await rows(w.reference))[2]).toMatchObject({ released: false, accepted: true });
  });

  it('replaces a stuck transaction the node evicted for its fee', async () => {
    const w = await withdrawal();
    node.mempool.clear();
    node.refuse = (id) => (id === w.signed.txHash ? MIN_FEE : undefined);
    const replaced = await w.bump();
    expect(replaced.txHash).not.toBe(w.signed.txHash);
    expect(node.mempool.has(replaced.txHash)).toBe(true);
  });

  it('caps a bump at MAX_FEE_RATE when the estimate is above it, instead of blocking it', async () => {
    const w = await withdrawal();
    node.estimate = '0.01000000'; // 1000 litoshi/vB, above the ceiling of 50
    const replaced = await w.bump();
    expect(replaced.txHash).not.toBe(w.signed.txHash);
    const [, replacement] = await rows(w.reference);
    expect(BigInt(replacement?.fee_rate ?? '0')).toBeGreaterThan(5n);
    expect(BigInt(replacement?.fee_rate ?? '0')).toBeLessThanOrEqual(50n);
  });

  it('still blocks what needs more than MAX_FEE_RATE', async () => {
    const w = await withdrawal();
    ctx.maxFeeRate = 5n;
    await expect(w.bump()).rejects.toBeInstanceOf(FeeBumpBlockedError);
    expect(await rows(w.reference)).toHaveLength(1);
  });

  it('backs off a refused child, reuses its change index, and caps the child at MAX_FEE_RATE', async () => {
    const w = await withdrawal();
    node.estimate = '0.01000000';
    // Every replacement conflicts, every child is under the mempool's minimum.
    node.refuse = (id, tx) => (id === w.signed.txHash ? undefined : hex.encode(tx.getInput(0).txid ?? new Uint8Array()) === w.signed.txHash ? MIN_FEE : CONFLICT);
    const indexes = async () => (await pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM utxo_change_addresses WHERE network = 'LITECOIN'`)).rows[0]?.n;
    // A refusal is not an error (the worker moves its broadcast height on and waits the blocks again).
    expect((await w.bump()).txHash).toBe(w.signed.txHash);
    const used = await indexes();
    // The same child again when nothing changed; another at a lower ceiling, to the same change address.
    node.tip += 3;
    expect((await w.bump()).txHash).toBe(w.signed.txHash);
    expect((await rows(w.reference)).filter((r) => r.parent_tx !== null)).toHaveLength(1);
    ctx.maxFeeRate = 40n;
    node.tip += 3;
    expect((await w.bump()).txHash).toBe(w.signed.txHash);
    expect(await indexes()).toBe(used);
    const kids = (await rows(w.reference)).filter((r) => r.parent_tx !== null);
    expect(kids).toHaveLength(2);
    expect(kids.every((k) => k.released && !k.accepted)).toBe(true);
    expect(kids[1]?.change_index).toBe(kids[0]?.change_index);
    for (const k of kids) expect(BigInt(k.fee_rate)).toBeLessThanOrEqual(50n);
  });

  it('releases a child never sent once its parent is mined, frees the change, and never sends it', async () => {
    const w = await withdrawal();
    let first = true;
    node.refuse = () => (first ? ((first = false), CONFLICT) : undefined);
    await w.bump();
    const child = (await rows(w.reference))[2];
    // As if the worker died between storing the child and sending it.
    node.mempool.delete(child?.tx_hash ?? '');
    await pool.query('UPDATE utxo_transactions SET accepted_at = NULL WHERE tx_hash = $1', [child?.tx_hash]);
    node.mined.add(w.signed.txHash);
    // The parent's change, mined and read into the index, reserved by the child.
    const changeVout = 1;
    await pool.query(
      `INSERT INTO utxo_outputs (network, tx_hash, vout, address, amount, key_chain, key_index, block_height, block_hash, reserved_by) VALUES ('LITECOIN', $1, $2, 'x', 1, 1, 1, 108, 'b108', $3)`,
      [w.signed.txHash, changeVout, w.reference],
    );
    await pool.query(`UPDATE utxo_transactions SET inputs = ARRAY[$2] WHERE tx_hash = $1`, [child?.tx_hash, `${w.signed.txHash}:${changeVout}`]);
    node.sent = [];
    const status = (await transferStatus(pool, ctx.rpc, 'LITECOIN', [{ txHash: w.signed.txHash, outputIndex: 0 }])).get(`${w.signed.txHash}:0`);
    expect(status).toMatchObject({ state: 'SEEN', confirmations: 3, fee: BigInt((await rows(w.reference))[0]?.fee ?? '0') });
    expect(node.sent).not.toContain(child?.tx_hash);
    expect((await rows(w.reference))[2]).toMatchObject({ released: true });
    const change = await pool.query('SELECT reserved_by FROM utxo_outputs WHERE tx_hash = $1 AND vout = $2', [w.signed.txHash, changeVout]);
    expect(change.rows[0]?.reserved_by).toBeNull();
  });
});
