/** Reading sell orders under the schema's names: by id, by idempotency key, or locked for a change. */
import { selectColumns } from '../../db/columns.ts';
import { sellOrders } from '../../db/schema/sell.ts';
import type { Queryable } from '../ledger.ts';

const FIELDS = [
  'id', 'walletAccountId', 'requestHash', 'state', 'currency', 'amount', 'fiatCurrency', 'fiatAmount', 'rate', 'providerToken',
  'maskedCard', 'bankCode', 'savedCardId', 'providerPayoutId', 'submitAttempts', 'failureReason', 'walletTransactionId', 'createdAt', 'completedAt',
] as const;

export type SellOrderRow = Pick<typeof sellOrders.$inferSelect, (typeof FIELDS)[number]>;

/** The row's columns as `o.…`, for a SELECT from (or RETURNING of) `sell_orders o`. */
export const SELL_ORDER_COLUMNS = selectColumns(sellOrders, 'o', FIELDS);

export async function sellOrderById(db: Queryable, id: string, account?: string): Promise<SellOrderRow | undefined> {
  const found =
    account === undefined
      ? await db.query<SellOrderRow>(`SELECT ${SELL_ORDER_COLUMNS} FROM sell_orders o WHERE o.id = $1`, [id])
      : await db.query<SellOrderRow>(`SELECT ${SELL_ORDER_COLUMNS} FROM sell_orders o WHERE o.id = $1 AND o.wallet_account_id = $2`, [id, account]);
  return found.rows[0];
}

export async function sellOrderByKey(db: Queryable, account: string, key: string): Promise<SellOrderRow | undefined> {
  const found = await db.query<SellOrderRow>(`SELECT ${SELL_ORDER_COLUMNS} FROM sell_orders o WHERE o.wallet_account_id = $1 AND o.idempotency_key = $2`, [account, key]);
  return found.rows[0];
}

/** The order under a row lock, so one report at a time decides what happens to it. */
export async function lockSellOrder(db: Queryable, id: string): Promise<SellOrderRow | undefined> {
  const locked = await db.query<SellOrderRow>(`SELECT ${SELL_ORDER_COLUMNS} FROM sell_orders o WHERE o.id = $1 FOR UPDATE`, [id]);
  return locked.rows[0];
}
