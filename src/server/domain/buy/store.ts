/** Reading buy orders under the schema's names: by owner, by idempotency key, or locked for a change. */
import { buyOrders } from '../../db/schema/buy.ts';
import type { Queryable } from '../ledger.ts';
import type { HistoryItem } from '../orders/history.ts';
import { orderReference } from '../orders/entry-keys.ts';
import { orderReader } from '../orders/reader.ts';
import { BuyError } from './errors.ts';

const FIELDS = [
  'id', 'walletAccountId', 'requestHash', 'methodCode', 'currency', 'amount', 'fiatCurrency', 'fiatAmount', 'rate', 'description',
  'returnUrl', 'state', 'providerPaymentId', 'redirectUrl', 'failureReason', 'walletTransactionId', 'expiresAt', 'createdAt', 'completedAt',
  'delivery', 'walletAddress', 'providerStatus', 'providerTxHash', 'providerAmount', 'chainDepositId',
] as const;

export type BuyOrderRow = Pick<typeof buyOrders.$inferSelect, (typeof FIELDS)[number]>;

const reader = orderReader(buyOrders, FIELDS);

/** The row's columns as `o.…`, for a SELECT from (or RETURNING of) `buy_orders o`. */
export const BUY_ORDER_COLUMNS = reader.columns;

export async function loadBuyOrder(db: Queryable, account: string, id: string): Promise<BuyOrderRow> {
  const row = await reader.byId(db, id, account);
  if (!row) throw new BuyError('B2C_ORDER_NOT_FOUND', 'No such order in this account');
  return row;
}

export const buyOrderByKey = reader.byKey;
export const lockBuyOrder = reader.lock;

/** A purchase's history item (SPEC §3 Transaction, FIAT_DEPOSIT), Pending; `to` says where an on-ramp sends the coins. */
export function buyHistoryItem(order: BuyOrderRow, to: Pick<HistoryItem, 'network' | 'toAddress'> = {}): HistoryItem {
  return {
    walletAccountId: order.walletAccountId,
    transactionType: 'FIAT_DEPOSIT',
    direction: 'DEPOSIT',
    state: 'IN_PROGRESS',
    currency: order.currency,
    amount: order.amount,
    ...to,
    accountToType: 'B2C',
    fiatCurrency: order.fiatCurrency,
    fiatAmount: order.fiatAmount,
    exchangeRate: order.rate,
    fromCurrency: order.fiatCurrency,
    toCurrency: order.currency,
    fromAmount: order.fiatAmount,
    toAmount: order.amount,
    reference: orderReference('buy', order.id),
  };
}
