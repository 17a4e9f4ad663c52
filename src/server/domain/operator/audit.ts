/**
 * The operators' audit log (operator_audit): who, when, what, to what, why, with details. Every action writes its
 * line with `recordAudit` in the action's own transaction, so there is no action without its line and no line
 * without its action. The table refuses UPDATE, DELETE and TRUNCATE (migration 0031).
 */
import type { Queryable } from '../ledger.ts';
import type { Actor } from './actor.ts';

export type AuditLine = { action: string; subject: string; reason?: string | undefined; details?: Record<string, unknown> };

export async function recordAudit(db: Queryable, actor: Actor, line: AuditLine): Promise<void> {
  await db.query('INSERT INTO operator_audit (operator_id, actor, action, subject, reason, details) VALUES ($1, $2, $3, $4, $5, $6)', [
    actor.id,
    actor.email,
    line.action,
    line.subject,
    line.reason ?? null,
    JSON.stringify(line.details ?? {}),
  ]);
}

export type AuditItem = { id: number; at: string; operatorId: string | null; actor: string; action: string; subject: string; reason: string | null; details: Record<string, unknown> };

/** The newest lines first, `limit` of them before line `before`; of one subject (or subjects) when given. */
export async function listAudit(db: Queryable, query: { before?: number | undefined; limit?: number | undefined; subjects?: readonly string[] | undefined } = {}): Promise<AuditItem[]> {
  const rows = await db.query<Omit<AuditItem, 'id'> & { id: string }>(
    `SELECT id, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS at, operator_id AS "operatorId", actor, action, subject, reason, details
       FROM operator_audit
      WHERE ($1::bigint IS NULL OR id < $1) AND ($2::text[] IS NULL OR subject = ANY($2))
      ORDER BY id DESC LIMIT $3`,
    [query.before ?? null, query.subjects ?? null, Math.min(Math.max(query.limit ?? 50, 1), 200)],
  );
  return rows.rows.map((r) => ({ ...r, id: Number(r.id) }));
}
