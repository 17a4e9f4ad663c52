/** A swap quote and order as the gateway shows them (SPEC §7 exchange), and the reads of an order. */
import { formatMoney, money } from '../../../lib/money.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import { selectColumns } from '../../db/columns.ts';
import { swapOrders } from '../../db/schema/swaps.ts';
import type { Queryable } from '../ledger.ts';
import type { QuoteView, SwapOrderView } from '../../../lib/wire/swaps.ts';

export type { QuoteView, SwapOrderView };

export type SwapOrderState = (typeof swapOrders.$inferSelect)['state'];


const FIELDS = [
  'id',
  'walletAccountId',
  'quoteId',
  'requestHash',
  'state',
  'sourceCurrency',
  'destinationCurrency',
  'sourceAmount',
  'destinationAmount',
  'feeAmount',
  'rate',
  'walletTransactionId',
  'createdAt',
  'expiresAt',
] as const;

/** An order row, with the database's view of its time left (every process agrees on what has expired). */
export type SwapOrderRow = Pick<typeof swapOrders.$inferSelect, (typeof FIELDS)[number]> & { expiresIn: number; expired: boolean };

export const SWAP_ORDER_SELECT = `SELECT ${selectColumns(swapOrders, 'o', FIELDS)},
  greatest(0, ceil(extract(epoch FROM o.expires_at - now())))::int AS "expiresIn", o.expires_at <= now() AS "expired" FROM swap_orders o`;

export async function findSwapOrder(db: Queryable, account: string, id: string, lock = false): Promise<SwapOrderRow | undefined> {
  return (await db.query<SwapOrderRow>(`${SWAP_ORDER_SELECT} WHERE o.id = $1 AND o.wallet_account_id = $2${lock ? ' FOR UPDATE' : ''}`, [id, account])).rows[0];
}

export async function findSwapOrderByKey(db: Queryable, account: string, key: string): Promise<SwapOrderRow | undefined> {
  return (await db.query<SwapOrderRow>(`${SWAP_ORDER_SELECT} WHERE o.wallet_account_id = $1 AND o.idempotency_key = $2`, [account, key])).rows[0];
}

export function orderView(order: SwapOrderRow): SwapOrderView {
  return {
    id: order.id,
    sourceCurrency: order.sourceCurrency,
    destinationCurrency: order.destinationCurrency,
    sourceAmount: formatMoney(money(order.sourceCurrency, unitsFromRow(order.sourceAmount, 'sourceAmount'))),
    destinationAmount: formatMoney(money(order.destinationCurrency, unitsFromRow(order.destinationAmount, 'destinationAmount'))),
    fee: formatMoney(money(order.destinationCurrency, unitsFromRow(order.feeAmount, 'feeAmount'))),
    feeCurrency: order.destinationCurrency,
    rate: order.rate,
    state: order.state,
    createdDate: order.createdAt.toISOString(),
    expiresAt: order.expiresAt.toISOString(),
    expiresInSeconds: order.state === 'PENDING' ? order.expiresIn : 0,
    transactionId: order.walletTransactionId,
  };
}
