/**
 * The worker's expiry of buy orders: unconfirmed orders past their time expire; unpaid ones are cancelled at the
 * provider first, so a payment can never succeed after its order was given up, and then fail (or, had the payment
 * just ended, take its outcome). Quotes a day past their time are dropped.
 */
import type { buyOrders } from '../../db/schema/buy.ts';
import { inTransaction } from '../../db/transaction.ts';
import { NOW } from '../orders/sql-set.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';
import { paymentsOn, type BuyDeps } from './context.ts';
import { cancelOnRampOrder, expireOnRampOrders } from './onramp-orders.ts';
import { settleBuyOrder } from './payments.ts';
import { CANCELLED_BY_USER, NOT_PAID_IN_TIME } from './rules.ts';
import { loadBuyOrder, lockBuyOrder } from './store.ts';
import { buyOrderView, type BuyOrderView } from './view.ts';

const CANCEL_BATCH = 20;

type Due = Pick<typeof buyOrders.$inferSelect, 'id' | 'providerPaymentId'>;

/** NEW orders past their time: never confirmed, so nothing was asked of the provider and nothing is shown. */
async function expireUnconfirmed(deps: BuyDeps): Promise<number> {
  const due = await deps.pool.query<Pick<Due, 'id'>>(`SELECT id FROM buy_orders WHERE state = 'NEW' AND expires_at <= now()`);
  let expired = 0;
  for (const { id } of due.rows) {
    // A confirmation that took the order first wins; it is no longer NEW.
    if (await moveOrder(deps.pool, ORDER_TABLES.buy, id, { from: 'NEW', to: 'EXPIRED', set: { updated_at: NOW }, ifMoved: 'skip' })) expired += 1;
  }
  return expired;
}

/**
 * A confirmed, unpaid order given up: its payment is cancelled at the provider first, then the order takes the
 * payment's status under its row lock (CANCELLED fails it with `reason`; a payment that had just ended keeps its
 * outcome). Safe to repeat and to race the provider's webhook: the order moves at most once.
 */
async function cancelPending(deps: BuyDeps, row: Due, reason: string) {
  // Confirming sets the state and the payment id at once: a PENDING order without one is a fault of ours.
  if (!row.providerPaymentId) throw new Error('a pending buy order has no payment id');
  const status = await paymentsOn(deps).cancelPayment(row.providerPaymentId);
  const outcome = await inTransaction(deps.pool, async (client) => {
    const order = await lockBuyOrder(client, row.id);
    return order ? settleBuyOrder(client, deps.log, order, status, status === 'CANCELLED' ? reason : null) : 'ignored';
  });
  return { outcome, status };
}

/**
 * The user gave the order up (back from the provider's page without paying, issue 19 item 15): a NEW order
 * expires at once; a PENDING one is cancelled at the provider and ends as its payment did (a payment made just
 * before is kept and credited). Idempotent; a confirmation racing it either finds the order gone (EXPIRED) or
 * hands it to the provider first, and then this cancels that payment. Answers the order as it now is.
 */
export async function cancelOrder(deps: BuyDeps, account: string, id: string): Promise<BuyOrderView> {
  const order = await loadBuyOrder(deps.pool, account, id);
  if (order.state === 'NEW') {
    await moveOrder(deps.pool, ORDER_TABLES.buy, id, { from: 'NEW', to: 'EXPIRED', set: { updated_at: NOW }, ifMoved: 'skip' });
  }
  const now = await loadBuyOrder(deps.pool, account, id);
  if (now.state === 'PENDING' && now.delivery === 'CHAIN') await cancelOnRampOrder(deps, now);
  else if (now.state === 'PENDING' && deps.provider) await cancelPending(deps, now, CANCELLED_BY_USER);
  return buyOrderView(await loadBuyOrder(deps.pool, account, id));
}

export async function expireOrders(deps: BuyDeps): Promise<number> {
  const { pool, log } = deps;
  let ended = await expireUnconfirmed(deps);
  // Unpaid orders are cancelled at the provider; with buying off there is none to ask, so they wait.
  const due = deps.provider
    ? await pool.query<Due>(
        `SELECT id, provider_payment_id AS "providerPaymentId" FROM buy_orders WHERE state = 'PENDING' AND delivery = 'LEDGER' AND expires_at <= now() ORDER BY expires_at LIMIT $1`,
        [CANCEL_BATCH],
      )
    : { rows: [] };
  for (const row of due.rows) {
    try {
      const { outcome, status } = await cancelPending(deps, row, NOT_PAID_IN_TIME);
      if (outcome === 'applied' && status !== 'PENDING' && status !== 'REQUIRES_ACTION') ended += 1;
    } catch (error) {
      log.warn({ err: error, order: row.id }, 'an unpaid buy order could not be cancelled yet; will retry');
    }
  }
  // An on-ramp's purchases are looked up at the provider, which has no payment of ours to cancel.
  ended += await expireOnRampOrders(deps);
  await pool.query(`DELETE FROM buy_rate_quotes WHERE expires_at < now() - interval '1 day'`);
  return ended;
}
