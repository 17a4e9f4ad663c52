/**
 * The worker's expiry of buy orders: unconfirmed orders past their time expire; unpaid ones are cancelled at the
 * provider first, so a payment can never succeed after its order was given up, and then fail (or, had the payment
 * just ended, take its outcome). Quotes a day past their time are dropped.
 */
import type { buyOrders } from '../../db/schema/buy.ts';
import { inTransaction } from '../../db/transaction.ts';
import { paymentsOn, type BuyDeps } from './context.ts';
import { settleBuyOrder } from './payments.ts';
import { NOT_PAID_IN_TIME } from './rules.ts';
import { lockBuyOrder } from './store.ts';

const CANCEL_BATCH = 20;

type Unpaid = Pick<typeof buyOrders.$inferSelect, 'id' | 'providerPaymentId'>;

export async function expireOrders(deps: BuyDeps): Promise<number> {
  const { pool, log } = deps;
  const fresh = await pool.query(`UPDATE buy_orders SET state = 'EXPIRED', updated_at = now() WHERE state = 'NEW' AND expires_at <= now()`);
  let ended = fresh.rowCount ?? 0;
  // Unpaid orders are cancelled at the provider; with buying off there is none to ask, so they wait.
  const due = deps.provider
    ? await pool.query<Unpaid>(
        `SELECT id, provider_payment_id AS "providerPaymentId" FROM buy_orders WHERE state = 'PENDING' AND expires_at <= now() ORDER BY expires_at LIMIT $1`,
        [CANCEL_BATCH],
      )
    : { rows: [] };
  for (const row of due.rows) {
    try {
      // Confirming sets the state and the payment id at once: a PENDING order without one is a fault of ours.
      if (!row.providerPaymentId) throw new Error('a pending buy order has no payment id');
      const status = await paymentsOn(deps).cancelPayment(row.providerPaymentId);
      const outcome = await inTransaction(pool, async (client) => {
        const order = await lockBuyOrder(client, row.id);
        return order ? settleBuyOrder(client, log, order, status, status === 'CANCELLED' ? NOT_PAID_IN_TIME : null) : 'ignored';
      });
      if (outcome === 'applied' && status !== 'PENDING' && status !== 'REQUIRES_ACTION') ended += 1;
    } catch (error) {
      log.warn({ err: error, order: row.id }, 'an unpaid buy order could not be cancelled yet; will retry');
    }
  }
  await pool.query(`DELETE FROM buy_rate_quotes WHERE expires_at < now() - interval '1 day'`);
  return ended;
}
