/**
 * An order's state moves only by a guarded `UPDATE … SET state = $to WHERE id = $1 AND state = ANY($from)`, and its
 * history item (wallet_transactions) follows in the same statement. Zero rows moved means another transaction moved
 * the order first: that is decided here, once (`ifMoved`), not by each flow.
 */
import { DomainError } from '../errors.ts';
import type { Queryable } from '../ledger.ts';
import type { HistoryState } from './history.ts';
import { NOW, setClauses, type Assign } from './sql-set.ts';

/** The tables of orders and the column that holds each one's history item. */
export const ORDER_TABLES = {
  withdrawal: { table: 'withdrawals', history: 'wallet_transaction_id' },
  swap: { table: 'swap_orders', history: 'wallet_transaction_id' },
  sell: { table: 'sell_orders', history: 'wallet_transaction_id' },
  buy: { table: 'buy_orders', history: 'wallet_transaction_id' },
  deposit: { table: 'chain_deposits', history: 'wallet_transaction_id' },
} as const;

/** An order table and its column holding the history item's id; names come from code, never from input. */
export type OrderTable = { readonly table: string; readonly history: string };

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
  const values: unknown[] = [id, typeof move.from === 'string' ? [move.from] : move.from, move.to];
  const sets = ['state = $3', ...setClauses(move.set ?? {}, values)];
  let text = `UPDATE ${order.table} SET ${sets.join(', ')} WHERE id = $1 AND state = ANY($2::text[]) RETURNING id, ${order.history} AS history`;
  if (move.history) {
    const { state, set } = move.history;
    const shown = setClauses({ state, updated_at: NOW, ...(state === 'COMPLETED' ? { completed_at: NOW } : {}), ...set }, values);
    text = `WITH moved AS (${text}),
      shown AS (UPDATE wallet_transactions t SET ${shown.join(', ')} FROM moved WHERE t.id = moved.history RETURNING t.id)
      SELECT moved.id, (SELECT count(*) FROM shown)::int AS shown FROM moved`;
  }
  const result = await db.query<{ id: string }>(text, values);
  if (result.rows.length > 0) return true;
  if (move.ifMoved === 'skip') return false;
  throw new OrderMovedError('ORDER_STATE_CHANGED', `${order.table} ${id} is no longer ${String(move.from)}: another request moved it`);
}
