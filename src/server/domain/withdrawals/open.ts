/**
 * Opens a withdrawal in the request's transaction. To another user of this wallet (INTERNAL): one entry from the
 * sender to the recipient, COMPLETED at once, a history item on both sides. Anywhere else (EXTERNAL): the amount is
 * held and the withdrawal waits PENDING for the worker (worker.ts). One the limits send to review (limits.ts), of
 * either kind, is held and waits UNDER_REVIEW, which the worker never picks up, until review.ts decides.
 */
import { sealApproval, type ApprovalSeal } from '../signing.ts';
import type { CoinMeta } from '../../../lib/currencies.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { ensureUserLedgerAccount, type Queryable } from '../ledger.ts';
import { holdOrder, transferForOrder, type WhenShort } from '../orders/entries.ts';
import { money, type Units } from '../../../lib/money.ts';
import { orderReference } from '../orders/entry-keys.ts';
import { recordHistory, type HistoryItem } from '../orders/history.ts';
import { formatUnits } from '../../../lib/amount.ts';
import { PRICE_DECIMALS } from '../../adapters/rates/port.ts';
import type { LimitCheck } from './limits.ts';
import { WithdrawalError, type CheckedAddress } from './rules.ts';

export type OpenWithdrawal = {
  account: string;
  coin: CoinMeta;
  units: Units;
  fee: Units;
  check: CheckedAddress;
  idempotencyKey: string;
  requestHash: string;
  /** What the limits said (limits.ts): its USD value, and why it waits for review (none: it does not). */
  limits?: LimitCheck;
  /** Seals an approved (PENDING) outside withdrawal's figures for the signer (domain/signing.ts). */
  seal?: ApprovalSeal | undefined;
};

const notEnough: WhenShort = (cause) => new WithdrawalError('WITHDRAWAL_NOT_ENOUGH_FUNDS', 'Not enough funds', { cause });

/** Returns the new withdrawal's id. */
export async function openWithdrawal(db: Queryable, w: OpenWithdrawal): Promise<string> {
  const { account, coin, units, fee, check } = w;
  const reasons = w.limits?.reasons ?? [];
  const review = reasons.length > 0;
  const internal = check.internal && check.recipientAccountId !== null;
  const state = review ? 'UNDER_REVIEW' : check.internal ? 'COMPLETED' : 'PENDING';
  const usd = w.limits?.usd === undefined ? null : formatUnits(w.limits.usd, PRICE_DECIMALS);
  const inserted = await db.query<{ id: string }>(
    `INSERT INTO withdrawals (wallet_account_id, idempotency_key, request_hash, kind, state, currency, network, amount, fee, to_address, recipient_account_id, usd_value, review_reasons)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
    [account, w.idempotencyKey, w.requestHash, check.internal ? 'INTERNAL' : 'EXTERNAL', state, coin.currency, coin.network, units.toString(), fee.toString(), check.address, check.recipientAccountId, usd, reasons],
  );
  const id = inserted.rows[0]?.id;
  if (!id) throw new Error('the withdrawal was not saved');
  const order = { flow: 'withdrawal', id } as const;
  await ensureUserLedgerAccount(db, account);
  const item = (
    fields: Pick<HistoryItem, 'walletAccountId' | 'state' | 'reference' | 'fromAddress' | 'accountToType' | 'recipientName'> & { transactionType: 'WITHDRAWAL' | 'DEPOSIT' },
  ): HistoryItem => ({
    direction: fields.transactionType,
    currency: coin.currency,
    amount: units.toString(),
    fee: fields.transactionType === 'WITHDRAWAL' ? fee.toString() : '0',
    feeCurrency: coin.currency,
    network: coin.network,
    toAddress: check.address,
    contact: fields.transactionType === 'WITHDRAWAL' ? check.recipientName : null,
    senderName: check.senderName,
    accountFromType: check.senderType,
    ...fields,
  });

  if (internal && check.recipientAccountId) {
    const recipient = check.recipientAccountId;
    const ownAddress = await db.query<{ address: string }>('SELECT address FROM deposit_addresses WHERE wallet_account_id = $1 AND network = $2', [account, coin.network]);
    const senderAddress = ownAddress.rows[0]?.address ?? null;
    const sentItem = (state: 'COMPLETED' | 'IN_PROGRESS') =>
      item({ state, fromAddress: senderAddress, accountToType: check.accountType, walletAccountId: account, transactionType: 'WITHDRAWAL', reference: orderReference('withdrawal', id), recipientName: check.recipientName });
    if (review) {
      // Held like an outside one; approved, the hold goes back and the transfer is made (review.ts).
      await holdOrder(db, order, { account, money: money(coin.currency, units) }, notEnough);
      const sent = await recordHistory(db, sentItem('IN_PROGRESS'));
      await db.query('UPDATE withdrawals SET wallet_transaction_id = $2, from_address = $3 WHERE id = $1', [id, sent, senderAddress]);
    } else {
      await ensureUserLedgerAccount(db, recipient);
      await transferForOrder(db, order, 'internal', { from: account, to: recipient, money: money(coin.currency, units) }, notEnough);
      const sent = await recordHistory(db, sentItem('COMPLETED'));
      await db.query('UPDATE withdrawals SET wallet_transaction_id = $2, from_address = $3 WHERE id = $1', [id, sent, senderAddress]);
      await receiveInternalTransfer(db, { id, recipient, currency: coin.currency, sentItem: sent });
    }
  } else {
    await holdOrder(db, order, { account, money: money(coin.currency, units) }, notEnough);
    const sent = await recordHistory(db, item({ walletAccountId: account, transactionType: 'WITHDRAWAL', state: 'IN_PROGRESS', reference: orderReference('withdrawal', id), fromAddress: null, accountToType: null, recipientName: check.recipientName }));
    await db.query('UPDATE withdrawals SET wallet_transaction_id = $2 WHERE id = $1', [id, sent]);
    if (state === 'PENDING') await sealApproval(db, id, w.seal);
  }
  await notifyAccountChanged(db, account);
  return id;
}

/**
 * The recipient's side of a completed transfer to another user: their history item (the sender's, seen from the
 * receiving end, without a fee), the asset brought into view, the transfer closed. Once the entry is made, at the
 * request or at the review's approval (review.ts).
 */
export async function receiveInternalTransfer(db: Queryable, t: { id: string; recipient: string; currency: string; sentItem: string }): Promise<void> {
  const received = await db.query<{ id: string }>(
    `INSERT INTO wallet_transactions (wallet_account_id, direction, transaction_type, state, currency, amount, fee, fee_currency, network, from_address, to_address,
                                      contact, sender_name, recipient_name, account_from_type, account_to_type, reference, completed_at)
     SELECT $2, 'DEPOSIT', 'DEPOSIT', 'COMPLETED', currency, amount, 0, fee_currency, network, from_address, to_address,
            NULL, sender_name, CASE WHEN account_to_type = 'B2B' THEN recipient_name END, account_from_type, account_to_type, $3, now()
       FROM wallet_transactions WHERE id = $1 RETURNING id`,
    [t.sentItem, t.recipient, `withdrawal-in:${t.id}`],
  );
  await db.query('UPDATE withdrawals SET recipient_transaction_id = $2, closed_at = now() WHERE id = $1', [t.id, received.rows[0]?.id]);
  // Money arriving in a currency the recipient hides (or never added) brings the asset into view.
  await db.query(`INSERT INTO account_assets (wallet_account_id, currency) VALUES ($1, $2) ON CONFLICT (wallet_account_id, currency) DO UPDATE SET archived_at = NULL`, [t.recipient, t.currency]);
  await notifyAccountChanged(db, t.recipient);
}
