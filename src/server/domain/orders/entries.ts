/**
 * An order's ledger entries: open with a hold, settle to one or more legs, release, or post a step's own entry;
 * each one entry under the step's key (entry-keys.ts), through ledger.ts, so a retried step applies once.
 */
import { LedgerError, type Posting, type PostedEntry, type Queryable } from '../ledger.ts';
import { hold, post, release, settle, transfer } from '../ledger-writes.ts';
import { addUnits, negateUnits, sumUnits, unitsOf, type Money, type Units } from '../../../lib/money.ts';
import { orderEntryKey, orderEntryKind, orderReference, type EntryRef, type OrderFlow, type OrderRef, type OrderStep } from './entry-keys.ts';

/** Flows whose orders have a given step. */
type FlowsWith<S extends string> = { [F in OrderFlow]: S extends OrderStep<F> ? F : never }[OrderFlow];

/** Turns a refusal of the ledger for want of funds into the flow's own error. */
export type WhenShort = (cause: LedgerError) => Error;

const entryOf = <F extends OrderFlow>(order: OrderRef<F>, step: OrderStep<F>, round = 0) => ({
  key: orderEntryKey(order.flow, order.id, step, round),
  kind: orderEntryKind(order.flow, step),
  reference: orderReference(order.flow, order.id),
});

const amountOf = (m: Money) => ({ currency: m.currency, amount: m.units });

async function refusingShort<T>(work: Promise<T>, whenShort: WhenShort | undefined): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (whenShort && error instanceof LedgerError && error.problem === 'INSUFFICIENT_FUNDS') throw whenShort(error);
    throw error;
  }
}

/** Where held money goes when an order settles: an account and units of the held currency. */
export type SettleLeg = { account: string; units: Units };

/** Opens the order: available → on hold on the owner's account. */
export function holdOrder(db: Queryable, order: OrderRef<FlowsWith<'hold'>>, move: { account: string; money: Money }, whenShort?: WhenShort): Promise<PostedEntry> {
  return refusingShort(hold(db, { ...entryOf(order, 'hold'), account: move.account, ...amountOf(move.money) }), whenShort);
}

/** Gives the held amount back: on hold → available. */
export function releaseOrder(db: Queryable, order: OrderRef<FlowsWith<'release'>>, move: { account: string; money: Money }): Promise<PostedEntry> {
  return release(db, { ...entryOf(order, 'release'), account: move.account, ...amountOf(move.money) });
}

/**
 * Pays the held money out to one or more legs (the world, fee income, a settlement account...); they add up to it.
 * `round`: the settlement after the order's n-th reopening (`reopenOrder`), an entry of its own.
 */
export async function settleOrder(db: Queryable, order: OrderRef<FlowsWith<'settle'>>, move: { account: string; money: Money; to: readonly SettleLeg[]; round?: number }): Promise<PostedEntry> {
  const paid = sumUnits(move.to.map((leg) => leg.units));
  if (paid !== move.money.units) throw new Error(`settling ${order.flow} ${order.id} pays ${paid}, not the ${move.money.units} held`);
  const to = move.to.map((leg) => ({ account: leg.account, amount: leg.units }));
  return settle(db, { ...entryOf(order, 'settle', move.round), account: move.account, currency: move.money.currency, to });
}

/**
 * Takes a settlement back onto the owner's hold (a completed withdrawal whose transaction left the chain): each leg
 * gives back what it was paid, in one entry for the order's `round`-th reopening (1, 2…), with `undo`'s postings
 * (what else the settlement booked, the network's fee) riding along. Postings to one account and currency are merged.
 */
export function reopenOrder(
  db: Queryable,
  order: OrderRef<FlowsWith<'reopen'>>,
  move: { account: string; money: Money; from: readonly SettleLeg[]; undo?: readonly Posting[]; round: number },
): Promise<PostedEntry> {
  const postings = new Map<string, Posting>();
  const add = (posting: Posting) => {
    const key = `${posting.account}|${posting.currency}|${posting.bucket}`;
    const amount = addUnits(postings.get(key)?.amount ?? unitsOf(0n), posting.amount);
    postings.set(key, { ...posting, amount });
  };
  add({ account: move.account, currency: move.money.currency, bucket: 'ON_HOLD', amount: move.money.units });
  for (const leg of move.from) add({ account: leg.account, currency: move.money.currency, bucket: 'AVAILABLE', amount: negateUnits(leg.units) });
  for (const posting of move.undo ?? []) add(posting);
  return post(db, { ...entryOf(order, 'reopen', move.round), postings: [...postings.values()].filter((p) => p.amount !== 0n) });
}

/**
 * Moves available money between two accounts as one of the order's steps (a transfer to another user, a withdrawal's
 * network fee); `round` as in settleOrder.
 */
export function transferForOrder<F extends OrderFlow>(
  db: Queryable,
  order: OrderRef<F>,
  step: OrderStep<F>,
  move: { from: string; to: string; money: Money; round?: number },
  whenShort?: WhenShort,
): Promise<PostedEntry> {
  return refusingShort(transfer(db, { ...entryOf(order, step, move.round), from: move.from, to: move.to, ...amountOf(move.money) }), whenShort);
}

/** A step's own entry when it is none of the above (a swap's two-currency exchange, a purchase's credit). */
export function postOrderEntry<F extends OrderFlow>(db: Queryable, order: OrderRef<F>, step: OrderStep<F>, postings: readonly Posting[], whenShort?: WhenShort): Promise<PostedEntry> {
  return refusingShort(post(db, { ...entryOf(order, step), postings }), whenShort);
}

/** Whether the order's step has its entry (an order that may or may not have been held: release only what was). */
export async function hasOrderEntry<F extends OrderFlow>(db: Queryable, order: OrderRef<F>, step: OrderStep<F>): Promise<boolean> {
  const found = await db.query('SELECT 1 FROM ledger_entries WHERE idempotency_key = $1', [orderEntryKey(order.flow, order.id, step)]);
  return (found.rowCount ?? 0) > 0;
}

/*
 * The entries of flows that hold no user's order (deposits and their reversals, sweeps, cold sweeps, fundings):
 * each one a step under an EntryRef from entry-keys.ts (depositEntry, sweepEntry, coldSweepEntry...), the only
 * way such an entry is written.
 */

/** Moves available money between two accounts as the entry `ref`. */
export function transferEntry(db: Queryable, ref: EntryRef, move: { from: string; to: string; money: Money }, whenShort?: WhenShort): Promise<PostedEntry> {
  return refusingShort(transfer(db, { ...refOf(ref), from: move.from, to: move.to, ...amountOf(move.money) }), whenShort);
}

/** Available → on hold on one account as the entry `ref`. */
export function holdEntry(db: Queryable, ref: EntryRef, move: { account: string; money: Money }, whenShort?: WhenShort): Promise<PostedEntry> {
  return refusingShort(hold(db, { ...refOf(ref), account: move.account, ...amountOf(move.money) }), whenShort);
}

/** On hold → available on one account as the entry `ref`. */
export function releaseEntry(db: Queryable, ref: EntryRef, move: { account: string; money: Money }): Promise<PostedEntry> {
  return release(db, { ...refOf(ref), account: move.account, ...amountOf(move.money) });
}

/** The entry `ref` with postings of its own (a reopening that takes several bookings back, a funding). */
export function postEntry(db: Queryable, ref: EntryRef, postings: readonly Posting[], whenShort?: WhenShort): Promise<PostedEntry> {
  return refusingShort(post(db, { ...refOf(ref), postings }), whenShort);
}

const refOf = (ref: EntryRef) => ({ key: ref.key, kind: ref.kind, reference: ref.reference });
