/**
 * An order's state moves only by a guarded `UPDATE … SET state = $to WHERE id = $1 AND state = ANY($from)`, and its
 * history item (wallet_transactions) follows in the same statement. Zero rows moved means another transaction moved
 * the order first: that is decided here, once (`ifMoved`), not by each flow. A move the user is told of in Telegram
 * (notifications.ts) queues its message here, in the same transaction.
 */
import { DomainError } from '../errors.ts';
import type { Queryable } from '../ledger.ts';
import type { HistoryState } from './history.ts';
import { NOW, setClauses, type Assign } from './sql-set.ts';
import { moveEvent, queueOrderNotification } from '../notifications.ts';

/** The tables of orders and the column that holds each one's history item. */
export const ORDER_TABLES = {
  withdrawal: { table: 'withdrawals', history: 'wallet_transaction_id' },
  swap: { table: 'swap_orders', history: 'wallet_transaction_id' },
  sell: { table: 'sell_orders', history: 'wallet_transaction_id' },
  buy: { table: 'buy_orders', history: 'wallet_transaction_id' },
  deposit: { table: 'chain_deposits', history: 'wallet_transaction_id' },
  /** The custodian's own movements, which no user's history shows: sweeps, cold sweeps and consolidations. */
  sweep: { table: 'sweeps' },
  custodyMovement: { table: 'custody_movements' },
  /** The desk's hedges on an exchange (market/hedge.ts) and the operators' credits and debits (operator/adjustments.ts). */
  hedge: { table: 'desk_hedges' },
  adjustment: { table: 'operator_adjustments' },
} as const;

/** An order table and its column holding the history item's id, if it has one; names come from code, never from input. */
export type OrderTable = { readonly table: string; readonly history?: string };

/** Another transaction moved the order first (a second worker, a confirm racing an expiry). */
export class OrderMovedError extends DomainError<'ORDER_STATE_CHANGED'> {}

export type Move<S extends string> = {
  from: S | readonly S[];
  to: S;
  /** Other columns of the order to set with the state (`closed_at: NOW`, `failure_reason: reason`...). */
  set?: Readonly<Record<string, Assign>>;
  /** The history item's new state and other columns; left out, the history item is not touched. */
  history?: { state: HistoryState; set?: Readonly<Record<string, Assign>> };
  /** 'throw' (default): OrderMovedError, which rolls the caller's transaction back. 'skip': return false. */
  ifMoved?: 'throw' | 'skip';
};

/** Moves one order from one of `from` to `to`; returns whether it moved (false only with ifMoved 'skip'). */
export async function moveOrder<S extends string>(db: Queryable, order: OrderTable, id: string, move: Move<S>): Promise<boolean> {
  return (await moveOrderReturning<{ id: string }, S>(db, order, id, move, 'o.id')) !== undefined;
}

/**
 * moveOrder that hands back the moved row: `returning` is the select list over the table's alias `o` (from code,
 * never from input); undefined when it did not move (with ifMoved 'skip').
 */
export async function moveOrderReturning<R extends object, S extends string = string>(db: Queryable, order: OrderTable, id: string, move: Move<S>, returning: string): Promise<R | undefined> {
  const values: unknown[] = [id, typeof move.from === 'string' ? [move.from] : move.from, move.to];
  const sets = ['state = $3', ...setClauses(move.set ?? {}, values)];
  const history = order.history === undefined ? '' : `, o.${order.history} AS "__history"`;
  let text = `UPDATE ${order.table} o SET ${sets.join(', ')} WHERE o.id = $1 AND o.state = ANY($2::text[]) RETURNING ${returning}${history}`;
  if (move.history) {
    if (order.history === undefined) throw new Error(`${order.table} has no history item to move`);
    const { state, set } = move.history;
    const shown = setClauses({ state, updated_at: NOW, ...(state === 'COMPLETED' ? { completed_at: NOW } : {}), ...set }, values);
    text = `WITH moved AS (${text}),
      shown AS (UPDATE wallet_transactions t SET ${shown.join(', ')} FROM moved WHERE t.id = moved."__history" RETURNING t.id)
      SELECT moved.*, (SELECT count(*) FROM shown)::int AS "__shown" FROM moved`;
  }
  const result = await db.query<Record<string, unknown>>(text, values);
  const row = result.rows[0];
  if (row) {
    // A move the user hears of in Telegram (a deposit credited, a withdrawal sent...) queues its message with it.
    const event = moveEvent(order.table, move.to);
    if (event && order.history !== undefined) await queueOrderNotification(db, { table: order.table, history: order.history }, id, event);
    const moved: Record<string, unknown> = { ...row };
    delete moved.__history;
    delete moved.__shown;
    return moved as R;
  }
  if (move.ifMoved === 'skip') return undefined;
  throw new OrderMovedError('ORDER_STATE_CHANGED', `${order.table} ${id} is no longer ${String(move.from)}: another request moved it`);
}
