/**
 * An on-ramp's transaction events (issue 32 item 4), their signature already checked. Each delivery is taken once
 * (the same body again is a duplicate); the provider's status only moves forward (an older one arriving late changes
 * nothing); the order itself moves at most once: failed ends it Failed with the provider's reason, and completed
 * notes the hash of the coins' transaction, which ties the deposit to the order (onramp-deposits.ts); the order
 * completes when that deposit is credited, never on the provider's word alone.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { OnRampEvent, OnRampTransaction } from '../../adapters/onramp/port.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { Logger } from '../../log.ts';
import type { BuyDeps } from './context.ts';
import { coinOf } from './context.ts';
import { roundedUnits } from './onramp.ts';
import { linkDepositByHash, sameChainText } from './onramp-deposits.ts';
import { failOnRampOrder, isOnRampStatus, onRampFailure, STATUS_RANK } from './onramp-orders.ts';
import { lockBuyOrder, type BuyOrderRow } from './store.ts';

export type OnRampOutcome = 'applied' | 'duplicate' | 'stale' | 'ignored' | 'unknown';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function apply(client: pg.PoolClient, deps: Pick<BuyDeps, 'coins' | 'log'>, order: BuyOrderRow, transaction: OnRampTransaction): Promise<OnRampOutcome> {
  const log: Logger = deps.log;
  if (!sameChainText(transaction.walletAddress, order.walletAddress)) {
    log.error({ order: order.id, transaction: transaction.id, walletAddress: transaction.walletAddress }, 'an on-ramp transaction pays another address than its order');
    return 'ignored';
  }
  const before = isOnRampStatus(order.providerStatus) ? STATUS_RANK[order.providerStatus] : 0;
  const now = STATUS_RANK[transaction.status];
  if (now < before) return 'stale';
  if (now === before && order.providerStatus !== transaction.status && now === STATUS_RANK.completed) {
    log.error({ order: order.id, was: order.providerStatus, now: transaction.status }, "an on-ramp event contradicts its transaction's final status: the first one stands");
    return 'ignored';
  }
  const coin = coinOf(deps, order.currency);
  const reported = transaction.status === 'completed' && transaction.cryptoAmount ? roundedUnits(transaction.cryptoAmount, coin.decimals, 'down').toString() : null;
  await client.query(
    `UPDATE buy_orders SET provider_status = $2, provider_tx_hash = coalesce(provider_tx_hash, $3), provider_amount = coalesce(provider_amount, $4), updated_at = now() WHERE id = $1`,
    [order.id, transaction.status, transaction.txHash, reported],
  );
  if (transaction.status === 'failed') await failOnRampOrder(client, log, order, onRampFailure(transaction, 'The payment failed'));
  if (transaction.status === 'completed' && transaction.txHash && order.state === 'PENDING' && !order.chainDepositId) {
    await linkDepositByHash(client, order, transaction.txHash);
  }
  if (transaction.status === 'completed' && order.state === 'FAILED') log.error({ order: order.id }, 'an on-ramp completed a purchase this wallet had ended: its coins are credited as a deposit');
  if (transaction.status === 'failed' && order.state === 'COMPLETED') log.error({ order: order.id }, 'an on-ramp reports a purchase failed whose coins were credited: the credit stands');
  return 'applied';
}

/** The provider's verified event; `body` is its raw text, whose digest makes the delivery's key. */
export async function applyOnRampEvent(deps: Pick<BuyDeps, 'pool' | 'coins' | 'log' | 'onRamp'>, event: OnRampEvent, body: string): Promise<OnRampOutcome> {
  const transaction = event.transaction;
  const orderId = transaction.reference;
  // A transaction not started from this wallet's widget link (or another wallet's on the same MoonPay account).
  if (!orderId || !UUID.test(orderId)) return 'unknown';
  const key = `${deps.onRamp?.name ?? 'onramp'}:${createHash('sha256').update(body).digest('hex')}`;
  return inTransaction(deps.pool, async (client) => {
    const order = await lockBuyOrder(client, orderId);
    if (!order || order.delivery !== 'CHAIN' || order.state === 'NEW') return 'unknown';
    const taken = await client.query(`INSERT INTO card_webhook_events (event_id, payment_id, order_id, status, outcome) VALUES ($1, $2, $3, $4, 'pending') ON CONFLICT DO NOTHING`, [
      key,
      transaction.id,
      order.id,
      transaction.status,
    ]);
    if (!taken.rowCount) return 'duplicate';
    const outcome = await apply(client, deps, order, transaction);
    await client.query('UPDATE card_webhook_events SET outcome = $2 WHERE event_id = $1', [key, outcome]);
    return outcome;
  });
}
