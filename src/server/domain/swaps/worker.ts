import type pg from 'pg';
import { inTransaction } from '../../db/transaction.ts';
import { closeSwap } from './settlement.ts';
import { SWAP_ORDER_SELECT, type SwapOrderRow } from './view.ts';

/**
 * The worker's job: closes pending orders whose quote has run out (the user left the review), releasing their
 * holds; then forgets quotes no order took, a day after they expired. Rows another process holds are skipped.
 */
export async function expireSwapOrders(pool: pg.Pool, batch = 100): Promise<number> {
  const expired = await inTransaction(pool, async (client) => {
    const due = await client.query<SwapOrderRow>(`${SWAP_ORDER_SELECT} WHERE o.state = 'PENDING' AND o.expires_at <= now() ORDER BY o.expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`, [batch]);
    for (const order of due.rows) await closeSwap(client, order, 'EXPIRED');
    return due.rows.length;
  });
  await pool.query(`DELETE FROM swap_quotes q WHERE q.expires_at < now() - interval '1 day' AND NOT EXISTS (SELECT 1 FROM swap_orders o WHERE o.quote_id = q.id)`);
  return expired;
}
