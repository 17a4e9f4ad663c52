/**
 * Opens a withdrawal in the request's transaction. To another user of this wallet (INTERNAL): one entry from the
 * sender to the recipient, COMPLETED at once, a history item on both sides. Anywhere else (EXTERNAL): the amount is
 * held and the withdrawal waits PENDING for the worker (worker.ts).
 */
import type { CoinMeta } from '../../../lib/currencies.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { ensureUserLedgerAccount, type Queryable } from '../ledger.ts';
import { holdOrder, transferForOrder, type WhenShort } from '../orders/entries.ts';
import { money } from '../../../lib/money.ts';
import { orderReference } from '../orders/entry-keys.ts';
import { recordHistory, type HistoryItem } from '../orders/history.ts';
import { WithdrawalError, type CheckedAddress } from './rules.ts';

export type OpenWithdrawal = { account: string; coin: CoinMeta; units: bigint; fee: bigint; check: CheckedAddress; idempotencyKey: string; requestHash: string };

const notEnough: WhenShort = (cause) => new WithdrawalError('WITHDRAWAL_NOT_ENOUGH_FUNDS', 'Not enough funds', { cause });

/** Returns the new withdrawal's id. */
export async function openWithdrawal(db: Queryable, w: OpenWithdrawal): Promise<string> {
  const { account, coin, units, fee, check } = w;
  const internal = check.internal && check.recipientAccountId !== null;
  const inserted = await db.query<{ id: string }>(
    `INSERT INTO withdrawals (wallet_account_id, idempotency_key, request_hash, kind, state, currency, network, amount, fee, to_address, recipient_account_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
    [account, w.idempotencyKey, w.requestHash, check.internal ? 'INTERNAL' : 'EXTERNAL', check.internal ? 'COMPLETED' : 'PENDING', coin.currency, coin.network, units.toString(), fee.toString(), check.address, check.recipientAccountId],
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
    await ensureUserLedgerAccount(db, recipient);
    await transferForOrder(db, order, 'internal', { from: account, to: recipient, money: money(coin.currency, units) }, notEnough);
    const common = { state: 'COMPLETED', fromAddress: senderAddress, accountToType: check.accountType } as const;
    const sent = await recordHistory(db, item({ ...common, walletAccountId: account, transactionType: 'WITHDRAWAL', reference: orderReference('withdrawal', id), recipientName: check.recipientName }));
    const received = await recordHistory(
      db,
      item({ ...common, walletAccountId: recipient, transactionType: 'DEPOSIT', reference: `withdrawal-in:${id}`, recipientName: check.accountType === 'B2B' ? check.recipientName : null }),
    );
    await db.query(`UPDATE withdrawals SET wallet_transaction_id = $2, recipient_transaction_id = $3, from_address = $4, closed_at = now() WHERE id = $1`, [id, sent, received, senderAddress]);
    // Money arriving in a currency the recipient hides (or never added) brings the asset into view.
    await db.query(`INSERT INTO account_assets (wallet_account_id, currency) VALUES ($1, $2) ON CONFLICT (wallet_account_id, currency) DO UPDATE SET archived_at = NULL`, [recipient, coin.currency]);
    await notifyAccountChanged(db, recipient);
  } else {
    await holdOrder(db, order, { account, money: money(coin.currency, units) }, notEnough);
    const sent = await recordHistory(db, item({ walletAccountId: account, transactionType: 'WITHDRAWAL', state: 'IN_PROGRESS', reference: orderReference('withdrawal', id), fromAddress: null, accountToType: null, recipientName: check.recipientName }));
    await db.query('UPDATE withdrawals SET wallet_transaction_id = $2 WHERE id = $1', [id, sent]);
  }
  await notifyAccountChanged(db, account);
  return id;
}
