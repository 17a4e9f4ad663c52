/**
 * The payout provider's signed report applied to a sell order, once: paid moves the held crypto to the payout
 * settlement account, failed gives it back. Each step is one ledger entry under its own key, so it happens once
 * whoever delivers the report and however often.
 */
import type { PayoutReport } from '../../adapters/payout/port.ts';
import { inTransaction } from '../../db/transaction.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { release, settle, SYSTEM_ACCOUNTS, systemAccountId } from '../ledger.ts';
import type { SellDeps } from './context.ts';
import { lockSellOrder } from './store.ts';

export type PayoutOutcome = 'applied' | 'duplicate' | 'conflict' | 'unknown';

/** The ledger keys of an order's three possible steps (also read by the audit). */
export const sellEntryKeys = (orderId: string) => ({ hold: `sell:hold:${orderId}`, settle: `sell:settle:${orderId}`, release: `sell:release:${orderId}` });

/** 'applied', 'duplicate' (already in that state), 'conflict' (already in the other, or another payout) or 'unknown'. */
export async function applyPayoutReport(deps: Pick<SellDeps, 'pool' | 'log'>, report: PayoutReport): Promise<PayoutOutcome> {
  const orderId = /^sell:([0-9a-f-]{36})$/i.exec(report.reference)?.[1];
  if (!orderId) return 'unknown';
  const { log } = deps;
  return inTransaction(deps.pool, async (client) => {
    const order = await lockSellOrder(client, orderId);
    if (!order) return 'unknown';
    if (order.providerPayoutId && report.payoutId !== order.providerPayoutId) {
      log.error({ order: orderId, payout: report.payoutId, expected: order.providerPayoutId }, "a payout report names another payout than the order's");
      return 'conflict';
    }
    const target = report.status === 'SUCCEEDED' ? 'COMPLETED' : 'FAILED';
    if (order.state !== 'PROCESSING') {
      if (order.state !== target) log.error({ order: orderId, state: order.state, report: report.status }, "a payout report contradicts the order's final state");
      return order.state === target ? 'duplicate' : 'conflict';
    }
    const amount = BigInt(order.amount);
    const keys = sellEntryKeys(orderId);
    const reason = report.status === 'FAILED' ? (report.reason ?? 'The payout failed') : null;
    if (target === 'COMPLETED') {
      await settle(client, {
        key: keys.settle,
        kind: 'SELL_PAYOUT',
        reference: `sell:${orderId}`,
        account: order.walletAccountId,
        currency: order.currency,
        to: [{ account: systemAccountId(SYSTEM_ACCOUNTS.payoutSettlement()), amount }],
      });
    } else {
      await release(client, { key: keys.release, kind: 'SELL_RETURN', reference: `sell:${orderId}`, account: order.walletAccountId, currency: order.currency, amount });
    }
    await client.query(
      `UPDATE sell_orders SET state = $2, failure_reason = $3, provider_payout_id = coalesce(provider_payout_id, $4), updated_at = now(),
              completed_at = CASE WHEN $2 = 'COMPLETED' THEN now() END WHERE id = $1`,
      [orderId, target, reason, report.payoutId],
    );
    await client.query(
      `UPDATE wallet_transactions SET state = $2, failure_reason = $3, updated_at = now(), completed_at = CASE WHEN $2 = 'COMPLETED' THEN now() END WHERE id = $1`,
      [order.walletTransactionId, target, reason],
    );
    await notifyAccountChanged(client, order.walletAccountId);
    return 'applied';
  });
}
