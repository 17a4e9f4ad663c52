/**
 * The withdrawal review queue (README "Operating", Withdrawal limits and review): withdrawals the limits held
 * (limits.ts) wait UNDER_REVIEW with their amount on hold, never signed nor sent, until an operator decides. Approved,
 * an outside one moves on to PENDING, where the worker signs it, and a transfer to another user is made at once;
 * rejected, the hold goes back and the user sees it Failed (REVIEW_REJECTED). Each decision is taken once under the
 * order's row lock, so two operators deciding at the same moment cannot both act; the one who decided, when and why
 * are kept on the order, and `onDecided` lets the caller write its own record (an audit row) in the same transaction.
 */
import { sealApproval, type ApprovalSeal } from '../signing.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import type pg from 'pg';
import { refuseFrozenWithdrawals } from '../withdrawal-freeze.ts';
import { formatMoney, money } from '../../../lib/money.ts';
import { selectColumns } from '../../db/columns.ts';
import { withdrawals } from '../../db/schema/withdrawals.ts';
import { inTransaction } from '../../db/transaction.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { ensureUserLedgerAccount } from '../ledger.ts';
import { releaseOrder, transferForOrder } from '../orders/entries.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';
import { NOW } from '../orders/sql-set.ts';
import { receiveInternalTransfer } from './open.ts';
import { WithdrawalError } from './rules.ts';

export type ReviewItem = {
  orderId: string;
  userId: string;
  email: string | null;
  currency: string;
  network: string;
  /** Decimal, in the currency. */
  amount: string;
  /** Its USD value at the request, in dollars and cents; null without a price then. */
  usd: string | null;
  address: string;
  /** ABOVE_THRESHOLD, NEW_ADDRESS, NO_PRICE (limits.ts REVIEW_REASONS). */
  reasons: string[];
  /** ISO 8601. */
  createdAt: string;
};

/** The failure code a rejected withdrawal shows (rules.ts WITHDRAWAL_FAILURES); the operator's words stay on the order. */
export const REVIEW_REJECTED = 'REVIEW_REJECTED';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Every withdrawal waiting for review, oldest first. */
export async function listWithdrawalsUnderReview(pool: pg.Pool): Promise<ReviewItem[]> {
  const rows = await pool.query<Omit<ReviewItem, 'createdAt'> & { createdAt: Date }>(
    `SELECT w.id AS "orderId", wa.user_id AS "userId", u.email, w.currency, w.network, w.amount::text AS amount,
            round(w.usd_value, 2)::text AS usd, w.to_address AS address, w.review_reasons AS reasons, w.created_at AS "createdAt"
       FROM withdrawals w JOIN wallet_accounts wa ON wa.id = w.wallet_account_id JOIN users u ON u.id = wa.user_id
      WHERE w.state = 'UNDER_REVIEW' ORDER BY w.created_at, w.id`,
  );
  return rows.rows.map((row) => ({ ...row, amount: formatMoney(money(row.currency, unitsFromRow(row.amount, 'amount'))), createdAt: row.createdAt.toISOString() }));
}

const FIELDS = ['id', 'walletAccountId', 'kind', 'state', 'currency', 'amount', 'recipientAccountId', 'walletTransactionId', 'reviewDecision'] as const;
type Claimed = Pick<typeof withdrawals.$inferSelect, (typeof FIELDS)[number]>;

type Decision = 'APPROVED' | 'REJECTED';

/**
 * Locks the order and runs `decide` if it waits for review; 'already' if the same decision was taken before (a
 * second click, a retried request); any other state is WITHDRAWAL_NOT_UNDER_REVIEW.
 */
async function decideOnce(
  pool: pg.Pool,
  input: { orderId: string; operatorId: string; reason?: string | undefined },
  decision: Decision,
  decide: (client: pg.PoolClient, w: Claimed) => Promise<void>,
  onDecided: ((tx: pg.ClientBase) => Promise<void>) | undefined,
): Promise<'decided' | 'already'> {
  if (!UUID.test(input.orderId)) throw new WithdrawalError('WITHDRAWAL_NOT_FOUND', 'No such withdrawal');
  if (!UUID.test(input.operatorId)) throw new WithdrawalError('OPERATOR_NOT_FOUND', 'No such operator');
  return inTransaction(pool, async (client) => {
    const operator = await client.query('SELECT 1 FROM users WHERE id = $1', [input.operatorId]);
    if (operator.rowCount === 0) throw new WithdrawalError('OPERATOR_NOT_FOUND', 'No such operator');
    const w = (await client.query<Claimed>(`SELECT ${selectColumns(withdrawals, 'w', FIELDS)} FROM withdrawals w WHERE w.id = $1 FOR UPDATE`, [input.orderId])).rows[0];
    if (!w) throw new WithdrawalError('WITHDRAWAL_NOT_FOUND', 'No such withdrawal');
    if (w.state !== 'UNDER_REVIEW') {
      if (w.reviewDecision === decision) return 'already';
      throw new WithdrawalError('WITHDRAWAL_NOT_UNDER_REVIEW', `The withdrawal is ${w.state}${w.reviewDecision ? ` (${w.reviewDecision.toLowerCase()} in review)` : ''}, not waiting for review`, {
        details: { state: w.state },
      });
    }
    await client.query('UPDATE withdrawals SET review_decision = $2, reviewed_by = $3, reviewed_at = now(), review_note = $4 WHERE id = $1', [
      w.id,
      decision,
      input.operatorId,
      input.reason?.trim() || null,
    ]);
    await decide(client, w);
    await notifyAccountChanged(client, w.walletAccountId);
    await onDecided?.(client);
    return 'decided';
  });
}

/**
 * Lets a withdrawal waiting for review go on, exactly once: an outside one to PENDING (the worker signs and sends it),
 * a transfer to another user completed now (its hold back, then the transfer, in one transaction).
 */
export async function approveWithdrawal(
  pool: pg.Pool,
  input: { orderId: string; operatorId: string; reason?: string },
  onDecided?: (tx: pg.ClientBase) => Promise<void>,
  seal?: ApprovalSeal,
): Promise<'approved' | 'already'> {
  const outcome = await decideOnce(
    pool,
    input,
    'APPROVED',
    async (client, w) => {
      // An account frozen since the request (an operator, a reorganisation) sends nothing, approved or not: the
      // approval waits for the freeze to be lifted (403 WITHDRAWALS_FROZEN), the withdrawal stays in the queue.
      await refuseFrozenWithdrawals(client, w.walletAccountId);
      if (w.kind === 'EXTERNAL' || !w.recipientAccountId || !w.walletTransactionId) {
        await moveOrder(client, ORDER_TABLES.withdrawal, w.id, { from: 'UNDER_REVIEW', to: 'PENDING' });
        await sealApproval(client, w.id, seal);
        return;
      }
      const order = { flow: 'withdrawal', id: w.id } as const;
      const held = money(w.currency, unitsFromRow(w.amount));
      await releaseOrder(client, order, { account: w.walletAccountId, money: held });
      await ensureUserLedgerAccount(client, w.recipientAccountId);
      await transferForOrder(client, order, 'internal', { from: w.walletAccountId, to: w.recipientAccountId, money: held });
      await moveOrder(client, ORDER_TABLES.withdrawal, w.id, { from: 'UNDER_REVIEW', to: 'COMPLETED', history: { state: 'COMPLETED' } });
      await receiveInternalTransfer(client, { id: w.id, recipient: w.recipientAccountId, currency: w.currency, sentItem: w.walletTransactionId });
    },
    onDecided,
  );
  return outcome === 'decided' ? 'approved' : 'already';
}

/** Refuses a withdrawal waiting for review, once: its hold goes back and the user sees it Failed (REVIEW_REJECTED). */
export async function rejectWithdrawal(
  pool: pg.Pool,
  input: { orderId: string; operatorId: string; reason: string },
  onDecided?: (tx: pg.ClientBase) => Promise<void>,
): Promise<'rejected' | 'already'> {
  if (input.reason.trim() === '') throw new WithdrawalError('REVIEW_REASON_REQUIRED', 'Say why the withdrawal is rejected');
  const outcome = await decideOnce(
    pool,
    input,
    'REJECTED',
    async (client, w) => {
      await releaseOrder(client, { flow: 'withdrawal', id: w.id }, { account: w.walletAccountId, money: money(w.currency, unitsFromRow(w.amount)) });
      await moveOrder(client, ORDER_TABLES.withdrawal, w.id, {
        from: 'UNDER_REVIEW',
        to: 'FAILED',
        set: { failure_reason: REVIEW_REJECTED, closed_at: NOW },
        history: { state: 'FAILED', set: { failure_reason: REVIEW_REJECTED } },
      });
    },
    onDecided,
  );
  return outcome === 'decided' ? 'rejected' : 'already';
}

/**
 * Withdrawals from before the approval seal existed (issue 31 review): outside ones PENDING, SIGNED or BROADCAST with
 * no seal. The signer refuses to sign them (or to replace their transaction by fee), and never seals one itself
 * (whoever writes the database could insert unsealed rows); the worker leaves them out of batches and does not ask
 * for them. An operator who checks the figures against the user's request re-approves one (`resealWithdrawal`).
 */
export type UnsealedItem = Omit<ReviewItem, 'usd' | 'reasons'> & { state: string; fee: string };

export async function listUnsealedWithdrawals(pool: pg.Pool): Promise<UnsealedItem[]> {
  const rows = await pool.query<Omit<UnsealedItem, 'createdAt'> & { createdAt: Date }>(
    `SELECT w.id AS "orderId", wa.user_id AS "userId", u.email, w.state, w.currency, w.network, w.amount::text AS amount, w.fee::text AS fee,
            w.to_address AS address, w.created_at AS "createdAt"
       FROM withdrawals w JOIN wallet_accounts wa ON wa.id = w.wallet_account_id JOIN users u ON u.id = wa.user_id
      WHERE w.kind = 'EXTERNAL' AND w.state IN ('PENDING', 'SIGNED', 'BROADCAST') AND w.approval_seal IS NULL ORDER BY w.created_at, w.id`,
  );
  return rows.rows.map((row) => ({
    ...row,
    amount: formatMoney(money(row.currency, unitsFromRow(row.amount, 'amount'))),
    fee: formatMoney(money(row.currency, unitsFromRow(row.fee, 'fee'))),
    createdAt: row.createdAt.toISOString(),
  }));
}

/**
 * An operator re-approves an unsealed withdrawal (see above): its figures as they stand are sealed for the signer, once,
 * and `onDecided` writes the operator's record in the same transaction. One that has a seal (right or wrong) is not
 * touched: a seal that does not match means its figures changed, which no re-approval covers.
 */
export async function resealWithdrawal(
  pool: pg.Pool,
  input: { orderId: string; operatorId: string; reason?: string | undefined },
  seal: ApprovalSeal,
  onDecided?: (tx: pg.ClientBase) => Promise<void>,
): Promise<'sealed'> {
  if (!UUID.test(input.orderId)) throw new WithdrawalError('WITHDRAWAL_NOT_FOUND', 'No such withdrawal');
  return inTransaction(pool, async (client) => {
    const w = (
      await client.query<{ kind: string; state: string; sealed: boolean }>('SELECT kind, state, approval_seal IS NOT NULL AS sealed FROM withdrawals WHERE id = $1 FOR UPDATE', [input.orderId])
    ).rows[0];
    if (!w) throw new WithdrawalError('WITHDRAWAL_NOT_FOUND', 'No such withdrawal');
    if (w.kind !== 'EXTERNAL' || !['PENDING', 'SIGNED', 'BROADCAST'].includes(w.state) || w.sealed) {
      throw new WithdrawalError('WITHDRAWAL_NOT_UNSEALED', `The withdrawal is ${w.kind === 'EXTERNAL' ? '' : 'internal and '}${w.state}${w.sealed ? ', already sealed' : ''}: only an unsealed outside one on its way is re-approved`, {
        details: { state: w.state },
      });
    }
    await sealApproval(client, input.orderId, seal);
    await onDecided?.(client);
    return 'sealed' as const;
  });
}
