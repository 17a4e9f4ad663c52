/**
 * The hot wallet on a UTXO network: signing a withdrawal (or a cold sweep) once per reference, from the custody's
 * confirmed outputs, with change to a fresh internal address; broadcasting (bumping a stuck one: bump.ts).
 * Signing holds a per-network advisory lock in its transaction: two transactions of ours never pick one output, and
 * the inputs are reserved (utxo_outputs.reserved_by) in the same transaction that stores the signed transaction.
 */
import type { Bip32Key, WalletKeys } from '../../keys/port.ts';
import type pg from 'pg';
import { BroadcastRejectedError, HotWalletShortError, type FeeEstimate, type SignedWithdrawal, type WithdrawalOrder } from '../port.ts';
import { keyAddress, outputScript, selectCoins, signTransaction, virtualSize, type Coin, type Payment } from './builder.ts';
import { feeRates, type FeePolicy } from './fees.ts';
import { changePath, type UtxoNetwork, type UtxoProfile } from './networks.ts';
import { latestSigned, nextChangeIndex, recordChangeAddress, signedByHash, spendable, storeSigned, type SignedRecord } from './outputs.ts';
import { RpcError, type Rpc } from './rpc.ts';
import { subtractUnits, sumUnits, unitsOf, type Units } from '../../../../lib/money.ts';

export type WalletContext = {
  pool: pg.Pool;
  rpc: Rpc;
  network: UtxoNetwork;
  profile: UtxoProfile;
  /** The BIP32 path of external (deposit) index `i` (the custody's addressing). */
  path: (index: number) => string;
  master: Pick<WalletKeys, 'derive'>;
  fallbackRate: bigint;
  /** MAX_FEE_RATE (units per vB): no transaction of ours, replacement or CPFP, pays above it. */
  maxFeeRate: bigint;
  /** RBF_AFTER_BLOCKS: a CPFP child is followed by another only after this many blocks. */
  rbfAfterBlocks: number;
  confirmations: number;
  /** UTXO_CONSOLIDATE_BELOW for this network: withdrawals spend the hot wallet's own outputs first, deposit outputs only when those fall short. */
  consolidateBelow?: bigint | undefined;
};

export const feePolicy = (ctx: WalletContext): FeePolicy => ({ fallback: ctx.fallbackRate, ceiling: ctx.maxFeeRate, estimatesFromVersion: ctx.profile.estimatesFromVersion });

/** Not enough confirmed outputs to pay it: it waits (the worker signs it again later). */
export class InsufficientFundsError extends HotWalletShortError {}

export function keyOf(ctx: WalletContext, chain: number, index: number): Bip32Key {
  const path = chain === 0 ? ctx.path(index) : changePath(ctx.path(0), index);
  return ctx.master.derive(path);
}

export function changeAddress(ctx: WalletContext, index: number): string {
  const key = keyOf(ctx, 1, index);
  if (!key.publicKey) throw new Error('no public key');
  return keyAddress(ctx.profile, key.publicKey);
}

export async function inSigningLock<T>(ctx: WalletContext, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
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

export function sign(ctx: WalletContext, coins: readonly Coin[], payments: readonly Payment[]): { rawTx: string; txHash: string } {
  const keyed = coins.map((coin) => {
    const key = keyOf(ctx, coin.keyChain, coin.keyIndex);
    if (!key.privateKey || !key.publicKey) throw new Error('no private key');
    return { ...coin, privateKey: key.privateKey, publicKey: key.publicKey };
  });
  return signTransaction(ctx.profile, keyed, payments);
}

export const toSigned = (ctx: WalletContext, record: SignedRecord): SignedWithdrawal => ({ rawTx: record.rawTx, txHash: record.txHash, fromAddress: changeAddress(ctx, 0) });

/** The transaction of `order.reference`: the stored one if it was signed before (a retry after a crash), else a new one. */
export async function signOrder(ctx: WalletContext, order: Pick<WithdrawalOrder, 'reference' | 'toAddress' | 'amount'>): Promise<SignedWithdrawal> {
  return signPayments(ctx, order.reference, [{ address: order.toAddress, amount: order.amount }]);
}

/**
 * The one transaction of `reference` paying each of `payments` (an output each, in this order) with change back: the
 * stored one if it was signed before, else a new one, stored (with its payments when there are several, for a
 * replacement to pay them again) and its inputs reserved before it is handed back.
 */
export async function signPayments(ctx: WalletContext, reference: string, payments: readonly Payment[]): Promise<SignedWithdrawal> {
  const first = payments[0];
  if (!first) throw new Error('nothing to pay');
  const signed = await inSigningLock(ctx, async (client) => {
    const existing = await latestSigned(client, reference);
    if (existing) return existing;
    // An amount the network calls dust is signed all the same: the node refuses it for good at broadcast, so the
    // withdrawal fails with its hold returned instead of waiting for ever.
    const recipients = payments.map((p) => outputScript(ctx.profile, p.address).length);
    const total = sumUnits(payments.map((p) => p.amount));
    const changeIndex = await nextChangeIndex(client, ctx.network);
    const change = changeAddress(ctx, changeIndex);
    const tip = await ctx.rpc.call<number>('getblockcount');
    const { rate } = await feeRates(ctx.rpc, feePolicy(ctx));
    const candidates = await spendable(client, ctx.network, tip, ctx.confirmations);
    const changeScript = outputScript(ctx.profile, change).length;
    // Where deposits are consolidated, the hot wallet's own outputs pay first; deposit outputs only when they fall short.
    const hot = ctx.consolidateBelow === undefined ? undefined : selectCoins(ctx.profile, candidates.filter((c) => c.keyChain === 1), total, rate, recipients, changeScript);
    const selection = hot ?? selectCoins(ctx.profile, candidates, total, rate, recipients, changeScript);
    if (!selection) throw new InsufficientFundsError(`the custody's confirmed outputs on ${ctx.network} cannot pay ${total} and its fee`);
    const outputs: Payment[] = [...payments];
    if (selection.change > 0n) outputs.push({ address: change, amount: selection.change });
    const tx = sign(ctx, selection.coins, outputs);
    if (selection.change > 0n) await recordChangeAddress(client, ctx.network, changeIndex, change);
    const record: SignedRecord = {
      reference,
      attempt: 0,
      ...tx,
      toAddress: first.address,
      amount: total,
      fee: selection.fee,
      feeRate: rate,
      inputs: selection.coins.map((c) => `${c.txHash}:${c.vout}`),
      changeIndex: selection.change > 0n ? changeIndex : null,
      parentTx: null,
      payments: payments.length > 1 ? payments : null,
    };
    await storeSigned(client, ctx.network, record);
    return record;
  });
  return toSigned(ctx, signed);
}

/** Deposit outputs one consolidation spends at most. */
const CONSOLIDATE_INPUTS = 200;

/**
 * UTXO_CONSOLIDATE_BELOW: one transaction of `reference` moving the confirmed deposit outputs (up to 200) into a fresh
 * address of the hot wallet's internal chain, signed only while the fee rate is at most `maxRate`; the stored one if it
 * was signed before (whatever the rate now). Undefined when fees are above, nothing waits, or it would be dust.
 */
export async function signConsolidation(ctx: WalletContext, reference: string, maxRate: bigint): Promise<(SignedWithdrawal & { toAddress: string; amount: Units }) | undefined> {
  const signed = await inSigningLock(ctx, async (client) => {
    const existing = await latestSigned(client, reference);
    if (existing) return existing;
    const { rate } = await feeRates(ctx.rpc, feePolicy(ctx));
    if (rate > maxRate) return undefined;
    const tip = await ctx.rpc.call<number>('getblockcount');
    const coins = (await spendable(client, ctx.network, tip, ctx.confirmations)).filter((c) => c.keyChain === 0).slice(0, CONSOLIDATE_INPUTS);
    if (coins.length === 0) return undefined;
    const index = await nextChangeIndex(client, ctx.network);
    const to = changeAddress(ctx, index);
    const total = sumUnits(coins.map((c) => c.amount));
    const fee = unitsOf(rate * virtualSize(ctx.profile, coins.length, [outputScript(ctx.profile, to).length]));
    const amount = subtractUnits(total, fee);
    if (amount < ctx.profile.dust) return undefined;
    const tx = sign(ctx, coins, [{ address: to, amount }]);
    await recordChangeAddress(client, ctx.network, index, to);
    const record: SignedRecord = { reference, attempt: 0, ...tx, toAddress: to, amount, fee, feeRate: rate, inputs: coins.map((c) => `${c.txHash}:${c.vout}`), changeIndex: null, parentTx: null, payments: null };
    await storeSigned(client, ctx.network, record);
    return record;
  });
  return signed && { ...toSigned(ctx, signed), toAddress: signed.toAddress, amount: signed.amount };
}

/** What the hot wallet can spend now: its confirmed outputs neither spent nor reserved by a transaction of ours. */
export async function spendableUnits(ctx: WalletContext): Promise<Units> {
  const tip = await ctx.rpc.call<number>('getblockcount');
  return sumUnits((await spendable(ctx.pool, ctx.network, tip, ctx.confirmations)).map((c) => c.amount));
}

/** What a transfer of `amount` costs now: two inputs and change at the current rate. */
export async function estimate(ctx: WalletContext, toAddress: string): Promise<FeeEstimate> {
  const { rate } = await feeRates(ctx.rpc, feePolicy(ctx));
  let recipient = 22;
  try {
    recipient = outputScript(ctx.profile, toAddress).length;
  } catch {
    // An address of another format: a P2WPKH-sized guess.
  }
  return { network: ctx.network, currency: ctx.profile.coin, amount: unitsOf(rate * virtualSize(ctx.profile, 2, [recipient, ctx.profile.segwit ? 22 : 25])), rate };
}

/** Messages of an already-known transaction: sending it again changed nothing. */
export const ALREADY = /already in (block ?chain|the mempool)|txn-already-(in-mempool|known)|transaction already/i;
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
