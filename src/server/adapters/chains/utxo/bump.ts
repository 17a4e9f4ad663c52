/**
 * Bumping the fee of a stuck transaction of ours. First a BIP125 replacement (same inputs and payment, more fee from
 * the change), offered to the node before it is handed to the caller: one the node refuses (Litecoin Core's default
 * `-mempoolreplacement=0`, any node's policy) without ever taking it is marked released and never recorded or
 * shown; one it took is never released. Then CPFP: a child
 * spending the stuck transaction's change (or the previous child's output) to a fresh change address, paying for the
 * whole package at the target rate; the caller keeps the stuck hash, and `status` adds the children's fees to its
 * fee once they are mined. No bump pays above MAX_FEE_RATE: one that would need to is not sent, and alerted once per
 * withdrawal (FeeBumpBlockedError).
 */
import type pg from 'pg';
import { hex } from '@scure/base';
import { RawTx, Transaction } from '@scure/btc-signer';
import { unitsFromRow } from '../../../db/amounts.ts';
import { FeeBumpBlockedError, type FeeEstimate, type SignedWithdrawal, type StuckWithdrawal } from '../port.ts';
import { outputScript, virtualSize, type Coin, type Payment } from './builder.ts';
import { feeRates, type FeeRates } from './fees.ts';
import { claimFeeAlert, cpfpChildren, laterAttempts, markAccepted, nextAttempt, nextChangeIndex, recordChangeAddress, refusedChildChangeIndex, releaseBump, signedByHash, storeSigned, type SignedRecord } from './outputs.ts';
import { RpcError } from './rpc.ts';
import { ALREADY, changeAddress, feePolicy, inSigningLock, sign, toSigned, type WalletContext } from './wallet.ts';
import { unitsOf, type Units } from '../../../../lib/money.ts';

/** RPC_INVALID_ADDRESS_OR_KEY: no such transaction. */
const NOT_FOUND = -5;
/** RPC_VERIFY_ERROR: an input is missing or already spent (the stuck transaction, or a sibling, was mined). */
const INPUTS_MISSING_OR_SPENT = -25;
/** RPC_VERIFY_ALREADY_IN_CHAIN. */
const ALREADY_IN_CHAIN = -27;

type Offer = { accepted: true } | { accepted: false; code: number; message: string };
type Built = { record: SignedRecord } | { blocked: string };

const max = (...values: bigint[]) => values.reduce((a, b) => (a > b ? a : b));
const min = (a: bigint, b: bigint) => (a < b ? a : b);
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
const vsizeOf = (rawTx: string) => BigInt(Transaction.fromRaw(hex.decode(rawTx), { allowUnknownOutputs: true }).vsize);

/** Sends a transaction; the node's refusal is an answer, not an error (transport failures still throw). */
async function offer(ctx: WalletContext, rawTx: string): Promise<Offer> {
  try {
    await ctx.rpc.call('sendrawtransaction', rawTx);
    return { accepted: true };
  } catch (error) {
    if (!(error instanceof RpcError)) throw error;
    if (error.code === ALREADY_IN_CHAIN || ALREADY.test(error.message)) return { accepted: true };
    return { accepted: false, code: error.code, message: error.message };
  }
}

/** Where the stuck transaction is: mined (nothing to bump), waiting in the mempool, or unknown to this node. */
async function whereIs(ctx: WalletContext, txHash: string): Promise<'mined' | 'waiting' | 'unknown'> {
  try {
    const tx = await ctx.rpc.call<{ blockhash?: string }>('getrawtransaction', txHash, true);
    if (!tx.blockhash) return 'waiting';
    const header = await ctx.rpc.call<{ confirmations: number }>('getblockheader', tx.blockhash);
    return header.confirmations > 0 ? 'mined' : 'waiting';
  } catch (error) {
    if (error instanceof RpcError && error.code === NOT_FOUND) return 'unknown';
    throw error;
  }
}

/** The bump would pass MAX_FEE_RATE (or has nothing to pay from): alerted once per withdrawal, then the stuck one again. */
async function blocked(ctx: WalletContext, old: SignedRecord, reason: string): Promise<SignedWithdrawal> {
  if (await claimFeeAlert(ctx.pool, ctx.network, old.reference, old.txHash)) {
    throw new FeeBumpBlockedError(`${ctx.network} transaction ${old.txHash} of ${old.reference} stays stuck: ${reason}; nothing was sent (MAX_FEE_RATE ${ctx.maxFeeRate}/vB)`);
  }
  return toSigned(ctx, old);
}

const paymentKey = (p: { address: string; amount: Units }) => `${p.address}\u0000${p.amount}`;

/**
 * A replacement pays what the stored transaction pays (buildReplacement), which is read from the database: it must be
 * the sealed order's payment (and, with `stuck.payments`, exactly the sealed payments of its batch), else nothing is
 * built, signed or offered. The EVM adapter rebuilds from the order itself (evm/sender.ts) to the same end.
 */
function payingAsSealed(old: SignedRecord, stuck: StuckWithdrawal): void {
  const paid = (old.payments ?? [{ address: old.toAddress, amount: old.amount }]).map(paymentKey).sort();
  const order = paymentKey({ address: stuck.order.toAddress, amount: stuck.order.amount });
  const sealed = stuck.payments?.map(paymentKey).sort();
  const fits = sealed ? sealed.length === paid.length && sealed.every((p, i) => p === paid[i]) && sealed.includes(order) : paid.includes(order);
  if (!fits) throw new Error(`${old.txHash} does not pay withdrawal ${stuck.order.reference}'s sealed order (destination or amount differ): not replaced`);
}

/** Refusals for the fee alone (an evicted transaction sent again): nothing conflicts with a replacement then. */
const FEE_REFUSAL = /mempool min fee not met|min relay fee not met|insufficient fee|mempool full/i;

export async function bumpFee(ctx: WalletContext, stuck: StuckWithdrawal, fee: FeeEstimate): Promise<SignedWithdrawal> {
  const old = (await signedByHash(ctx.pool, ctx.network, [stuck.signed.txHash])).get(stuck.signed.txHash);
  if (!old) throw new Error(`${stuck.signed.txHash} is not a transaction of the custody on ${ctx.network}`);
  payingAsSealed(old, stuck);
  const same = toSigned(ctx, old);
  const where = await whereIs(ctx, old.txHash);
  if (where === 'mined') return same;
  // A replacement signed before and not recorded by the caller (it died, or the node had not answered).
  const recovered = await recoverReplacement(ctx, old);
  if ('signed' in recovered) return recovered.signed;
  if (recovered.inputsGone) return same;
  const replacementRefused = recovered.refused;
  // The node lost the stuck transaction (a restart without its mempool): it goes first, its children after it. Refused
  // for its fee (evicted when the mempool's minimum rose), nothing conflicts with a replacement: that is built.
  let lost = false;
  if (where === 'unknown') {
    const answer = await offer(ctx, old.rawTx);
    if (!answer.accepted && !FEE_REFUSAL.test(answer.message)) return same;
    lost = !answer.accepted;
  }
  const live = lost ? { children: [] } : await liveChildren(ctx, old);
  if (!('children' in live)) return same;
  const children = live.children;
  const newest = children.at(-1);
  if (newest && !(await dueAgain(ctx, newest.txHash))) return same;
  const rates = await feeRates(ctx.rpc, feePolicy(ctx));
  if (lost || (children.length === 0 && !replacementRefused)) {
    const built = await inSigningLock(ctx, async (client) => {
      const replacement = await buildReplacement(ctx, client, old, fee, rates);
      if (!('record' in replacement)) return replacement;
      // The same bytes as one refused before (same rates): that one is offered again.
      const stored = (await signedByHash(client, ctx.network, [replacement.record.txHash])).get(replacement.record.txHash);
      if (stored) return { record: stored };
      await storeSigned(client, ctx.network, replacement.record);
      return replacement;
    });
    if ('blocked' in built) return blocked(ctx, old, built.blocked);
    const answer = await offer(ctx, built.record.rawTx);
    if (answer.accepted) {
      await markAccepted(ctx.pool, ctx.network, built.record);
      return toSigned(ctx, built.record);
    }
    await releaseBump(ctx.pool, ctx.network, built.record.txHash);
    // Without the stuck transaction in the mempool a child cannot be taken either.
    if (lost || answer.code === INPUTS_MISSING_OR_SPENT) return same;
  }
  const built = await inSigningLock(ctx, (client) => buildChild(ctx, client, old, children, fee, rates));
  if ('blocked' in built) return blocked(ctx, old, built.blocked);
  const answer = await offer(ctx, built.record.rawTx);
  // Refused (a fee the node will not relay yet, a too-long chain): released, and tried again RBF_AFTER_BLOCKS later
  // (the same hash moves the worker's broadcast height on), to the same change address.
  if (answer.accepted) await markAccepted(ctx.pool, ctx.network, built.record);
  else await releaseBump(ctx.pool, ctx.network, built.record.txHash);
  return same;
}

/**
 * Replacements of `old` signed before (released ones too), newest first: one the node has mined or holds is handed
 * back (the caller died before recording it); one it ever took is never released but sent again and handed back (it
 * may be mined from peers). Only one it never took is offered again and released when refused.
 */
async function recoverReplacement(ctx: WalletContext, old: SignedRecord): Promise<{ signed: SignedWithdrawal } | { refused: boolean; inputsGone: boolean }> {
  const later = (await laterAttempts(ctx.pool, old.reference, old.attempt, { refused: true })).reverse();
  if (later.length === 0) return { refused: false, inputsGone: false };
  const known = await ctx.rpc.batch<unknown>(later.map((t) => ({ method: 'getrawtransaction', params: [t.txHash, true] })));
  for (const [i, answer] of known.entries()) {
    if (answer instanceof RpcError && answer.code !== NOT_FOUND) throw answer;
    const tx = later[i];
    if (!tx || answer instanceof RpcError) continue;
    await markAccepted(ctx.pool, ctx.network, tx);
    return { signed: toSigned(ctx, tx) };
  }
  const taken = later.find((t) => t.accepted);
  if (taken) {
    await offer(ctx, taken.rawTx);
    return { signed: toSigned(ctx, taken) };
  }
  let refused = false;
  for (const tx of later) {
    if (tx.released) continue;
    const answer = await offer(ctx, tx.rawTx);
    if (answer.accepted) {
      await markAccepted(ctx.pool, ctx.network, tx);
      return { signed: toSigned(ctx, tx) };
    }
    await releaseBump(ctx.pool, ctx.network, tx.txHash);
    if (answer.code === INPUTS_MISSING_OR_SPENT) return { refused: true, inputsGone: true };
    refused = true;
  }
  return { refused, inputsGone: false };
}

/**
 * The CPFP children of `old` the node still has (sent again if it lost them). A refused one the node never took is
 * released with those after it; one it took once is never released, and no other child of its output is made
 * (`wait`: it may still be mined from peers).
 */
async function liveChildren(ctx: WalletContext, old: SignedRecord): Promise<{ children: SignedRecord[] } | { wait: true }> {
  const children = await cpfpChildren(ctx.pool, ctx.network, [old.txHash]);
  const live: SignedRecord[] = [];
  for (const [i, child] of children.entries()) {
    if ((await offer(ctx, child.rawTx)).accepted) {
      if (!child.accepted) await markAccepted(ctx.pool, ctx.network, child);
      live.push(child);
      continue;
    }
    const rest = children.slice(i);
    if (rest.some((c) => c.accepted)) return { wait: true };
    for (const gone of rest) await releaseBump(ctx.pool, ctx.network, gone.txHash);
    break;
  }
  return { children: live };
}

/** A child is followed by another only RBF_AFTER_BLOCKS after it entered the mempool (the worker asks every round). */
async function dueAgain(ctx: WalletContext, childHash: string): Promise<boolean> {
  try {
    const entry = await ctx.rpc.call<{ height: number }>('getmempoolentry', childHash);
    const tip = await ctx.rpc.call<number>('getblockcount');
    return tip - entry.height >= ctx.rbfAfterBlocks;
  } catch (error) {
    // Not in the mempool: mined meanwhile, nothing to add.
    if (error instanceof RpcError) return false;
    throw error;
  }
}

/**
 * The replacement: the same inputs and payment, at least the old rate plus the node's incremental relay fee (and its
 * absolute fee plus that fee for its size), the estimate when higher, and 25 % more up to the ceiling. Blocked when
 * what is needed passes MAX_FEE_RATE, or when there is no change to pay it from.
 */
async function buildReplacement(ctx: WalletContext, client: pg.PoolClient, old: SignedRecord, fee: FeeEstimate, rates: FeeRates): Promise<Built> {
  const coins = await client.query<{ tx_hash: string; vout: number; amount: string; key_chain: number; key_index: number }>(
    `SELECT tx_hash, vout, amount::text, key_chain, key_index FROM utxo_outputs WHERE network = $1 AND tx_hash || ':' || vout = ANY($2::text[])`,
    [ctx.network, old.inputs],
  );
  if (coins.rows.length !== old.inputs.length) throw new Error(`the inputs of ${old.txHash} are no longer in the custody's index`);
  const inputs: Coin[] = coins.rows.map((r) => ({ txHash: r.tx_hash, vout: r.vout, amount: unitsFromRow(r.amount), keyChain: r.key_chain, keyIndex: r.key_index }));
  const total = inputs.reduce((sum, c) => sum + c.amount, 0n);
  // A batch's payments all stay, in their order; only the change pays the higher fee.
  const paid: Payment[] = old.payments ? [...old.payments] : [{ address: old.toAddress, amount: old.amount }];
  const recipients = paid.map((p) => outputScript(ctx.profile, p.address).length);
  const change = old.changeIndex === null ? undefined : changeAddress(ctx, old.changeIndex);
  const scripts = change === undefined ? recipients : [...recipients, outputScript(ctx.profile, change).length];
  const size = virtualSize(ctx.profile, inputs.length, scripts);
  // What a replacement must pay is the old rate plus the incremental fee; the estimate and 25 % more are aimed at, capped.
  const needed = old.feeRate + rates.incremental;
  if (needed > ctx.maxFeeRate) return { blocked: `a replacement needs ${needed}/vB` };
  const rate = min(max(needed, fee.rate ?? 0n, rates.wanted, ceilDiv(old.feeRate * 5n, 4n)), ctx.maxFeeRate);
  const newFee = max(rate * size, old.fee + rates.incremental * size);
  if (ceilDiv(newFee, size) > ctx.maxFeeRate) return { blocked: `a replacement needs ${ceilDiv(newFee, size)}/vB` };
  let changeAmount = total - old.amount - newFee;
  let feePaid = newFee;
  if (changeAmount < ctx.profile.dust) {
    // What is left would be dust: all of it goes to the fee, if that is a bump at all and within the ceiling.
    feePaid = total - old.amount;
    changeAmount = 0n;
    if (feePaid < old.fee + rates.incremental * size) return { blocked: 'its change cannot pay a higher fee' };
    if (ceilDiv(feePaid, size) > ctx.maxFeeRate) return { blocked: `giving its change to the fee pays ${ceilDiv(feePaid, size)}/vB` };
  }
  const payments: Payment[] = [...paid];
  if (change !== undefined && changeAmount > 0n) payments.push({ address: change, amount: unitsOf(changeAmount) });
  const tx = sign(ctx, inputs, payments);
  return {
    record: {
      ...old,
      ...tx,
      attempt: await nextAttempt(client, old.reference),
      fee: unitsOf(feePaid),
      feeRate: ceilDiv(feePaid, size),
      changeIndex: changeAmount > 0n ? old.changeIndex : null,
      parentTx: null,
    },
  };
}

/**
 * A CPFP child of the newest transaction of the chain (the stuck one, or its last child): its one output to a fresh
 * change address, paying so that the package (the stuck transaction, the children before and this one) reaches the
 * target rate: (package vsize + child vsize) × rate − what the package already paid; never less than the node's
 * relay minimum for the child alone. Recorded (with its change address) before it is sent.
 */
async function buildChild(ctx: WalletContext, client: pg.PoolClient, old: SignedRecord, children: readonly SignedRecord[], fee: FeeEstimate, rates: FeeRates): Promise<Built> {
  const parent = children.at(-1) ?? old;
  const spent = spendableChange(ctx, parent);
  if (!spent) return { blocked: 'it has no change output to pay a CPFP child from' };
  const packageSize = [old, ...children].reduce((sum, t) => sum + vsizeOf(t.rawTx), 0n);
  const packageFee = [old, ...children].reduce((sum, t) => sum + t.fee, 0n);
  const packageRate = ceilDiv(packageFee, packageSize);
  const needed = packageRate + rates.incremental;
  if (needed > ctx.maxFeeRate) return { blocked: `a CPFP child needs the package at ${needed}/vB` };
  const rate = min(max(needed, fee.rate ?? 0n, rates.wanted, ceilDiv(packageRate * 5n, 4n)), ctx.maxFeeRate);
  // A child the node refused before for this parent leaves its change index to the next one: no index is burnt.
  const changeIndex = (await refusedChildChangeIndex(client, ctx.network, parent.txHash)) ?? (await nextChangeIndex(client, ctx.network));
  const change = changeAddress(ctx, changeIndex);
  const childSize = virtualSize(ctx.profile, 1, [outputScript(ctx.profile, change).length]);
  // The child's own rate stays within the ceiling too (a node's maxfeerate refuses more).
  const childFee = min(max(rate * (packageSize + childSize) - packageFee, rates.floor * childSize), ctx.maxFeeRate * childSize);
  if (childFee < rates.floor * childSize) return { blocked: `a CPFP child would pay below the node's minimum within ${ctx.maxFeeRate}/vB` };
  const amount = unitsOf(spent.coin.amount - childFee);
  if (amount < ctx.profile.dust) return { blocked: `its change (${spent.coin.amount}) cannot pay a CPFP child's ${childFee}` };
  const tx = sign(ctx, [spent.coin], [{ address: change, amount }]);
  // The same bytes as a child refused before (same index, same rates): that one is offered again.
  const stored = (await signedByHash(client, ctx.network, [tx.txHash])).get(tx.txHash);
  if (stored) return { record: stored };
  await recordChangeAddress(client, ctx.network, changeIndex, change);
  const record: SignedRecord = {
    reference: old.reference,
    attempt: await nextAttempt(client, old.reference),
    txHash: tx.txHash,
    rawTx: tx.rawTx,
    toAddress: change,
    amount,
    fee: unitsOf(childFee),
    feeRate: ceilDiv(childFee, childSize),
    inputs: [`${parent.txHash}:${spent.coin.vout}`],
    changeIndex,
    parentTx: parent.txHash,
  };
  await storeSigned(client, ctx.network, record);
  return { record };
}

/** The output of `tx` paying its change address (ours, on the internal chain), as a coin to spend. */
function spendableChange(ctx: WalletContext, tx: SignedRecord): { coin: Coin } | undefined {
  if (tx.changeIndex === null) return undefined;
  const script = outputScript(ctx.profile, changeAddress(ctx, tx.changeIndex));
  const outputs = RawTx.decode(hex.decode(tx.rawTx)).outputs;
  const vout = outputs.findIndex((o) => hex.encode(o.script) === hex.encode(script));
  const output = outputs[vout];
  if (!output) return undefined;
  return { coin: { txHash: tx.txHash, vout, amount: output.amount, keyChain: 1, keyIndex: tx.changeIndex } };
}
