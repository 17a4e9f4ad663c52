/**
 * An operator freezing or unfreezing an account's withdrawals (the user sees the WITHDRAWALS_FROZEN message), through
 * withdrawal-freeze.ts under the account's row lock, with the audit line in the same transaction. Unfreezing waits for
 * what the account still owes back: while a deposit is REVERSAL_DUE the freeze stays (README, "Reorganisations").
 */
import type pg from 'pg';
import { inTransaction } from '../../db/transaction.ts';
import { freezeByOperator, lockAccountForFreeze, unfreezeWhenSettled } from '../withdrawal-freeze.ts';
import type { Actor } from './actor.ts';
import { recordAudit } from './audit.ts';
import { OperatorError } from './errors.ts';
import { requireRole } from './roles.ts';

async function frozenState(db: pg.PoolClient, accountId: string): Promise<{ frozenAt: Date | null; reason: string | null }> {
  const found = await db.query<{ frozenAt: Date | null; reason: string | null }>(
    'SELECT withdrawals_frozen_at AS "frozenAt", withdrawals_frozen_reason AS reason FROM wallet_accounts WHERE id = $1',
    [accountId],
  );
  const row = found.rows[0];
  if (!row) throw new OperatorError('OPERATOR_ACCOUNT_NOT_FOUND', `No account ${accountId}`);
  return row;
}

/** Freezes the account's withdrawals; 'already' when an operator had frozen it (a reorganisation's freeze becomes this operator's). */
export async function freezeAccount(pool: pg.Pool, actor: Actor, order: { accountId: string; reason: string }): Promise<'frozen' | 'already'> {
  return inTransaction(pool, async (db) => {
    await requireRole(db, actor, 'support');
    await lockAccountForFreeze(db, order.accountId);
    await frozenState(db, order.accountId);
    const frozen = await freezeByOperator(db, order.accountId, order.reason);
    if (frozen) await recordAudit(db, actor, { action: 'withdrawals.freeze', subject: `account:${order.accountId}`, reason: order.reason });
    return frozen ? 'frozen' : 'already';
  });
}

/** Lifts the freeze; 'already' when there was none; refused while a deposit of the account is REVERSAL_DUE. */
export async function unfreezeAccount(pool: pg.Pool, actor: Actor, order: { accountId: string; reason: string }): Promise<'unfrozen' | 'already'> {
  return inTransaction(pool, async (db) => {
    await requireRole(db, actor, 'support');
    await lockAccountForFreeze(db, order.accountId);
    const before = await frozenState(db, order.accountId);
    if (!before.frozenAt) return 'already';
    if (!(await unfreezeWhenSettled(db, order.accountId, { byOperator: true }))) {
      throw new OperatorError('FREEZE_REVERSAL_DUE', 'A deposit of this account that left the chain is still owed back (REVERSAL_DUE): settle it first');
    }
    await recordAudit(db, actor, { action: 'withdrawals.unfreeze', subject: `account:${order.accountId}`, reason: order.reason, details: { frozenSince: before.frozenAt.toISOString(), frozenFor: before.reason } });
    return 'unfrozen';
  });
}
