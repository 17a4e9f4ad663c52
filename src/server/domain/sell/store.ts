/** Reading sell orders under the schema's names: by id, by idempotency key, or locked for a change. */
import { sellOrders } from '../../db/schema/sell.ts';
import { orderReader } from '../orders/reader.ts';

const FIELDS = [
  'id', 'walletAccountId', 'requestHash', 'state', 'currency', 'amount', 'fiatCurrency', 'fiatAmount', 'rate', 'providerToken',
  'maskedCard', 'bankCode', 'savedCardId', 'providerPayoutId', 'submitAttempts', 'failureReason', 'walletTransactionId', 'createdAt', 'completedAt',
] as const;

export type SellOrderRow = Pick<typeof sellOrders.$inferSelect, (typeof FIELDS)[number]>;

const reader = orderReader(sellOrders, FIELDS);

/** The row's columns as `o.…`, for a SELECT from (or RETURNING of) `sell_orders o`. */
export const SELL_ORDER_COLUMNS = reader.columns;
export const sellOrderById = reader.byId;
export const sellOrderByKey = reader.byKey;
export const lockSellOrder = reader.lock;
