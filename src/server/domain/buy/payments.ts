/**
 * The card provider's signed events applied to buy orders: paid credits the fixed crypto amount from the card
 * settlement account in one ledger entry; failed or cancelled ends the order with nothing credited. Each event id
 * is taken once and an order moves at most once, whoever delivers the event and however often.
 */
import type pg from 'pg';
import type { CardPaymentEvent, CardPaymentStatus } from '../../adapters/card/port.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { Logger } from '../../log.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { ensureUserLedgerAccount, SYSTEM_ACCOUNTS, systemAccountId } from '../ledger.ts';
import { transferForOrder } from '../orders/entries.ts';
import { money } from '../../../lib/money.ts';
import { orderIdOfReference } from '../orders/entry-keys.ts';
import { NOW } from '../orders/sql-set.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';
import type { BuyDeps } from './context.ts';
import { safeCents } from './rules.ts';
import { lockBuyOrder, type BuyOrderRow } from './store.ts';

export type PaymentOutcome = 'applied' | 'duplicate' | 'ignored';

/**
 * Moves a PENDING order to its end, once: SUCCEEDED credits the fixed amount from card settlement, FAILED and
 * CANCELLED end it with nothing credited. Anything else (in-progress statuses, a second or late event) changes nothing.
 */
export async function settleBuyOrder(client: pg.PoolClient, log: Logger, order: BuyOrderRow, status: CardPaymentStatus, reason: string | null): Promise<PaymentOutcome> {
  const target = status === 'SUCCEEDED' ? 'COMPLETED' : status === 'FAILED' || status === 'CANCELLED' ? 'FAILED' : undefined;
  if (!target) return order.state === 'PENDING' ? 'applied' : 'ignored';
  if (order.state !== 'PENDING') {
    if (order.state === target) return 'duplicate';
    if (order.state === 'COMPLETED' || target === 'COMPLETED') log.error({ order: order.id, state: order.state, status }, "a card payment event contradicts the order's final state");
    return 'ignored';
  }
  if (target === 'COMPLETED') {
    const user = await ensureUserLedgerAccount(client, order.walletAccountId);
    const from = systemAccountId(SYSTEM_ACCOUNTS.cardSettlement());
    await transferForOrder(client, { flow: 'buy', id: order.id }, 'credit', { from, to: user, money: money(order.currency, unitsFromRow(order.amount)) });
  }
  const failure = target === 'FAILED' ? (reason ?? 'The payment failed') : null;
  await moveOrder(client, ORDER_TABLES.buy, order.id, {
    from: 'PENDING',
    to: target,
    set: { failure_reason: failure, updated_at: NOW, ...(target === 'COMPLETED' ? { completed_at: NOW } : {}) },
    history: { state: target, set: { failure_reason: failure } },
  });
  await notifyAccountChanged(client, order.walletAccountId);
  return 'applied';
}

/** The provider's webhook, already verified: each event id is taken once; the order moves at most once. */
export async function applyPaymentEvent(deps: Pick<BuyDeps, 'pool' | 'log'>, event: CardPaymentEvent): Promise<PaymentOutcome | 'unknown'> {
  const orderId = orderIdOfReference('buy', event.reference);
  return inTransaction(deps.pool, async (client) => {
    const order = orderId ? await lockBuyOrder(client, orderId) : undefined;
    // Not yet handed to the provider (cannot have been paid): refused, so the provider tries again later.
    if (!order || order.state === 'NEW') return 'unknown';
    const taken = await client.query(`INSERT INTO card_webhook_events (event_id, payment_id, order_id, status, outcome) VALUES ($1, $2, $3, $4, 'pending') ON CONFLICT DO NOTHING`, [
      event.eventId,
      event.paymentId,
      order.id,
      event.status,
    ]);
    if (!taken.rowCount) return 'duplicate';
    let outcome: PaymentOutcome;
    const sameMoney = event.currency === order.fiatCurrency && safeCents(event.amount) === unitsFromRow(order.fiatAmount, 'fiat_amount');
    if (order.providerPaymentId !== event.paymentId || !sameMoney) {
      deps.log.error({ order: order.id, paymentId: event.paymentId, amount: event.amount, currency: event.currency }, 'a card payment event does not match its order');
      outcome = 'ignored';
    } else {
      outcome = await settleBuyOrder(client, deps.log, order, event.status, event.reason ?? null);
    }
    await client.query('UPDATE card_webhook_events SET outcome = $2 WHERE event_id = $1', [event.eventId, outcome]);
    return outcome;
  });
}
