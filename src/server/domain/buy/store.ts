/** Reading buy orders under the schema's names: by owner, by idempotency key, or locked for a change. */
import { selectColumns } from '../../db/columns.ts';
import { buyOrders } from '../../db/schema/buy.ts';
import type { Queryable } from '../ledger.ts';
import { BuyError } from './errors.ts';

const FIELDS = [
  'id', 'walletAccountId', 'requestHash', 'methodCode', 'currency', 'amount', 'fiatCurrency', 'fiatAmount', 'rate', 'description',
  'returnUrl', 'state', 'providerPaymentId', 'redirectUrl', 'failureReason', 'walletTransactionId', 'expiresAt', 'createdAt', 'completedAt',
] as const;

export type BuyOrderRow = Pick<typeof buyOrders.$inferSelect, (typeof FIELDS)[number]>;

/** The row's columns as `o.…`, for a SELECT from (or RETURNING of) `buy_orders o`. */
export const BUY_ORDER_COLUMNS = selectColumns(buyOrders, 'o', FIELDS);

export async function loadBuyOrder(db: Queryable, account: string, id: string): Promise<BuyOrderRow> {
  const found = await db.query<BuyOrderRow>(`SELECT ${BUY_ORDER_COLUMNS} FROM buy_orders o WHERE o.id = $1 AND o.wallet_account_id = $2`, [id, account]);
  const row = found.rows[0];
  if (!row) throw new BuyError('B2C_ORDER_NOT_FOUND', 'No such order in this account');
  return row;
}

export async function buyOrderByKey(db: Queryable, account: string, key: string): Promise<BuyOrderRow | undefined> {
  const found = await db.query<BuyOrderRow>(`SELECT ${BUY_ORDER_COLUMNS} FROM buy_orders o WHERE o.wallet_account_id = $1 AND o.idempotency_key = $2`, [account, key]);
  return found.rows[0];
}

/** The order under a row lock, so one change at a time decides what happens to it. */
export async function lockBuyOrder(db: Queryable, id: string): Promise<BuyOrderRow | undefined> {
  const locked = await db.query<BuyOrderRow>(`SELECT ${BUY_ORDER_COLUMNS} FROM buy_orders o WHERE o.id = $1 FOR UPDATE`, [id]);
  return locked.rows[0];
}
