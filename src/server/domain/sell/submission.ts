/**
 * Handing sell orders to the payout provider: right after the hold commits, and again by the worker for orders the
 * provider has not taken yet (the request's own attempt failed or crashed). The crypto stays held until it does.
 */
import { ALERT_AFTER_ATTEMPTS } from '../../log.ts';
import { PayoutUnavailableError } from '../../adapters/payout/port.ts';
import { orderReference } from '../orders/entry-keys.ts';
import { payoutsOn, type SellDeps } from './context.ts';
import { SELL_ORDER_COLUMNS, type SellOrderRow } from './store.ts';
import { unitsFromRow } from '../../db/amounts.ts';

const SUBMIT_BATCH = 20;

export async function submitOrder(deps: Pick<SellDeps, 'pool' | 'provider'>, order: Pick<SellOrderRow, 'id' | 'providerToken' | 'fiatAmount' | 'fiatCurrency'>): Promise<void> {
  await deps.pool.query('UPDATE sell_orders SET submit_attempts = submit_attempts + 1 WHERE id = $1', [order.id]);
  const accepted = await payoutsOn(deps).createPayout({ reference: orderReference('sell', order.id), token: order.providerToken, amount: unitsFromRow(order.fiatAmount, 'fiat_amount'), currency: order.fiatCurrency });
  await deps.pool.query('UPDATE sell_orders SET provider_payout_id = $2, updated_at = now() WHERE id = $1 AND provider_payout_id IS NULL', [order.id, accepted.payoutId]);
}

/** The worker's retry of orders the provider has not yet taken (old quotes go with the others: market/quotes.ts). */
export async function submitPending(deps: SellDeps): Promise<number> {
  const { pool, log } = deps;
  const pending = await pool.query<SellOrderRow>(
    `SELECT ${SELL_ORDER_COLUMNS} FROM sell_orders o WHERE o.state = 'PROCESSING' AND o.provider_payout_id IS NULL AND o.updated_at < now() - interval '3 seconds'
      ORDER BY o.created_at LIMIT $1`,
    [SUBMIT_BATCH],
  );
  let submitted = 0;
  for (const order of pending.rows) {
    try {
      await submitOrder(deps, order);
      await pool.query('UPDATE sell_orders SET updated_at = now() WHERE id = $1', [order.id]);
      submitted++;
    } catch (error) {
      await pool.query('UPDATE sell_orders SET updated_at = now() WHERE id = $1', [order.id]);
      const attempts = order.submitAttempts + 1;
      // From the tenth try on the operator should look.
      log[attempts >= ALERT_AFTER_ATTEMPTS ? 'error' : 'warn'](
        { err: error instanceof PayoutUnavailableError ? error.message : error, order: order.id, attempts },
        'sell order still not accepted by the payout provider',
      );
    }
  }
  return submitted;
}
