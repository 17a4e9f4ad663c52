/** A withdrawal as the gateway shows it (SPEC §7 withdrawal), and the reads that give one. */
import { formatMoney, money, subtractUnits, type Units } from '../../../lib/money.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import { explorerLink, type CoinMeta } from '../../../lib/currencies.ts';
import { selectColumns } from '../../db/columns.ts';
import { walletTransactions } from '../../db/schema/wallet.ts';
import { withdrawals } from '../../db/schema/withdrawals.ts';
import type { Queryable } from '../ledger.ts';
import type { PendingReason, WithdrawalView } from '../../../lib/wire/withdrawals.ts';
import { WITHDRAWAL_FAILURES, type WithdrawalFailure } from './rules.ts';
export type { PendingReason, WithdrawalView };

export type WithdrawalState = (typeof withdrawals.$inferSelect)['state'];

const FIELDS = [
  'id',
  'walletAccountId',
  'requestHash',
  'kind',
  'state',
  'currency',
  'network',
  'amount',
  'fee',
  'toAddress',
  'walletTransactionId',
  'txHash',
  'confirmations',
  'confirmationsRequired',
  'failureReason',
  'waitingForFundsSince',
  'createdAt',
  'closedAt',
] as const;

export type WithdrawalRow = Pick<typeof withdrawals.$inferSelect, (typeof FIELDS)[number]> & Pick<typeof walletTransactions.$inferSelect, 'accountToType'>;

const SELECT = `SELECT ${selectColumns(withdrawals, 'w', FIELDS)}, ${selectColumns(walletTransactions, 't', ['accountToType'])}
  FROM withdrawals w LEFT JOIN wallet_transactions t ON t.id = w.wallet_transaction_id`;

export async function findWithdrawalByKey(db: Queryable, account: string, key: string): Promise<WithdrawalRow | undefined> {
  return (await db.query<WithdrawalRow>(`${SELECT} WHERE w.wallet_account_id = $1 AND w.idempotency_key = $2`, [account, key])).rows[0];
}

export async function findWithdrawal(db: Queryable, account: string, id: string): Promise<WithdrawalRow | undefined> {
  return (await db.query<WithdrawalRow>(`${SELECT} WHERE w.wallet_account_id = $1 AND w.id = $2`, [account, id])).rows[0];
}

/** The account's withdrawals still on their way (waiting for review included), oldest first. */
export async function openWithdrawals(db: Queryable, account: string): Promise<WithdrawalRow[]> {
  return (await db.query<WithdrawalRow>(`${SELECT} WHERE w.wallet_account_id = $1 AND w.state IN ('UNDER_REVIEW', 'PENDING', 'SIGNED', 'BROADCAST') ORDER BY w.created_at LIMIT 100`, [account]))
    .rows;
}

/**
 * The code of a failed withdrawal's stored reason. The worker writes English sentences today (a refusal's message,
 * 'The transaction failed on the chain: …', 'The transaction left the chain'); a stored code is taken as it is.
 */
export function withdrawalFailureCode(reason: string | null): WithdrawalFailure | null {
  if (reason === null) return null;
  if ((WITHDRAWAL_FAILURES as readonly string[]).includes(reason)) return reason as WithdrawalFailure;
  if (reason.startsWith('The transaction failed on the chain')) return 'FAILED_ON_CHAIN';
  if (reason === 'The transaction left the chain') return 'DROPPED';
  // Anything else was written where the network refused the broadcast (BroadcastRejectedError's message).
  return reason.trim() === '' ? 'UNKNOWN' : 'REJECTED';
}

/**
 * Why a withdrawal still on its way is not sent yet, as the user is told it (history item, details, the send's
 * progress): held for an operator's review, or PENDING while the hot wallet cannot pay it (the worker set
 * waiting_for_funds_since and waits for a refill instead of retrying). Anything else has no reason to show.
 */
export function pendingReasonOf(withdrawal: { state: WithdrawalState; waitingForFunds: boolean }): PendingReason | null {
  if (withdrawal.state === 'UNDER_REVIEW') return 'UNDER_REVIEW';
  if (withdrawal.state === 'PENDING' && withdrawal.waitingForFunds) return 'WAITING_FOR_FUNDS';
  return null;
}

export function withdrawalView(row: WithdrawalRow, coin: CoinMeta | undefined): WithdrawalView {
  const amount = unitsFromRow(row.amount, 'amount');
  const fee = unitsFromRow(row.fee, 'fee');
  const shown = (units: Units) => formatMoney(money(row.currency, units));
  const shownHash = row.state === 'PENDING' || row.state === 'SIGNED' ? null : row.txHash;
  return {
    id: row.id,
    account: row.walletAccountId,
    currency: row.currency,
    network: row.network,
    amount: shown(amount),
    fee: shown(fee),
    feeCurrency: row.currency,
    receiveAmount: shown(subtractUnits(amount, fee)),
    depositAddress: row.toAddress,
    internal: row.kind === 'INTERNAL',
    state: row.state === 'COMPLETED' ? 'COMPLETED' : row.state === 'FAILED' ? 'FAILED' : 'IN_PROGRESS',
    underReview: row.state === 'UNDER_REVIEW',
    pendingReason: pendingReasonOf({ state: row.state, waitingForFunds: row.waitingForFundsSince !== null }),
    hash: shownHash,
    explorerUrl: (coin && explorerLink(coin.urlScan, shownHash)) ?? null,
    transactionId: row.walletTransactionId,
    accountToType: row.accountToType,
    confirmations: row.confirmations,
    confirmationsRequired: row.confirmationsRequired,
    failureReason: withdrawalFailureCode(row.failureReason),
    createdDate: row.createdAt.toISOString(),
    completedDate: row.state === 'COMPLETED' ? (row.closedAt?.toISOString() ?? null) : null,
  };
}
