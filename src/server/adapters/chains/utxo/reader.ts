/**
 * Reading the chain: blocks (getblock verbosity 2; Dogecoin Core 1.14: verbose `true` and each transaction by hash)
 * recorded into the custody's output index and turned into transfers to deposit addresses, the mempool's transfers
 * to them (Pending), and the status of transactions by hash (the node's -txindex answers for any transaction).
 */
import type pg from 'pg';
import type { Network } from '../../../../lib/currencies.ts';
import type { BlockSource } from '../block-scan.ts';
import { transferKey, type ChainTransfer, type TransferRef, type TransferStatus } from '../port.ts';
import type { UtxoProfile } from './networks.ts';
import { cpfpChildren, freeInputs, laterAttempts, markAccepted, ownedAddresses, recordBlock, releaseBump, signedByHash, type BlockOutput, type BlockSpend } from './outputs.ts';
import { coinsToUnits, RpcError, type Rpc } from './rpc.ts';
import { unitsOf, type Units } from '../../../../lib/money.ts';

type RawOutput = { value?: string; n: number; scriptPubKey?: { address?: string; addresses?: string[] } };
type RawTx = { txid: string; vin: { txid?: string; vout?: number; coinbase?: string }[]; vout: RawOutput[]; blockhash?: string; confirmations?: number };
type RawBlock = { hash: string; height: number; tx: RawTx[] };

/** RPC_INVALID_ADDRESS_OR_KEY: no such transaction (or block). */
const NOT_FOUND = -5;
/** RPC_VERIFY_ERROR: sendrawtransaction's answer when an input is missing or already spent. */
const INPUTS_MISSING_OR_SPENT = -25;

function outputsOf(tx: RawTx): BlockOutput[] {
  const found: BlockOutput[] = [];
  for (const out of tx.vout) {
    // Bitcoin Core 22+ writes `address`; older nodes (Litecoin 0.21, Dogecoin 1.14) a list of one.
    const address = out.scriptPubKey?.address ?? (out.scriptPubKey?.addresses?.length === 1 ? out.scriptPubKey.addresses[0] : undefined);
    if (address === undefined || out.value === undefined) continue;
    found.push({ txHash: tx.txid, vout: out.n, address, amount: coinsToUnits(out.value) });
  }
  return found;
}

function toTransfer(network: Network, profile: UtxoProfile, output: BlockOutput, blockHeight: number | null): ChainTransfer {
  return { network, txHash: output.txHash, outputIndex: output.vout, currency: profile.coin, fromAddress: null, toAddress: output.address, amount: output.amount, blockHeight };
}

export function blockSource(pool: pg.Pool, rpc: Rpc, network: Network, profile: UtxoProfile, mempoolSeen: Map<string, ChainTransfer[]>): BlockSource {
  return {
    tipHeight: () => rpc.call<number>('getblockcount'),
    async hashAt(height) {
      try {
        return await rpc.call<string>('getblockhash', height);
      } catch (error) {
        // -8: height out of range (above the tip).
        if (error instanceof RpcError && (error.code === -8 || error.code === NOT_FOUND)) return undefined;
        throw error;
      }
    },
    async blockAt(height) {
      const hash = await rpc.call<string>('getblockhash', height);
      const block = await readBlock(rpc, hash, profile);
      const outputs = block.tx.flatMap(outputsOf);
      const spends: BlockSpend[] = block.tx.flatMap((tx) =>
        tx.vin.flatMap((input) => (input.txid !== undefined && input.vout !== undefined ? [{ txHash: input.txid, vout: input.vout, spentBy: tx.txid }] : [])),
      );
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const owners = await ownedAddresses(client, network, outputs.map((o) => o.address));
        const owned = outputs.flatMap((o) => {
          const key = owners.get(o.address);
          return key ? [{ ...o, ...key }] : [];
        });
        await recordBlock(client, network, { height: block.height, hash: block.hash }, owned, spends);
        await client.query('COMMIT');
        // Deposits are what pays a deposit address (chain 0); change coming back is the custody's own.
        const transfers = owned.filter((o) => o.keyChain === 0).map((o) => toTransfer(network, profile, o, block.height));
        return { block: { height: block.height, hash: block.hash }, transfers };
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async mempool() {
      const ids = await rpc.call<string[]>('getrawmempool');
      const current = new Set(ids);
      for (const id of mempoolSeen.keys()) if (!current.has(id)) mempoolSeen.delete(id);
      const unseen = ids.filter((id) => !mempoolSeen.has(id));
      for (let i = 0; i < unseen.length; i += 200) {
        const answers = await rpc.batch<RawTx>(unseen.slice(i, i + 200).map((id) => ({ method: 'getrawtransaction', params: [id, true] })));
        const txs = answers.filter((a): a is RawTx => !(a instanceof RpcError));
        const outputs = txs.flatMap(outputsOf);
        const owners = await ownedAddresses(pool, network, outputs.map((o) => o.address));
        for (const tx of txs) {
          mempoolSeen.set(tx.txid, outputsOf(tx).filter((o) => owners.get(o.address)?.keyChain === 0).map((o) => toTransfer(network, profile, o, null)));
        }
      }
      return [...mempoolSeen.values()].flat();
    },
  };
}

/**
 * A block with its transactions: `getblock` verbosity 2 (Bitcoin Core 0.15+, Litecoin Core). Dogecoin Core 1.14
 * before 1.14.7 takes only a boolean (an integer is "JSON value is not a boolean as expected") and gives
 * transaction ids with `true`; they are then read by hash (-txindex, required anyway), in batches, rather than
 * decoding `getblock <hash> false`, whose merged-mining (AuxPoW) header @scure/btc-signer does not parse.
 */
export async function readBlock(rpc: Rpc, hash: string, profile: Pick<UtxoProfile, 'booleanGetblock'> = { booleanGetblock: false }): Promise<RawBlock> {
  let block: { hash: string; height: number; tx: (RawTx | string)[] };
  if (profile.booleanGetblock) block = await rpc.call('getblock', hash, true);
  else {
    try {
      block = await rpc.call('getblock', hash, 2);
    } catch (error) {
      // A node older than verbosity levels (Bitcoin Core before 0.15) answers a type error: its boolean then.
      if (!(error instanceof RpcError) || error.code === NOT_FOUND) throw error;
      block = await rpc.call('getblock', hash, true);
    }
  }
  const ids = block.tx.filter((tx): tx is string => typeof tx === 'string');
  if (ids.length === 0) return block as RawBlock;
  const txs: RawTx[] = [];
  for (let i = 0; i < ids.length; i += 200) {
    for (const answer of await rpc.batch<RawTx>(ids.slice(i, i + 200).map((id) => ({ method: 'getrawtransaction', params: [id, true] })))) {
      if (answer instanceof RpcError) throw answer;
      txs.push(answer);
    }
  }
  return { hash: block.hash, height: block.height, tx: txs };
}

/**
 * Where each transaction stands: mined on the best chain (confirmations from its block's header), in the mempool
 * (0), or DROPPED when neither has it (or its block left the chain and it did not come back to the mempool) — for a
 * transaction of the custody's own, only once its inputs are gone (see below). Our own carry the fee they pay.
 */
export async function transferStatus(pool: pg.Pool, rpc: Rpc, network: Network, refs: readonly TransferRef[]): Promise<Map<string, TransferStatus>> {
  const hashes = [...new Set(refs.map((r) => r.txHash))];
  const answers = await rpc.batch<RawTx>(hashes.map((h) => ({ method: 'getrawtransaction', params: [h, true] })));
  const byHash = new Map<string, TransferStatus>();
  const mined: { hash: string; blockhash: string }[] = [];
  hashes.forEach((hash, i) => {
    const answer = answers[i];
    if (answer instanceof RpcError) {
      if (answer.code !== NOT_FOUND) throw answer;
      byHash.set(hash, { state: 'DROPPED' });
    } else if (answer?.blockhash) mined.push({ hash, blockhash: answer.blockhash });
    else byHash.set(hash, { state: 'SEEN', blockHeight: null, confirmations: 0 });
  });
  const headers = await rpc.batch<{ height: number; confirmations: number }>(mined.map((m) => ({ method: 'getblockheader', params: [m.blockhash] })));
  const orphaned: string[] = [];
  mined.forEach((m, i) => {
    const header = headers[i];
    // A block the node no longer has (it came back with a shorter chain while its index still names it): not on the best chain.
    if (header instanceof RpcError && header.code !== NOT_FOUND) throw header;
    if (header instanceof RpcError) orphaned.push(m.hash);
    // -1: the block is no longer on the best chain.
    else if (header && header.confirmations > 0) byHash.set(m.hash, { state: 'SEEN', blockHeight: header.height, confirmations: header.confirmations });
    else orphaned.push(m.hash);
  });
  const inMempool = await rpc.batch<unknown>(orphaned.map((h) => ({ method: 'getmempoolentry', params: [h] })));
  orphaned.forEach((hash, i) => byHash.set(hash, inMempool[i] instanceof RpcError ? { state: 'DROPPED' } : { state: 'SEEN', blockHeight: null, confirmations: 0 }));
  const ours = await signedByHash(pool, network, hashes);
  // A transaction of our own that this node has lost (a restart without its mempool, an eviction, another node)
  // may still be in other nodes' mempools and be mined: its inputs stay reserved and its signature valid, so it is
  // never given up while they are unspent. It is sent again; only the node's answer that its inputs are missing or
  // spent (by a replacement of ours, or a reorganisation) makes it DROPPED. Any other refusal (a fee below the
  // node's minimum) leaves it waiting for the replacement step.
  for (const [hash, own] of ours) {
    if (byHash.get(hash)?.state !== 'DROPPED') continue;
    if (!(await sentAgain(rpc, own.rawTx)) && !(await replacedUnrecorded(pool, rpc, own, hashes))) continue;
    byHash.set(hash, { state: 'SEEN', blockHeight: null, confirmations: 0 });
  }
  const bumped = await withChildren(pool, rpc, network, byHash, ours);
  const statuses = new Map<string, TransferStatus>();
  for (const ref of refs) {
    const status = bumped.get(ref.txHash) ?? byHash.get(ref.txHash) ?? { state: 'DROPPED' };
    const fee = ours.get(ref.txHash)?.fee;
    statuses.set(transferKey(ref), status.state === 'SEEN' && status.blockHeight !== null && fee !== undefined && status.fee === undefined ? { ...status, fee } : status);
  }
  return statuses;
}

/** Sends a transaction of ours again: false only when the node says its inputs are missing or spent. */
async function sentAgain(rpc: Rpc, rawTx: string): Promise<boolean> {
  try {
    await rpc.call('sendrawtransaction', rawTx);
    return true;
  } catch (error) {
    if (!(error instanceof RpcError)) throw error;
    return error.code !== INPUTS_MISSING_OR_SPENT;
  }
}

/**
 * Whether `own`'s inputs went to a replacement of the same reference that the node knows and the caller did not ask
 * about: a worker died between the replacement's acceptance and recording it. Until replaceByFee hands it over again
 * the old hash stays SEEN (unmined), never DROPPED, so a paid withdrawal is not failed and paid twice.
 */
async function replacedUnrecorded(pool: pg.Pool, rpc: Rpc, own: { reference: string; attempt: number; parentTx: string | null }, asked: readonly string[]): Promise<boolean> {
  if (own.parentTx !== null) return false;
  const later = (await laterAttempts(pool, own.reference, own.attempt, { refused: true })).filter((t) => !asked.includes(t.txHash));
  if (later.length === 0) return false;
  const answers = await rpc.batch<RawTx>(later.map((t) => ({ method: 'getrawtransaction', params: [t.txHash, true] })));
  return answers.some((a) => !(a instanceof RpcError));
}

/**
 * Our mined transactions that CPFP children paid for: their fee is the transaction's plus its children's (the
 * network charged both for the withdrawal), and their confirmations are the least of theirs, so the withdrawal
 * completes (and books the fee) only once the children are as deep. Any child the node has (mined or held) counts,
 * released or not. A child the node lost that it once took is sent again (one it refuses for good, its input gone,
 * is left out); one it never took (never sent: the worker died between storing and sending it) is released once its
 * parent is mined and the change it would have spent is free again: it is never sent after its parent.
 */
async function withChildren(pool: pg.Pool, rpc: Rpc, network: Network, byHash: Map<string, TransferStatus>, ours: Map<string, { fee: Units }>): Promise<Map<string, TransferStatus>> {
  const mined = [...ours.keys()].filter((hash) => {
    const status = byHash.get(hash);
    return status?.state === 'SEEN' && status.blockHeight !== null;
  });
  const children = await cpfpChildren(pool, network, mined, { released: true });
  const result = new Map<string, TransferStatus>();
  if (children.length === 0) return result;
  const answers = await rpc.batch<RawTx>(children.map((c) => ({ method: 'getrawtransaction', params: [c.txHash, true] })));
  const blocks = answers.map((a) => (a instanceof RpcError ? undefined : a?.blockhash));
  const headers = await rpc.batch<{ confirmations: number }>(blocks.flatMap((b) => (b ? [{ method: 'getblockheader', params: [b] }] : [])));
  const headerOf = new Map<number, number>();
  blocks.forEach((b, i) => b && headerOf.set(i, headerOf.size));
  for (const [i, child] of children.entries()) {
    const parent = result.get(child.root) ?? byHash.get(child.root);
    if (parent?.state !== 'SEEN' || parent.blockHeight === null) continue;
    const answer = answers[i];
    let confirmations = 0;
    if (answer instanceof RpcError) {
      if (answer.code !== NOT_FOUND) throw answer;
      if (!child.accepted) {
        if (!child.released && await releaseBump(pool, network, child.txHash)) await freeInputs(pool, network, child);
        continue;
      }
      if (!(await sentAgain(rpc, child.rawTx))) continue;
    } else if (child.released || !child.accepted) await markAccepted(pool, network, child);
    if (blocks[i]) {
      const found = headers[headerOf.get(i) ?? -1];
      if (found instanceof RpcError && found.code !== NOT_FOUND) throw found;
      confirmations = found instanceof RpcError ? 0 : Math.max(0, found?.confirmations ?? 0);
    }
    const fee = unitsOf((parent.fee ?? ours.get(child.root)?.fee ?? 0n) + child.fee);
    result.set(child.root, { ...parent, confirmations: Math.min(parent.confirmations, confirmations), fee });
  }
  return result;
}
