import type pg from 'pg';
import { inTransaction } from '../../db/transaction.ts';
import { closeSwap } from './settlement.ts';
import { SWAP_ORDER_SELECT, type SwapOrderRow } from './view.ts';

/**
 * The worker's job: closes pending orders whose quote has run out (the user left the review), releasing their
 * holds. Rows another process holds are skipped. Quotes no order took go with the others (market/quotes.ts).
 */
export async function expireSwapOrders(pool: pg.Pool, batch = 100): Promise<number> {
  return inTransaction(pool, async (client) => {
    const due = await client.query<SwapOrderRow>(`${SWAP_ORDER_SELECT} WHERE o.state = 'PENDING' AND o.expires_at <= now() ORDER BY o.expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`, [batch]);
    for (const order of due.rows) await closeSwap(client, order, 'EXPIRED');
    return due.rows.length;
  });
}
