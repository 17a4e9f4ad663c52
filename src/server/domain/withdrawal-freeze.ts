/**
 * An account frozen for withdrawals: a deposit it was credited left the chain (or lost its confirmations) and its
 * balance could not give the credit back (or hold it) (deposit-reversals.ts). Withdrawal requests are refused (WITHDRAWALS_FROZEN, 403) until the reversal
 * goes through (the balance covers it again) or the transaction is mined again; an operator may lift it by hand
 * (README, "Reorganisations and frozen accounts").
 */
import type { Queryable } from './ledger.ts';
import type { walletAccounts } from '../db/schema/users.ts';
import { WithdrawalError } from './withdrawals/rules.ts';

/**
 * Refuses a withdrawal request of a frozen account. Inside the request's transaction: the row lock (FOR SHARE)
 * orders the request after a reversal or freeze of the same account (FOR UPDATE) that is under way.
 */
export async function refuseFrozenWithdrawals(db: Queryable, walletAccountId: string): Promise<void> {
  const found = await db.query<Pick<typeof walletAccounts.$inferSelect, 'withdrawalsFrozenAt'>>(
    'SELECT withdrawals_frozen_at AS "withdrawalsFrozenAt" FROM wallet_accounts WHERE id = $1 FOR SHARE',
    [walletAccountId],
  );
  if (found.rows[0]?.withdrawalsFrozenAt) {
    throw new WithdrawalError('WITHDRAWALS_FROZEN', 'Withdrawals from this account are on hold: please contact support');
  }
}

/** Takes the account's row lock for a reversal or freeze (see refuseFrozenWithdrawals). */
export async function lockAccountForFreeze(db: Queryable, walletAccountId: string): Promise<void> {
  await db.query('SELECT 1 FROM wallet_accounts WHERE id = $1 FOR UPDATE', [walletAccountId]);
}

/** Freezes the account's withdrawals (keeping the first freeze's time and reason); returns whether it was open before. */
export async function freezeWithdrawals(db: Queryable, walletAccountId: string, reason: string): Promise<boolean> {
  const frozen = await db.query(
    `UPDATE wallet_accounts SET withdrawals_frozen_at = now(), withdrawals_frozen_reason = $2 WHERE id = $1 AND withdrawals_frozen_at IS NULL`,
    [walletAccountId, reason],
  );
  return (frozen.rowCount ?? 0) > 0;
}

/** An operator's freeze's reason starts so: only an operator lifts it, never a settled reorganisation. */
const OPERATOR_FREEZE = 'operator: ';

/**
 * An operator's freeze (the console): frozen now if it was open, and a reorganisation's freeze taken over (its time
 * kept), so that settling the reorganisation no longer lifts it. Returns whether it was not an operator's before.
 */
export async function freezeByOperator(db: Queryable, walletAccountId: string, reason: string): Promise<boolean> {
  const frozen = await db.query(
    `UPDATE wallet_accounts SET withdrawals_frozen_at = coalesce(withdrawals_frozen_at, now()), withdrawals_frozen_reason = $2
      WHERE id = $1 AND (withdrawals_frozen_at IS NULL OR coalesce(withdrawals_frozen_reason, '') NOT LIKE '${OPERATOR_FREEZE}%')`,
    [walletAccountId, `${OPERATOR_FREEZE}${reason}`],
  );
  return (frozen.rowCount ?? 0) > 0;
}

/**
 * Lifts the freeze once no deposit of the account is still owed back (REVERSAL_DUE) or credited in doubt without a
 * hold (its balance could not hold it); returns whether it lifted one. A freeze an operator set is lifted only by an
 * operator (`byOperator`): a reorganisation settling never lifts it.
 */
export async function unfreezeWhenSettled(db: Queryable, walletAccountId: string, options: { byOperator?: boolean } = {}): Promise<boolean> {
  const lifted = await db.query(
    `UPDATE wallet_accounts SET withdrawals_frozen_at = NULL, withdrawals_frozen_reason = NULL
      WHERE id = $1 AND withdrawals_frozen_at IS NOT NULL
        AND ($2 OR coalesce(withdrawals_frozen_reason, '') NOT LIKE '${OPERATOR_FREEZE}%')
        AND NOT EXISTS (SELECT 1 FROM chain_deposits WHERE wallet_account_id = $1
                         AND (state = 'REVERSAL_DUE' OR (state = 'CREDITED' AND in_doubt_since IS NOT NULL)))`,
    [walletAccountId, options.byOperator === true],
  );
  return (lifted.rowCount ?? 0) > 0;
}
