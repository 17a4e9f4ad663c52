/**
 * A swap order's ending: confirmed, ONE ledger entry moves the source from the user's hold to the swap desk and the
 * destination from the desk's inventory to the user, the spread to fee income; expired or cancelled, the hold is
 * released. The desk sells only what it holds, down to its limit per currency (market/desk.ts).
 */
import { notifyAccountChanged } from '../account-changes.ts';
import { SYSTEM_ACCOUNTS, systemAccountId, type Posting, type Queryable } from '../ledger.ts';
import { DESK_ACCOUNT, reserveInventory } from '../market/desk.ts';
import { postOrderEntry, releaseOrder } from '../orders/entries.ts';
import { money } from '../../../lib/money.ts';
import { orderReference } from '../orders/entry-keys.ts';
import { NOW } from '../orders/sql-set.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';
import type { SwapOrderRow } from './view.ts';

type Settled = Pick<SwapOrderRow, 'id' | 'walletAccountId' | 'sourceCurrency' | 'destinationCurrency' | 'sourceAmount' | 'destinationAmount' | 'feeAmount'>;

/**
 * The one entry of a confirmed swap: source hold → desk, desk → user (destination), spread → fee income. Refused
 * (DeskInventoryError, nothing moved) when the desk would go below its limit of the destination currency.
 */
export async function settleSwap(db: Queryable, order: Settled, inventoryLimits: Readonly<Record<string, string>>): Promise<void> {
  const liquidity = DESK_ACCOUNT;
  const source = BigInt(order.sourceAmount);
  const destination = BigInt(order.destinationAmount);
  const fee = BigInt(order.feeAmount);
  await reserveInventory(db, order.destinationCurrency, destination + fee, inventoryLimits);
  const postings: Posting[] = [
    { account: order.walletAccountId, currency: order.sourceCurrency, bucket: 'ON_HOLD', amount: -source },
    { account: liquidity, currency: order.sourceCurrency, bucket: 'AVAILABLE', amount: source },
    { account: liquidity, currency: order.destinationCurrency, bucket: 'AVAILABLE', amount: -(destination + fee) },
    { account: order.walletAccountId, currency: order.destinationCurrency, bucket: 'AVAILABLE', amount: destination },
  ];
  if (fee > 0n) postings.push({ account: systemAccountId(SYSTEM_ACCOUNTS.feeIncome()), currency: order.destinationCurrency, bucket: 'AVAILABLE', amount: fee });
  await postOrderEntry(db, { flow: 'swap', id: order.id }, 'confirm', postings);
  await moveOrder(db, ORDER_TABLES.swap, order.id, { from: 'PENDING', to: 'COMPLETED', set: { closed_at: NOW }, history: { state: 'COMPLETED' } });
  // The destination shows in the account even if the user never added it (or hid it).
  await db.query(
    `INSERT INTO account_assets (wallet_account_id, currency) VALUES ($1, $2)
     ON CONFLICT (wallet_account_id, currency) DO UPDATE SET archived_at = NULL`,
    [order.walletAccountId, order.destinationCurrency],
  );
  await notifyAccountChanged(db, order.walletAccountId);
}

/**
 * Releases a pending order's hold. An expired one stays in the history as 'Failed to swap'; a cancelled one (the
 * user asked for a fresh rate) leaves no item: nothing happened to their money.
 */
export async function closeSwap(db: Queryable, order: Settled, state: 'EXPIRED' | 'CANCELLED', reason = 'The rate expired before the swap was confirmed'): Promise<void> {
  await releaseOrder(db, { flow: 'swap', id: order.id }, { account: order.walletAccountId, money: money(order.sourceCurrency, BigInt(order.sourceAmount)) });
  if (state === 'EXPIRED') {
    await moveOrder(db, ORDER_TABLES.swap, order.id, { from: 'PENDING', to: state, set: { closed_at: NOW }, history: { state: 'FAILED', set: { failure_reason: reason } } });
  } else {
    await moveOrder(db, ORDER_TABLES.swap, order.id, { from: 'PENDING', to: state, set: { closed_at: NOW, wallet_transaction_id: null } });
    await db.query('DELETE FROM wallet_transactions WHERE reference = $1', [orderReference('swap', order.id)]);
  }
  await notifyAccountChanged(db, order.walletAccountId);
}
