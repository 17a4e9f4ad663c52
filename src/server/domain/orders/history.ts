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
