/**
 * The payout provider's signed report applied to a sell order, once: paid moves the held crypto to the payout
 * settlement account (the order's settle entry), failed gives it back (its release entry). Each step is one ledger
 * entry under its own key (orders/entry-keys.ts), so it happens once whoever delivers the report and however often.
 */
import type { PayoutReport } from '../../adapters/payout/port.ts';
import { inTransaction } from '../../db/transaction.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { SYSTEM_ACCOUNTS, systemAccountId } from '../ledger.ts';
import { releaseOrder, settleOrder } from '../orders/entries.ts';
import { money } from '../../../lib/money.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import { orderIdOfReference } from '../orders/entry-keys.ts';
import { NOW } from '../orders/sql-set.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';
import type { SellDeps } from './context.ts';
import { lockSellOrder } from './store.ts';

export type PayoutOutcome = 'applied' | 'duplicate' | 'conflict' | 'unknown';

/** 'applied', 'duplicate' (already in that state), 'conflict' (already in the other, or another payout) or 'unknown'. */
export async function applyPayoutReport(deps: Pick<SellDeps, 'pool' | 'log'>, report: PayoutReport): Promise<PayoutOutcome> {
  const orderId = orderIdOfReference('sell', report.reference);
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
    const ref = { flow: 'sell', id: orderId } as const;
    const held = { account: order.walletAccountId, money: money(order.currency, unitsFromRow(order.amount)) };
    if (target === 'COMPLETED') await settleOrder(client, ref, { ...held, to: [{ account: systemAccountId(SYSTEM_ACCOUNTS.payoutSettlement()), units: held.money.units }] });
    else await releaseOrder(client, ref, held);
    const reason = report.status === 'FAILED' ? (report.reason ?? 'The payout failed') : null;
    await moveOrder(client, ORDER_TABLES.sell, orderId, {
      from: 'PROCESSING',
      to: target,
      set: { failure_reason: reason, provider_payout_id: { ifNull: report.payoutId }, updated_at: NOW, ...(target === 'COMPLETED' ? { completed_at: NOW } : {}) },
      history: { state: target, set: { failure_reason: reason } },
    });
    await notifyAccountChanged(client, order.walletAccountId);
    return 'applied';
  });
}
