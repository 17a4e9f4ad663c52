/** Reading buy orders under the schema's names: by owner, by idempotency key, or locked for a change. */
import { buyOrders } from '../../db/schema/buy.ts';
import type { Queryable } from '../ledger.ts';
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
