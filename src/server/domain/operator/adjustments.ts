/**
 * Credits and debits by the operators, four eyes: one operator with `finance` proposes (account, currency, amount,
 * reason), and only a second, different one with `finance` applies it, as one ledger entry between the user and
 * OPERATOR_ADJUSTMENTS (`adjustment:credit:<id>` / `adjustment:debit:<id>`, through orders/entries.ts). The decision
 * is a guarded UPDATE … WHERE state = 'PROPOSED' in the entry's transaction, so concurrent approvals apply it once;
 * a debit the available balance cannot cover is refused and the proposal stays open. The ledger audit checks each
 * one against its entry (ADJUSTMENT_CHECKS).
 */
import type pg from 'pg';
import { unitsFromRow } from '../../db/amounts.ts';
import { AmountError, formatUnits, parseDecimal } from '../../../lib/amount.ts';
import { findCoin } from '../../../lib/currencies.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { operatorAdjustments } from '../../db/schema/operator.ts';
import type { AuditCheck } from '../audit-check.ts';
import { ensureSystemAccounts, ensureUserLedgerAccount, SYSTEM_ACCOUNTS, systemAccountId, type Queryable } from '../ledger.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { transferForOrder } from '../orders/entries.ts';
import { recordHistory } from '../orders/history.ts';
import { orderEntryKeySql } from '../orders/entry-keys.ts';
import { NOW } from '../orders/sql-set.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';
import type { Actor } from './actor.ts';
import { recordAudit } from './audit.ts';
import { OperatorError } from './errors.ts';
import { requireRole } from './roles.ts';
import { unitsOf, type Units } from '../../../lib/money.ts';

export type AdjustmentKind = (typeof operatorAdjustments.$inferSelect)['kind'];
export type AdjustmentState = (typeof operatorAdjustments.$inferSelect)['state'];

export type Adjustment = {
  id: string;
  accountId: string;
  userId: string;
  email: string | null;
  kind: AdjustmentKind;
  currency: string;
  /** A decimal string of the currency. */
  amount: string;
  reason: string;
  state: AdjustmentState;
  proposedBy: string | null;
  proposedById: string;
  proposedAt: string;
  decidedBy: string | null;
  decidedAt: string | null;
  decisionReason: string | null;
};

const TIME = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;
const SELECT = `SELECT j.id, j.wallet_account_id AS "accountId", a.user_id AS "userId", u.email, j.kind, j.currency, j.amount::text AS amount, j.reason, j.state,
       p.email AS "proposedBy", j.proposed_by AS "proposedById", ${TIME('j.proposed_at')} AS "proposedAt", d.email AS "decidedBy",
       ${TIME('j.decided_at')} AS "decidedAt", j.decision_reason AS "decisionReason"
  FROM operator_adjustments j JOIN wallet_accounts a ON a.id = j.wallet_account_id JOIN users u ON u.id = a.user_id
  LEFT JOIN users p ON p.id = j.proposed_by LEFT JOIN users d ON d.id = j.decided_by`;

function shown(row: Adjustment): Adjustment {
  const decimals = findCoin(row.currency)?.decimals ?? 0;
  return { ...row, amount: formatUnits(unitsFromRow(row.amount, 'amount'), decimals) };
}

/** The amount as units of the currency: a positive decimal string with no more decimals than the coin has. */
function unitsIn(currency: string, amount: string): Units {
  const coin = findCoin(currency);
  if (!coin) throw new OperatorError('VALIDATION', `Unknown currency ${currency}`);
  const text = amount.trim().replace(',', '.');
  if (!/^\d{1,12}(?:\.\d+)?$/.test(text)) throw new OperatorError('VALIDATION', 'The amount is a positive decimal number');
  let units: Units;
  try {
    units = unitsOf(parseDecimal(text, coin.decimals));
  } catch (error) {
    if (error instanceof AmountError) throw new OperatorError('VALIDATION', `${currency} has at most ${coin.decimals} decimals`, { cause: error });
    throw error;
  }
  if (units <= 0n) throw new OperatorError('VALIDATION', 'The amount must be above zero');
  return units;
}

/** One operator's proposal; applied only when another approves it. */
export async function proposeAdjustment(
  pool: pg.Pool,
  actor: Actor,
  proposal: { accountId: string; kind: AdjustmentKind; currency: string; amount: string; reason: string },
): Promise<Adjustment> {
  const units = unitsIn(proposal.currency, proposal.amount);
  if (actor.id === null) throw new OperatorError('FORBIDDEN', 'Name the operator who proposes (--as <e-mail>)');
  const operatorId = actor.id;
  const id = await inTransaction(pool, async (db) => {
    await requireRole(db, actor, 'finance');
    const account = await db.query('SELECT 1 FROM wallet_accounts WHERE id = $1', [proposal.accountId]);
    if (account.rowCount === 0) throw new OperatorError('OPERATOR_ACCOUNT_NOT_FOUND', `No account ${proposal.accountId}`);
    const inserted = await db.query<{ id: string }>(
      'INSERT INTO operator_adjustments (wallet_account_id, kind, currency, amount, reason, proposed_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
      [proposal.accountId, proposal.kind, proposal.currency, units.toString(), proposal.reason, operatorId],
    );
    const adjustmentId = inserted.rows[0]?.id ?? '';
    await recordAudit(db, actor, {
      action: 'adjustment.propose',
      subject: `adjustment:${adjustmentId}`,
      reason: proposal.reason,
      details: { account: proposal.accountId, kind: proposal.kind, currency: proposal.currency, amount: formatUnits(units, findCoin(proposal.currency)?.decimals ?? 0) },
    });
    return adjustmentId;
  });
  return getAdjustment(pool, id);
}

export async function getAdjustment(db: Queryable, id: string): Promise<Adjustment> {
  const found = await db.query<Adjustment>(`${SELECT} WHERE j.id = $1`, [id]);
  const row = found.rows[0];
  if (!row) throw new OperatorError('ADJUSTMENT_NOT_FOUND', `No adjustment ${id}`);
  return shown(row);
}

/** Proposals waiting for a second operator (state PROPOSED), oldest first; or the latest of another state. */
export async function listAdjustments(db: Queryable, query: { state?: AdjustmentState; accountId?: string } = {}): Promise<Adjustment[]> {
  const state = query.state ?? 'PROPOSED';
  const rows = await db.query<Adjustment>(
    `${SELECT} WHERE j.state = $1 AND ($2::uuid IS NULL OR j.wallet_account_id = $2)
      ORDER BY ${state === 'PROPOSED' ? 'j.proposed_at ASC' : 'j.decided_at DESC'} LIMIT 200`,
    [state, query.accountId ?? null],
  );
  return rows.rows.map(shown);
}

type Decision = { id: string; reason?: string | undefined };

/** Locks the proposal and checks the decider: another operator with `finance`, the proposal still open. */
async function decidable(db: pg.PoolClient, actor: Actor, decision: Decision): Promise<{ row: { wallet_account_id: string; kind: AdjustmentKind; currency: string; amount: string; proposed_by: string; state: AdjustmentState } } | 'already'> {
  await requireRole(db, actor, 'finance');
  const found = await db.query<{ wallet_account_id: string; kind: AdjustmentKind; currency: string; amount: string; proposed_by: string; state: AdjustmentState }>(
    'SELECT wallet_account_id, kind, currency, amount::text AS amount, proposed_by, state FROM operator_adjustments WHERE id = $1 FOR UPDATE',
    [decision.id],
  );
  const row = found.rows[0];
  if (!row) throw new OperatorError('ADJUSTMENT_NOT_FOUND', `No adjustment ${decision.id}`);
  if (row.proposed_by === actor.id) throw new OperatorError('ADJUSTMENT_OWN_PROPOSAL', 'A proposal is approved or rejected by another operator, not the one who made it');
  if (row.state !== 'PROPOSED') return 'already';
  return { row };
}

/**
 * Applies the proposal: its ledger entry and its state in one transaction, once. 'already' when another decision
 * came first (a concurrent approval waits for the row lock and finds it decided); ADJUSTMENT_DECIDED when it was
 * rejected.
 */
export async function approveAdjustment(pool: pg.Pool, actor: Actor, decision: Decision): Promise<'approved' | 'already'> {
  return inTransaction(pool, async (db) => {
    const open = await decidable(db, actor, decision);
    if (open === 'already') {
      const state = await db.query<{ state: AdjustmentState }>('SELECT state FROM operator_adjustments WHERE id = $1', [decision.id]);
      if (state.rows[0]?.state === 'REJECTED') throw new OperatorError('ADJUSTMENT_DECIDED', 'This proposal was rejected');
      return 'already';
    }
    const { row } = open;
    const units = unitsFromRow(row.amount, 'amount');
    const user = await ensureUserLedgerAccount(db, row.wallet_account_id);
    // Made at every start too; here as well, so a command run before the first start of this version finds it.
    await ensureSystemAccounts(db, [SYSTEM_ACCOUNTS.operatorAdjustments()]);
    const custodian = systemAccountId(SYSTEM_ACCOUNTS.operatorAdjustments());
    const credit = row.kind === 'CREDIT';
    await transferForOrder(
      db,
      { flow: 'adjustment', id: decision.id },
      credit ? 'credit' : 'debit',
      { from: credit ? custodian : user, to: credit ? user : custodian, money: { currency: row.currency, units } },
      (cause) => new OperatorError('ADJUSTMENT_INSUFFICIENT_FUNDS', 'The available balance does not cover this debit', { cause }),
    );
    await moveOrder(db, ORDER_TABLES.adjustment, decision.id, { from: 'PROPOSED', to: 'APPLIED', set: { decided_by: actor.id, decided_at: NOW, decision_reason: decision.reason ?? null } });
    // The user sees it in their history as a completed deposit or withdrawal of the custodian's, and every process
    // drops its cached balances of the account when this commits.
    await recordHistory(db, {
      walletAccountId: row.wallet_account_id,
      transactionType: credit ? 'DEPOSIT' : 'WITHDRAWAL',
      direction: credit ? 'DEPOSIT' : 'WITHDRAWAL',
      state: 'COMPLETED',
      currency: row.currency,
      amount: row.amount,
      network: findCoin(row.currency)?.network ?? null,
      accountFromType: credit ? null : 'B2C',
      accountToType: credit ? 'B2C' : null,
      reference: `adjustment:${decision.id}`,
    });
    // A credit shows its asset, as a deposit's does.
    if (credit) {
      await db.query(`INSERT INTO account_assets (wallet_account_id, currency) VALUES ($1, $2) ON CONFLICT (wallet_account_id, currency) DO UPDATE SET archived_at = NULL`, [
        row.wallet_account_id,
        row.currency,
      ]);
    }
    await notifyAccountChanged(db, row.wallet_account_id);
    await recordAudit(db, actor, {
      action: 'adjustment.approve',
      subject: `adjustment:${decision.id}`,
      reason: decision.reason,
      details: { account: row.wallet_account_id, kind: row.kind, currency: row.currency, amount: formatUnits(units, findCoin(row.currency)?.decimals ?? 0) },
    });
    return 'approved';
  });
}

/** Closes the proposal without moving money; by another `finance` operator, with a reason. */
export async function rejectAdjustment(pool: pg.Pool, actor: Actor, decision: Decision & { reason: string }): Promise<'rejected' | 'already'> {
  return inTransaction(pool, async (db) => {
    const open = await decidable(db, actor, decision);
    if (open === 'already') return 'already';
    await moveOrder(db, ORDER_TABLES.adjustment, decision.id, { from: 'PROPOSED', to: 'REJECTED', set: { decided_by: actor.id, decided_at: NOW, decision_reason: decision.reason } });
    await recordAudit(db, actor, { action: 'adjustment.reject', subject: `adjustment:${decision.id}`, reason: decision.reason, details: { account: open.row.wallet_account_id } });
    return 'rejected';
  });
}

/** The ledger audit's checks of operator adjustments (ledger-audit.ts). */
export const ADJUSTMENT_CHECKS: AuditCheck[] = [
  {
    name: "each operator adjustment has its entry exactly when applied: the user's available balance moved by its amount, against OPERATOR_ADJUSTMENTS",
    sql: `SELECT j.id AS adjustment, j.state, j.kind, e.id AS entry_id
            FROM operator_adjustments j
            LEFT JOIN ledger_entries e ON e.idempotency_key = CASE j.kind WHEN 'CREDIT' THEN ${orderEntryKeySql('adjustment', 'credit', 'j.id')} ELSE ${orderEntryKeySql('adjustment', 'debit', 'j.id')} END
           WHERE (j.state = 'APPLIED') <> (e.id IS NOT NULL)
              OR (e.id IS NOT NULL AND (
                   NOT EXISTS (SELECT 1 FROM ledger_postings p WHERE p.entry_id = e.id AND p.ledger_account_id = j.wallet_account_id AND p.currency = j.currency
                                AND p.bucket = 'AVAILABLE' AND p.amount = CASE j.kind WHEN 'CREDIT' THEN j.amount ELSE -j.amount END)
                OR NOT EXISTS (SELECT 1 FROM ledger_postings p JOIN ledger_accounts l ON l.id = p.ledger_account_id
                                WHERE p.entry_id = e.id AND l.code = 'OPERATOR_ADJUSTMENTS' AND p.amount = CASE j.kind WHEN 'CREDIT' THEN -j.amount ELSE j.amount END)))`,
  },
  {
    name: 'each applied operator adjustment has its completed history item of its amount, and no other adjustment has one',
    sql: `SELECT j.id AS adjustment, j.state, t.id AS history_item, t.state AS shown
            FROM operator_adjustments j LEFT JOIN wallet_transactions t ON t.reference = 'adjustment:' || j.id
           WHERE (j.state = 'APPLIED') <> (t.id IS NOT NULL)
              OR (t.id IS NOT NULL AND (t.state <> 'COMPLETED' OR t.amount <> j.amount OR t.currency <> j.currency OR t.wallet_account_id <> j.wallet_account_id))`,
  },
  {
    name: 'every OPERATOR_CREDIT or OPERATOR_DEBIT entry belongs to an applied adjustment',
    sql: `SELECT e.id AS entry_id, e.idempotency_key FROM ledger_entries e
           WHERE e.kind IN ('OPERATOR_CREDIT', 'OPERATOR_DEBIT')
             AND NOT EXISTS (SELECT 1 FROM operator_adjustments j WHERE j.state = 'APPLIED'
                               AND e.idempotency_key = CASE j.kind WHEN 'CREDIT' THEN ${orderEntryKeySql('adjustment', 'credit', 'j.id')} ELSE ${orderEntryKeySql('adjustment', 'debit', 'j.id')} END)`,
  },
];
