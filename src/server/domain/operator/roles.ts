/**
 * Operator roles (README, "Operator console"): `support` reads, freezes and unfreezes withdrawals, resends mail;
 * `finance` also proposes and approves credits and debits and reviews withdrawals; `admin` also grants and revokes
 * roles. Each includes the ones before it. Roles live in operator_roles and are read from the database on every
 * request and inside every action's transaction, so a revoked role stops working at once, in every process.
 */
import type pg from 'pg';
import { inTransaction } from '../../db/transaction.ts';
import type { Queryable } from '../ledger.ts';
import { COMMAND_LINE, type Actor, type OperatorActor, type Role } from './actor.ts';
import { recordAudit, type AuditLine } from './audit.ts';
import { OperatorError } from './errors.ts';

export { COMMAND_LINE, type Actor, type OperatorActor, type Role };
export const ROLES: readonly Role[] = ['support', 'finance', 'admin'];
const RANK: Record<Role, number> = { support: 1, finance: 2, admin: 3 };

export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);
export const roleIncludes = (held: Role, needed: Role): boolean => RANK[held] >= RANK[needed];


/** The operator behind a user id, or undefined when the user holds no role. */
export async function operatorById(db: Queryable, userId: string, lock = false): Promise<OperatorActor | undefined> {
  const found = await db.query<{ id: string; email: string | null; role: Role }>(
    `SELECT u.id, u.email, r.role FROM operator_roles r JOIN users u ON u.id = r.user_id WHERE r.user_id = $1${lock ? ' FOR SHARE OF r' : ''}`,
    [userId],
  );
  const row = found.rows[0];
  return row ? { id: row.id, email: row.email ?? row.id, role: row.role } : undefined;
}

/** The operator with this e-mail (the command line's `--as`); refused when nobody or no operator has it. */
export async function operatorByEmail(db: Queryable, email: string): Promise<OperatorActor> {
  const user = await userByEmail(db, email);
  const operator = await operatorById(db, user.id);
  if (!operator) throw new OperatorError('OPERATOR_NOT_AN_OPERATOR', `${email} holds no operator role`);
  return operator;
}

/**
 * Inside an action's transaction: the actor still holds `needed` (its role row locked FOR SHARE, so a revocation
 * waits for the action or the action sees it). The command line without `--as` passes only where `cli` says so.
 */
export async function requireRole(db: Queryable, actor: Actor, needed: Role, options: { cli?: boolean } = {}): Promise<void> {
  if (actor.id === null) {
    if (options.cli) return;
    throw new OperatorError('FORBIDDEN', 'Name the operator who acts (--as <e-mail>)');
  }
  const current = await operatorById(db, actor.id, true);
  if (!current || !roleIncludes(current.role, needed)) throw new OperatorError('FORBIDDEN', `This needs the ${needed} role`);
}

async function userByEmail(db: Queryable, email: string): Promise<{ id: string; email: string }> {
  const found = await db.query<{ id: string; email: string }>('SELECT id, email FROM users WHERE email = $1', [email.trim().toLowerCase()]);
  const user = found.rows[0];
  if (!user) throw new OperatorError('OPERATOR_USER_NOT_FOUND', `No user has the e-mail ${email}`);
  return user;
}

/** Grants (or changes) a user's role, in one transaction with its audit line; an admin, or the command line. Returns the role held before. */
export async function grantRole(pool: pg.Pool, actor: Actor, grant: { email: string; role: Role; reason?: string | undefined }): Promise<Role | undefined> {
  return inTransaction(pool, async (db) => {
    await requireRole(db, actor, 'admin', { cli: true });
    const user = await userByEmail(db, grant.email);
    const before = await db.query<{ role: Role }>('SELECT role FROM operator_roles WHERE user_id = $1 FOR UPDATE', [user.id]);
    await db.query(
      `INSERT INTO operator_roles (user_id, role, granted_by) VALUES ($1, $2, $3)
       ON CONFLICT (user_id) DO UPDATE SET role = excluded.role, granted_by = excluded.granted_by, granted_at = now()`,
      [user.id, grant.role, actor.id],
    );
    const previous = before.rows[0]?.role;
    await recordAudit(db, actor, { action: 'role.grant', subject: `user:${user.id}`, reason: grant.reason, details: { email: user.email, role: grant.role, previous: previous ?? null } });
    return previous;
  });
}

/** Takes a user's role away; an admin (not their own), or the command line. Returns the role they held. */
export async function revokeRole(pool: pg.Pool, actor: Actor, revoke: { email: string; reason?: string | undefined }): Promise<Role | undefined> {
  return inTransaction(pool, async (db) => {
    await requireRole(db, actor, 'admin', { cli: true });
    const user = await userByEmail(db, revoke.email);
    if (actor.id === user.id) throw new OperatorError('OPERATOR_OWN_ROLE', 'An admin cannot revoke their own role');
    const removed = await db.query<{ role: Role }>('DELETE FROM operator_roles WHERE user_id = $1 RETURNING role', [user.id]);
    const role = removed.rows[0]?.role;
    if (role) await recordAudit(db, actor, { action: 'role.revoke', subject: `user:${user.id}`, reason: revoke.reason, details: { email: user.email, role } });
    return role;
  });
}

export type OperatorListItem = { userId: string; email: string | null; role: Role; grantedBy: string | null; grantedAt: string };

export async function listOperators(db: Queryable): Promise<OperatorListItem[]> {
  const rows = await db.query<OperatorListItem>(
    `SELECT r.user_id AS "userId", u.email, r.role, g.email AS "grantedBy", to_char(r.granted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "grantedAt"
       FROM operator_roles r JOIN users u ON u.id = r.user_id LEFT JOIN users g ON g.id = r.granted_by
      ORDER BY u.email`,
  );
  return rows.rows;
}

/**
 * For a decision another module makes in its own transaction and lets us join (the withdrawal review's `onDecided`):
 * inside that transaction, the actor still holds `needed` and the audit line is written, or the decision rolls back.
 */
export function decidedBy(actor: Actor, needed: Role, line: AuditLine): (tx: Queryable) => Promise<void> {
  return async (tx) => {
    await requireRole(tx, actor, needed);
    await recordAudit(tx, actor, line);
  };
}
