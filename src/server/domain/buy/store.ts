/** Reading buy orders: the whole row under the schema's names, by owner, by idempotency key, or locked for a change. */
import type { Queryable } from '../ledger.ts';
import { selectList } from '../../db/columns.ts';
import { buyOrders } from '../../db/schema/buy.ts';
import { BuyError } from './errors.ts';
import type { BuyOrderRow } from './view.ts';

export const BUY_ORDER_COLUMNS = selectList(buyOrders);

export async function loadBuyOrder(db: Queryable, account: string, id: string): Promise<BuyOrderRow> {
  const found = await db.query<BuyOrderRow>(`SELECT ${BUY_ORDER_COLUMNS} FROM buy_orders WHERE id = $1 AND wallet_account_id = $2`, [id, account]);
  const row = found.rows[0];
  if (!row) throw new BuyError('B2C_ORDER_NOT_FOUND', 'No such order in this account');
  return row;
}

export async function buyOrderByKey(db: Queryable, account: string, key: string): Promise<BuyOrderRow | undefined> {
  const found = await db.query<BuyOrderRow>(`SELECT ${BUY_ORDER_COLUMNS} FROM buy_orders WHERE wallet_account_id = $1 AND idempotency_key = $2`, [account, key]);
  return found.rows[0];
}

/** The order under a row lock, so one change at a time decides what happens to it. */
export async function lockBuyOrder(db: Queryable, id: string): Promise<BuyOrderRow | undefined> {
  const locked = await db.query<BuyOrderRow>(`SELECT ${BUY_ORDER_COLUMNS} FROM buy_orders WHERE id = $1 FOR UPDATE`, [id]);
  return locked.rows[0];
}
