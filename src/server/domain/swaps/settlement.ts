/**
 * A swap order's ending: confirmed, the source is held and ONE ledger entry moves it from the user's hold to the swap
 * desk and the destination from the desk's inventory to the user, the spread to fee income, in the confirmation's
 * transaction, and the history item is written then; expired or cancelled, nothing was held (orders from before
 * confirm-time holds held from creation: theirs is released). The desk sells only what it holds, down to its limit
 * per currency (market/desk.ts).
 */
import { notifyAccountChanged } from '../account-changes.ts';
import { ensureUserLedgerAccount, SYSTEM_ACCOUNTS, systemAccountId, type Posting, type Queryable } from '../ledger.ts';
import { DESK_ACCOUNT, reserveInventory } from '../market/desk.ts';
import { hasOrderEntry, holdOrder, postOrderEntry, releaseOrder } from '../orders/entries.ts';
import { recordHistory } from '../orders/history.ts';
import { addUnits, money, negateUnits } from '../../../lib/money.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import { orderReference } from '../orders/entry-keys.ts';
import { NOW } from '../orders/sql-set.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';
import { SwapError, type DestinationUnits, type SourceUnits } from './rules.ts';
import type { SwapOrderRow } from './view.ts';

type Settled = Pick<SwapOrderRow, 'id' | 'walletAccountId' | 'sourceCurrency' | 'destinationCurrency' | 'sourceAmount' | 'destinationAmount' | 'feeAmount'>;
type Confirmed = Settled & Pick<SwapOrderRow, 'rate' | 'walletTransactionId'>;

/**
 * The confirmation's money, inside its transaction: holds the source (once per order: an order from before held
 * already), writes the Swapping item the user now sees, then settles (settleSwap moves the item to COMPLETED).
 * Returns the history item's id. Short of funds: SWAP_NOT_ENOUGH, and the caller's transaction rolls back.
 */
export async function holdAndSettleSwap(db: Queryable, order: Confirmed, inventoryLimits: Readonly<Record<string, string>>): Promise<string> {
  await ensureUserLedgerAccount(db, order.walletAccountId);
  await holdOrder(db, { flow: 'swap', id: order.id }, { account: order.walletAccountId, money: money(order.sourceCurrency, unitsFromRow(order.sourceAmount, 'sourceAmount')) }, (cause) => new SwapError('SWAP_NOT_ENOUGH', 'Not enough funds', { cause }));
  let shown = order.walletTransactionId;
  if (!shown) {
    shown = await recordHistory(db, {
      walletAccountId: order.walletAccountId,
      transactionType: 'EXCHANGE',
      direction: 'WITHDRAWAL',
      state: 'IN_PROGRESS',
      currency: order.sourceCurrency,
      amount: order.sourceAmount,
      fee: order.feeAmount,
      feeCurrency: order.destinationCurrency,
      accountFromType: 'B2C',
      accountToType: 'B2C',
      fromCurrency: order.sourceCurrency,
      toCurrency: order.destinationCurrency,
      fromAmount: order.sourceAmount,
      toAmount: order.destinationAmount,
      exchangeRate: order.rate,
      reference: orderReference('swap', order.id),
    });
    await db.query('UPDATE swap_orders SET wallet_transaction_id = $2 WHERE id = $1', [order.id, shown]);
  }
  await settleSwap(db, order, inventoryLimits);
  return shown;
}

/**
 * The one entry of a confirmed swap: source hold → desk, desk → user (destination), spread → fee income. Refused
 * (DeskInventoryError, nothing moved) when the desk would go below its limit of the destination currency.
 */
export async function settleSwap(db: Queryable, order: Settled, inventoryLimits: Readonly<Record<string, string>>): Promise<void> {
  const liquidity = DESK_ACCOUNT;
  const source = unitsFromRow<'source'>(order.sourceAmount, 'sourceAmount');
  const destination = unitsFromRow<'destination'>(order.destinationAmount, 'destinationAmount');
  const fee = unitsFromRow<'destination'>(order.feeAmount, 'feeAmount');
  const sold = addUnits(destination, fee);
  await reserveInventory(db, order.destinationCurrency, sold, inventoryLimits);
  // A leg takes only its own side's units: the source currency's are SourceUnits, the destination's DestinationUnits.
  const paid = (account: string, bucket: Posting['bucket'], amount: SourceUnits): Posting => ({ account, currency: order.sourceCurrency, bucket, amount });
  const got = (account: string, bucket: Posting['bucket'], amount: DestinationUnits): Posting => ({ account, currency: order.destinationCurrency, bucket, amount });
  const postings: Posting[] = [
    paid(order.walletAccountId, 'ON_HOLD', negateUnits(source)),
    paid(liquidity, 'AVAILABLE', source),
    got(liquidity, 'AVAILABLE', negateUnits(sold)),
    got(order.walletAccountId, 'AVAILABLE', destination),
  ];
  if (fee > 0n) postings.push(got(systemAccountId(SYSTEM_ACCOUNTS.feeIncome()), 'AVAILABLE', fee));
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
 * Closes a pending order. An order held from creation (from before confirm-time holds) gets its hold back and its
 * item: expired, 'Failed to swap'; cancelled (the user asked for a fresh rate), gone. An order of today held nothing
 * and shows nothing, so nothing changes for the user.
 */
export async function closeSwap(db: Queryable, order: Settled, state: 'EXPIRED' | 'CANCELLED', reason = 'The rate expired before the swap was confirmed'): Promise<void> {
  const ref = { flow: 'swap', id: order.id } as const;
  const held = await hasOrderEntry(db, ref, 'hold');
  if (held) await releaseOrder(db, ref, { account: order.walletAccountId, money: money(order.sourceCurrency, unitsFromRow(order.sourceAmount, 'sourceAmount')) });
  if (state === 'EXPIRED') {
    await moveOrder(db, ORDER_TABLES.swap, order.id, { from: 'PENDING', to: state, set: { closed_at: NOW }, history: { state: 'FAILED', set: { failure_reason: reason } } });
  } else {
    await moveOrder(db, ORDER_TABLES.swap, order.id, { from: 'PENDING', to: state, set: { closed_at: NOW, wallet_transaction_id: null } });
    await db.query('DELETE FROM wallet_transactions WHERE reference = $1', [orderReference('swap', order.id)]);
  }
  if (held) await notifyAccountChanged(db, order.walletAccountId);
}
