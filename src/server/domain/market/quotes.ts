/**
 * Quotes nobody took (issue 28 item 8): swap quotes, buy and sell rates and withdrawal fee quotes past their end by an
 * hour are deleted, in batches. One that an order took stays with it, with the prices it was made from.
 */
import type pg from 'pg';

const GRACE = `interval '1 hour'`;
const BATCH = 5000;

export async function purgeExpiredQuotes(pool: pg.Pool): Promise<number> {
  let purged = 0;
  const statements = [
    `DELETE FROM swap_quotes WHERE id IN (
       SELECT q.id FROM swap_quotes q WHERE q.expires_at < now() - ${GRACE}
          AND NOT EXISTS (SELECT 1 FROM swap_orders o WHERE o.quote_id = q.id) LIMIT ${BATCH})`,
    `DELETE FROM buy_rate_quotes WHERE id IN (
       SELECT q.id FROM buy_rate_quotes q WHERE q.expires_at < now() - ${GRACE}
          AND NOT EXISTS (SELECT 1 FROM buy_orders o WHERE o.rate_id = q.id) LIMIT ${BATCH})`,
    `DELETE FROM sell_rate_quotes WHERE id IN (
       SELECT q.id FROM sell_rate_quotes q WHERE q.expires_at < now() - ${GRACE}
          AND NOT EXISTS (SELECT 1 FROM sell_orders o WHERE o.rate_id = q.id) LIMIT ${BATCH})`,
    `DELETE FROM withdrawal_fee_quotes WHERE id IN (
       SELECT q.id FROM withdrawal_fee_quotes q WHERE q.expires_at < now() - ${GRACE} AND q.withdrawal_id IS NULL LIMIT ${BATCH})`,
  ];
  for (const statement of statements) {
    for (;;) {
      const result = await pool.query(statement);
      purged += result.rowCount ?? 0;
      if ((result.rowCount ?? 0) < BATCH) break;
    }
  }
  return purged;
}
