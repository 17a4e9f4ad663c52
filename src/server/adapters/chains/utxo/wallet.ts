/**
 * The hot wallet on a UTXO network: signing a withdrawal (or a cold sweep) once per reference, from the custody's
 * confirmed outputs, with change to a fresh internal address; replacing a stuck one by fee; broadcasting.
 * Signing holds a per-network advisory lock in its transaction: two transactions of ours never pick one output, and
 * the inputs are reserved (utxo_outputs.reserved_by) in the same transaction that stores the signed transaction.
 */
import type pg from 'pg';
import type { HDKey } from '@scure/bip32';
import { BroadcastRejectedError, type FeeEstimate, type SignedWithdrawal, type StuckWithdrawal, type WithdrawalOrder } from '../port.ts';
import { keyAddress, outputScript, selectCoins, signTransaction, virtualSize, type Coin, type Payment } from './builder.ts';
import { feeRates } from './fees.ts';
import { changePath, type UtxoNetwork, type UtxoProfile } from './networks.ts';
import { latestSigned, nextChangeIndex, recordChangeAddress, signedByHash, spendable, storeSigned, type SignedRecord } from './outputs.ts';
import { RpcError, type Rpc } from './rpc.ts';

export type WalletContext = {
  pool: pg.Pool;
  rpc: Rpc;
  network: UtxoNetwork;
  profile: UtxoProfile;
  /** The BIP32 path of external (deposit) index `i` (the custody's addressing). */
  path: (index: number) => string;
  master: HDKey;
  fallbackRate: bigint;
  confirmations: number;
};

/** Not enough confirmed outputs to pay it: it waits (the worker signs it again later). */
export class InsufficientFundsError extends Error {}

export function keyOf(ctx: WalletContext, chain: number, index: number): HDKey {
  const path = chain === 0 ? ctx.path(index) : changePath(ctx.path(0), index);
  return ctx.master.derive(path);
}

export function changeAddress(ctx: WalletContext, index: number): string {
  const key = keyOf(ctx, 1, index);
  if (!key.publicKey) throw new Error('no public key');
  return keyAddress(ctx.profile, key.publicKey);
}

async function inSigningLock<T>(ctx: WalletContext, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await ctx.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('utxo-sign:' || $1))`, [ctx.network]);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

function sign(ctx: WalletContext, coins: readonly Coin[], payments: readonly Payment[]): { rawTx: string; txHash: string } {
  const keyed = coins.map((coin) => {
    const key = keyOf(ctx, coin.keyChain, coin.keyIndex);
    if (!key.privateKey || !key.publicKey) throw new Error('no private key');
    return { ...coin, privateKey: key.privateKey, publicKey: key.publicKey };
  });
  return signTransaction(ctx.profile, keyed, payments);
}

const toSigned = (ctx: WalletContext, record: SignedRecord): SignedWithdrawal => ({ rawTx: record.rawTx, txHash: record.txHash, fromAddress: changeAddress(ctx, 0) });

/** The transaction of `order.reference`: the stored one if it was signed before (a retry after a crash), else a new one. */
export async function signOrder(ctx: WalletContext, order: Pick<WithdrawalOrder, 'reference' | 'toAddress' | 'amount'>): Promise<SignedWithdrawal> {
  const signed = await inSigningLock(ctx, async (client) => {
    const existing = await latestSigned(client, order.reference);
    if (existing) return existing;
    // An amount the network calls dust is signed all the same: the node refuses it for good at broadcast, so the
    // withdrawal fails with its hold returned instead of waiting for ever.
    const recipient = outputScript(ctx.profile, order.toAddress).length;
    const changeIndex = await nextChangeIndex(client, ctx.network);
    const change = changeAddress(ctx, changeIndex);
    const tip = await ctx.rpc.call<number>('getblockcount');
    const { rate } = await feeRates(ctx.rpc, ctx.fallbackRate);
    const candidates = await spendable(client, ctx.network, tip, ctx.confirmations);
    const selection = selectCoins(ctx.profile, candidates, order.amount, rate, recipient, outputScript(ctx.profile, change).length);
    if (!selection) throw new InsufficientFundsError(`the custody's confirmed outputs on ${ctx.network} cannot pay ${order.amount} and its fee`);
    const payments: Payment[] = [{ address: order.toAddress, amount: order.amount }];
    if (selection.change > 0n) payments.push({ address: change, amount: selection.change });
    const tx = sign(ctx, selection.coins, payments);
    if (selection.change > 0n) await recordChangeAddress(client, ctx.network, changeIndex, change);
    const record: SignedRecord = {
      reference: order.reference,
      attempt: 0,
      ...tx,
      toAddress: order.toAddress,
      amount: order.amount,
      fee: selection.fee,
      feeRate: rate,
      inputs: selection.coins.map((c) => `${c.txHash}:${c.vout}`),
      changeIndex: selection.change > 0n ? changeIndex : null,
    };
    await storeSigned(client, ctx.network, record);
    return record;
  });
  return toSigned(ctx, signed);
}

/**
 * A replacement (BIP125) of a stuck transaction of ours: the same inputs and payment, a higher fee taken from the
 * change (no change left below dust), at least the old fee plus the node's incremental relay fee. Idempotent: a
 * replacement already made of this transaction is returned again.
 */
export async function replaceOrder(ctx: WalletContext, stuck: StuckWithdrawal, fee: FeeEstimate): Promise<SignedWithdrawal> {
  const signed = await inSigningLock(ctx, async (client) => {
    const old = (await signedByHash(client, ctx.network, [stuck.signed.txHash])).get(stuck.signed.txHash);
    if (!old) throw new Error(`${stuck.signed.txHash} is not a transaction of the custody on ${ctx.network}`);
    const latest = await latestSigned(client, old.reference);
    if (latest && latest.attempt > old.attempt) return latest;
    const rates = await feeRates(ctx.rpc, ctx.fallbackRate);
    const coins = await client.query<{ tx_hash: string; vout: number; amount: string; key_chain: number; key_index: number }>(
      `SELECT tx_hash, vout, amount::text, key_chain, key_index FROM utxo_outputs WHERE network = $1 AND tx_hash || ':' || vout = ANY($2::text[])`,
      [ctx.network, old.inputs],
    );
    if (coins.rows.length !== old.inputs.length) throw new Error(`the inputs of ${old.txHash} are no longer in the custody's index`);
    const inputs: Coin[] = coins.rows.map((r) => ({ txHash: r.tx_hash, vout: r.vout, amount: BigInt(r.amount), keyChain: r.key_chain, keyIndex: r.key_index }));
    const total = inputs.reduce((sum, c) => sum + c.amount, 0n);
    const recipient = outputScript(ctx.profile, old.toAddress).length;
    const change = old.changeIndex === null ? undefined : changeAddress(ctx, old.changeIndex);
    const scripts = change === undefined ? [recipient] : [recipient, outputScript(ctx.profile, change).length];
    const size = virtualSize(ctx.profile, inputs.length, scripts);
    const wanted = [fee.rate ?? 0n, rates.rate, old.feeRate + rates.incremental, (old.feeRate * 5n + 3n) / 4n].reduce((a, b) => (a > b ? a : b));
    let newFee = wanted * size;
    if (newFee < old.fee + rates.incremental * size) newFee = old.fee + rates.incremental * size;
    let changeAmount = total - old.amount - newFee;
    if (changeAmount < ctx.profile.dust) {
      if (total - old.amount <= old.fee) throw new Error(`${old.txHash} has no change to pay a higher fee`);
      newFee = total - old.amount;
      changeAmount = 0n;
    }
    const payments: Payment[] = [{ address: old.toAddress, amount: old.amount }];
    if (change !== undefined && changeAmount > 0n) payments.push({ address: change, amount: changeAmount });
    const tx = sign(ctx, inputs, payments);
    const record: SignedRecord = {
      ...old,
      ...tx,
      attempt: old.attempt + 1,
      fee: newFee,
      feeRate: (newFee + size - 1n) / size,
      changeIndex: changeAmount > 0n ? old.changeIndex : null,
    };
    await storeSigned(client, ctx.network, record);
    return record;
  });
  return toSigned(ctx, signed);
}

/** What a transfer of `amount` costs now: two inputs and change at the current rate. */
export async function estimate(ctx: WalletContext, toAddress: string): Promise<FeeEstimate> {
  const { rate } = await feeRates(ctx.rpc, ctx.fallbackRate);
  let recipient = 22;
  try {
    recipient = outputScript(ctx.profile, toAddress).length;
  } catch {
    // An address of another format: a P2WPKH-sized guess.
  }
  return { network: ctx.network, currency: ctx.profile.coin, amount: rate * virtualSize(ctx.profile, 2, [recipient, ctx.profile.segwit ? 22 : 25]), rate };
}

/** Messages of an already-known transaction: sending it again changed nothing. */
const ALREADY = /already in (block ?chain|the mempool)|txn-already-(in-mempool|known)|transaction already/i;
/** Refusals that may pass later (a full mempool, fees rising): the worker tries again. */
const TRANSIENT = /mempool min fee not met|min relay fee not met|insufficient fee|mempool full|too-long-mempool-chain/i;

/** Sends a signed transaction; one the node already has (mempool or chain) is success. */
export async function broadcastRaw(ctx: WalletContext, rawTx: string): Promise<{ txHash: string }> {
  try {
    return { txHash: await ctx.rpc.call<string>('sendrawtransaction', rawTx) };
  } catch (error) {
    if (!(error instanceof RpcError)) throw error;
    const known = await ctx.rpc.call<{ txid: string }>('decoderawtransaction', rawTx).catch(() => undefined);
    if (error.code === -27 || ALREADY.test(error.message)) {
      if (known) return { txHash: known.txid };
    }
    if ((error.code === -25 || error.code === -26 || error.code === -22) && !TRANSIENT.test(error.message)) {
      // Refused for good and never in the mempool: its inputs are free again unless another attempt of it went out.
      if (known) await releaseRefused(ctx, known.txid, error.code);
      throw new BroadcastRejectedError(`${ctx.network} node refused the transaction: ${error.message}`);
    }
    throw error;
  }
}

async function releaseRefused(ctx: WalletContext, txHash: string, code: number): Promise<void> {
  // -25 (inputs missing or spent) may mean another attempt of the same reference was mined: keep the reservation then.
  if (code === -25) return;
  const record = (await signedByHash(ctx.pool, ctx.network, [txHash])).get(txHash);
  if (record?.attempt !== 0) return;
  await ctx.pool.query('UPDATE utxo_transactions SET released_at = now() WHERE reference = $1', [record.reference]);
  await ctx.pool.query('UPDATE utxo_outputs SET reserved_by = NULL WHERE network = $1 AND reserved_by = $2', [ctx.network, record.reference]);
}
