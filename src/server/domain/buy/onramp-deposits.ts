/**
 * An on-ramp's coins arriving on chain (issue 32 item 5): the chain scan records them as a deposit to the buyer's
 * deposit address like any other, and this module ties that deposit to the purchase it completes, so the history
 * shows one Buy item and the ledger one credit (the deposit's: world to the user, exactly once, as every deposit).
 * The tie is by the transaction hash the provider reported, or, while it has reported none, by address, amount and
 * time: a pending purchase of that coin to that address, confirmed before the coins came, whose estimate (or the
 * amount the provider reported) the deposit matches. The purchase completes when its deposit is credited, whichever
 * of the webhook and the deposit came first. Called inside the deposit's own transaction (deposits.ts).
 */
import { notifyAccountChanged } from '../account-changes.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import type { Queryable } from '../ledger.ts';
import { showHistoryState } from '../orders/history.ts';
import { NOW } from '../orders/sql-set.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';
import { ON_RAMP_AMOUNT_TOLERANCE_BPS } from './rules.ts';
import { type Units } from '../../../lib/money.ts';

/** A transfer to a deposit address as deposits.ts recorded it. */
export type RecordedDeposit = { id: string; walletAccountId: string; network: string; currency: string; txHash: string; toAddress: string; fromAddress: string | null; amount: Units };

/** A pending on-ramp purchase that could be the one a deposit brings. */
export type AwaitingOrder = { id: string; amount: string; providerTxHash: string | null; providerAmount: string | null; walletTransactionId: string | null; createdAt: Date };

/** Hashes and addresses as chains write them: hex in either case is the same. */
export const sameChainText = (a: string | null | undefined, b: string | null | undefined): boolean => !!a && !!b && a.toLowerCase() === b.toLowerCase();

const distance = (a: bigint, b: bigint) => (a > b ? a - b : b - a);

/**
 * The purchase a deposit brings, of those awaiting coins to its address (oldest first): the one whose reported hash
 * is the deposit's; else, among those with no hash reported yet, the one whose reported amount is the deposit's, or
 * whose estimate is within ON_RAMP_AMOUNT_TOLERANCE_BPS of it, the closest first.
 */
export function matchingOrder(orders: readonly AwaitingOrder[], deposit: Pick<RecordedDeposit, 'txHash' | 'amount'>): AwaitingOrder | undefined {
  const byHash = orders.find((o) => sameChainText(o.providerTxHash, deposit.txHash));
  if (byHash) return byHash;
  // What each purchase should bring: the amount the provider reported, else its estimate.
  const expected = (o: AwaitingOrder) => unitsFromRow(o.providerAmount ?? o.amount);
  const fits = orders.filter((o) => {
    if (o.providerTxHash) return false;
    if (o.providerAmount !== null) return expected(o) === deposit.amount;
    return distance(expected(o), deposit.amount) * 10_000n <= expected(o) * BigInt(ON_RAMP_AMOUNT_TOLERANCE_BPS);
  });
  return fits.toSorted((a, b) => {
    const nearer = distance(expected(a), deposit.amount) - distance(expected(b), deposit.amount);
    return nearer === 0n ? a.createdAt.getTime() - b.createdAt.getTime() : nearer < 0n ? -1 : 1;
  })[0];
}

const AWAITING = `SELECT id, amount::text, provider_tx_hash AS "providerTxHash", provider_amount::text AS "providerAmount",
                         wallet_transaction_id AS "walletTransactionId", created_at AS "createdAt"
                    FROM buy_orders
                   WHERE wallet_account_id = $1 AND currency = $2 AND delivery = 'CHAIN' AND state = 'PENDING' AND chain_deposit_id IS NULL
                     AND lower(wallet_address) = lower($3)`;

/** The purchase now holds the deposit: its amount is what came, and its history item shows the chain transfer. */
async function attach(db: Queryable, order: AwaitingOrder, deposit: RecordedDeposit): Promise<void> {
  await db.query(`UPDATE buy_orders SET chain_deposit_id = $2, amount = $3, provider_tx_hash = coalesce(provider_tx_hash, $4), updated_at = now() WHERE id = $1`, [
    order.id,
    deposit.id,
    deposit.amount.toString(),
    deposit.txHash,
  ]);
  await db.query(
    `UPDATE wallet_transactions SET amount = $2, to_amount = $2, hash = $3, network = $4, from_address = $5, to_address = $6, updated_at = now() WHERE id = $1`,
    [order.walletTransactionId, deposit.amount.toString(), deposit.txHash, deposit.network, deposit.fromAddress, deposit.toAddress],
  );
}

/**
 * deposits.ts, as it records a new transfer to a deposit address: the history item of the on-ramp purchase the
 * transfer brings (the deposit then shares it and records none of its own), or undefined when it brings none.
 */
export async function buyItemOfDeposit(db: Queryable, deposit: RecordedDeposit): Promise<string | undefined> {
  const awaiting = await db.query<AwaitingOrder>(`${AWAITING} ORDER BY created_at FOR UPDATE`, [deposit.walletAccountId, deposit.currency, deposit.toAddress]);
  const order = matchingOrder(awaiting.rows, deposit);
  if (!order?.walletTransactionId) return undefined;
  await attach(db, order, deposit);
  return order.walletTransactionId;
}

/** PENDING → COMPLETED once: its coins were credited by their deposit. */
async function completeOrder(db: Queryable, orderId: string, walletAccountId: string): Promise<void> {
  const moved = await moveOrder(db, ORDER_TABLES.buy, orderId, {
    from: 'PENDING',
    to: 'COMPLETED',
    set: { completed_at: NOW, updated_at: NOW },
    history: { state: 'COMPLETED' },
    ifMoved: 'skip',
  });
  if (moved) await notifyAccountChanged(db, walletAccountId);
}

type DepositRow = RecordedDeposit & { state: string; walletTransactionId: string | null };

const DEPOSIT = `SELECT id, wallet_account_id AS "walletAccountId", network, currency, tx_hash AS "txHash", to_address AS "toAddress",
                        from_address AS "fromAddress", amount::text AS amount, state, wallet_transaction_id AS "walletTransactionId"
                   FROM chain_deposits`;

function depositOf(row: Omit<DepositRow, 'amount'> & { amount: string }): DepositRow {
  return { ...row, amount: unitsFromRow(row.amount, 'amount') };
}

/**
 * A deposit recorded on its own before the provider reported its hash, now tied to its purchase: the purchase's
 * item takes the deposit's state and the deposit's own item goes, so one item is left; a credited one completes it.
 */
async function linkRecorded(db: Queryable, order: AwaitingOrder, walletAccountId: string, deposit: DepositRow): Promise<void> {
  await attach(db, order, deposit);
  const credited = deposit.state === 'CREDITED';
  await showHistoryState(db, order.walletTransactionId, credited ? 'COMPLETED' : 'IN_PROGRESS');
  await db.query('UPDATE chain_deposits SET wallet_transaction_id = $2 WHERE id = $1', [deposit.id, order.walletTransactionId]);
  if (deposit.walletTransactionId && deposit.walletTransactionId !== order.walletTransactionId) await db.query('DELETE FROM wallet_transactions WHERE id = $1', [deposit.walletTransactionId]);
  if (credited) await completeOrder(db, order.id, walletAccountId);
  await notifyAccountChanged(db, walletAccountId);
}

/**
 * deposits.ts, once a deposit is credited (in the same transaction): the on-ramp purchase it brought completes, also
 * when the deposit was recorded on its own and only the provider's hash, reported since, ties it to the purchase.
 */
export async function settleBuyOfDeposit(db: Queryable, depositId: string): Promise<void> {
  const linked = await db.query<{ id: string; walletAccountId: string }>(`SELECT id, wallet_account_id AS "walletAccountId" FROM buy_orders WHERE chain_deposit_id = $1 FOR UPDATE`, [
    depositId,
  ]);
  const order = linked.rows[0];
  if (order) return completeOrder(db, order.id, order.walletAccountId);
  const found = await db.query<Omit<DepositRow, 'amount'> & { amount: string }>(`${DEPOSIT} WHERE id = $1`, [depositId]);
  const row = found.rows[0];
  if (!row) return;
  const deposit = depositOf(row);
  const awaiting = await db.query<AwaitingOrder>(`${AWAITING} AND lower(provider_tx_hash) = lower($4) ORDER BY created_at FOR UPDATE`, [
    deposit.walletAccountId,
    deposit.currency,
    deposit.toAddress,
    deposit.txHash,
  ]);
  const byHash = awaiting.rows[0];
  if (byHash?.walletTransactionId) await linkRecorded(db, byHash, deposit.walletAccountId, deposit);
}

/**
 * The provider reported the hash of a purchase's coins (its webhook, the order locked by the caller): a deposit
 * already recorded with that hash is tied to it now. One being credited right now is skipped, never waited for:
 * its credit finds the hash on the order and ties them itself (settleBuyOfDeposit).
 */
export async function linkDepositByHash(db: Queryable, order: { id: string; walletAccountId: string; currency: string; walletAddress: string | null }, txHash: string): Promise<boolean> {
  const found = await db.query<Omit<DepositRow, 'amount'> & { amount: string }>(
    `${DEPOSIT} d
      WHERE d.wallet_account_id = $1 AND d.currency = $2 AND lower(d.tx_hash) = lower($3) AND lower(d.to_address) = lower($4) AND d.state IN ('PENDING', 'CREDITED')
        AND NOT EXISTS (SELECT 1 FROM buy_orders o WHERE o.chain_deposit_id = d.id)
      ORDER BY d.output_index LIMIT 1 FOR UPDATE SKIP LOCKED`,
    [order.walletAccountId, order.currency, txHash, order.walletAddress ?? ''],
  );
  const row = found.rows[0];
  if (!row) return false;
  const awaiting = await db.query<AwaitingOrder>(`${AWAITING} AND id = $4`, [order.walletAccountId, order.currency, order.walletAddress ?? '', order.id]);
  const pending = awaiting.rows[0];
  if (!pending?.walletTransactionId) return false;
  await linkRecorded(db, pending, order.walletAccountId, depositOf(row));
  return true;
}
