import { sql } from 'drizzle-orm';
import { bigserial, check, index, jsonb, numeric, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users, walletAccounts } from './users.ts';
import { operationId } from './ids.ts';

const units = (name: string) => numeric(name, { precision: 78, scale: 0 });

/**
 * Who may use the operator console (domain/operator/roles.ts): one role per user, each including the one before it
 * (support < finance < admin). Granted by `npm run operator -- grant` or by an admin in the console.
 */
export const operatorRoles = pgTable('operator_roles', {
  userId: uuid('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  role: text('role', { enum: ['support', 'finance', 'admin'] }).notNull(),
  /** The operator who granted it; NULL when it came from the command line (database access is the authority there). */
  grantedBy: uuid('granted_by'),
  grantedAt: timestamp('granted_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Every operator action, written in the transaction of the action itself. Append-only: a trigger (migration
 * 0031_operator_audit_append_only) refuses UPDATE, DELETE and TRUNCATE.
 */
export const operatorAudit = pgTable(
  'operator_audit',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    /** The operator's user id; NULL for the command line acting without `--as` (granting the first role). */
    operatorId: uuid('operator_id'),
    /** Who, as shown: the operator's e-mail then, or `command line`. */
    actor: text('actor').notNull(),
    /** What: `role.grant`, `withdrawals.freeze`, `adjustment.propose`, `adjustment.approve`, `mail.resend`... */
    action: text('action').notNull(),
    /** What it was done to: `user:<id>`, `account:<id>`, `adjustment:<id>`, `mail:<id>`. */
    subject: text('subject').notNull(),
    /** Why, in the operator's words. */
    reason: text('reason'),
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
  },
  (t) => [index('operator_audit_subject').on(t.subject, t.id), index('operator_audit_operator').on(t.operatorId, t.id)],
);

/**
 * A credit or debit of a user's balance by the operators (domain/operator/adjustments.ts): PROPOSED by one, then
 * APPLIED (its ledger entry `adjustment:<credit|debit>:<id>` against OPERATOR_ADJUSTMENTS) or REJECTED by another.
 */
export const operatorAdjustments = pgTable(
  'operator_adjustments',
  {
    id: operationId(),
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => walletAccounts.id, { onDelete: 'restrict' }),
    kind: text('kind', { enum: ['CREDIT', 'DEBIT'] }).notNull(),
    currency: text('currency').notNull(),
    amount: units('amount').notNull(),
    reason: text('reason').notNull(),
    state: text('state', { enum: ['PROPOSED', 'APPLIED', 'REJECTED'] }).notNull().default('PROPOSED'),
    proposedBy: uuid('proposed_by').notNull(),
    proposedAt: timestamp('proposed_at', { withTimezone: true }).notNull().defaultNow(),
    decidedBy: uuid('decided_by'),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    decisionReason: text('decision_reason'),
  },
  (t) => [
    index('operator_adjustments_proposed').on(t.proposedAt).where(sql`${t.state} = 'PROPOSED'`),
    index('operator_adjustments_account').on(t.walletAccountId, t.proposedAt),
    check('operator_adjustments_amount', sql`${t.amount} > 0`),
    check('operator_adjustments_four_eyes', sql`${t.decidedBy} IS NULL OR ${t.decidedBy} <> ${t.proposedBy}`),
  ],
);
