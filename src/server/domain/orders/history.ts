/**
 * An order's history item (wallet_transactions, what the user sees in SPEC §3 Transaction): written when the order
 * opens, and moved with the order's state by moveOrder in the same statement.
 */
import { getTableColumns } from 'drizzle-orm';
import { walletTransactions } from '../../db/schema/wallet.ts';
import type { Queryable } from '../ledger.ts';

export type HistoryState = (typeof walletTransactions.$inferSelect)['state'];
export type HistoryItem = Omit<typeof walletTransactions.$inferInsert, 'id' | 'createdAt' | 'updatedAt' | 'completedAt'>;

const COLUMNS = getTableColumns(walletTransactions);

/** Inserts a history item (completed now when its state is COMPLETED) and returns its id. */
export async function recordHistory(db: Queryable, item: HistoryItem): Promise<string> {
  const entries = Object.entries(item).filter(([, value]) => value !== undefined);
  const names = entries.map(([field]) => {
    const column = COLUMNS[field as keyof typeof COLUMNS];
    if (!column) throw new Error(`wallet_transactions has no field ${field}`);
    return column.name;
  });
  const values = entries.map(([, value]) => value);
  const inserted = await db.query<{ id: string }>(
    `INSERT INTO wallet_transactions (${names.join(', ')}, completed_at)
     VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')}, ${item.state === 'COMPLETED' ? 'now()' : 'NULL'}) RETURNING id`,
    values,
  );
  const id = inserted.rows[0]?.id;
  if (!id) throw new Error('the history item was not saved');
  return id;
}

/**
 * Shows a history item in `state` when the order it stands for did not move (moveOrder moves the two together): an
 * item that takes over from another, as a purchase's takes its deposit's state (buy/onramp-deposits.ts). Completed
 * keeps its first completion time; any other state has none.
 */
export async function showHistoryState(db: Queryable, itemId: string | null, state: HistoryState): Promise<void> {
  if (itemId === null) return;
  await db.query(
    `UPDATE wallet_transactions SET state = $2, completed_at = CASE WHEN $2 = 'COMPLETED' THEN coalesce(completed_at, now()) END, updated_at = now() WHERE id = $1`,
    [itemId, state],
  );
}
