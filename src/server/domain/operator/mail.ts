/**
 * The mail outbox as operators see it, and resending one of its mails as it was rendered. A mail whose link or code
 * was not kept (adapters/mail/mailer.ts removes them at rest) cannot be resent: the user asks for a new one. The
 * resend is recorded first (a new outbox row and the audit line, one transaction), then sent, then its status set.
 */
import type pg from 'pg';
import { inTransaction } from '../../db/transaction.ts';
import type { MailDelivery } from '../../adapters/mail/port.ts';
import type { Queryable } from '../ledger.ts';
import type { Actor } from './actor.ts';
import { recordAudit } from './audit.ts';
import { OperatorError } from './errors.ts';
import { requireRole } from './roles.ts';

export type OutboxMail = { id: string; recipient: string; subject: string; kind: string; status: 'outbox' | 'sent' | 'failed'; error: string | null; createdAt: string; resendable: boolean };

const REMOVED = `(m.text LIKE '%[link removed]%' OR m.text LIKE '%[code removed]%')`;

/** The newest mails first, of one status or recipient when given; `before` pages by id. */
export async function listOutbox(db: Queryable, query: { status?: OutboxMail['status'] | undefined; recipient?: string | undefined; before?: string | undefined } = {}): Promise<OutboxMail[]> {
  const rows = await db.query<OutboxMail>(
    `SELECT m.id::text AS id, m.recipient, m.subject, m.kind, m.status, m.error, to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "createdAt",
            NOT ${REMOVED} AS resendable
       FROM mail_outbox m
      WHERE ($1::text IS NULL OR m.status = $1) AND ($2::text IS NULL OR m.recipient = $2) AND ($3::bigint IS NULL OR m.id < $3)
      ORDER BY m.id DESC LIMIT 100`,
    [query.status ?? null, query.recipient?.trim().toLowerCase() ?? null, query.before ?? null],
  );
  return rows.rows;
}

/** Sends mail `id` again to its recipient; returns the new outbox row's id and how it went. */
export async function resendMail(pool: pg.Pool, delivery: MailDelivery, actor: Actor, order: { id: string; reason?: string | undefined }): Promise<{ id: string; status: 'outbox' | 'sent' | 'failed' }> {
  if (!/^\d{1,18}$/.test(order.id)) throw new OperatorError('MAIL_NOT_FOUND', `No mail ${order.id}`);
  const { mail, copy } = await inTransaction(pool, async (db) => {
    await requireRole(db, actor, 'support');
    const found = await db.query<{ recipient: string; subject: string; text: string; html: string; kind: string; removed: boolean }>(
      `SELECT m.recipient, m.subject, m.text, m.html, m.kind, ${REMOVED} AS removed FROM mail_outbox m WHERE m.id = $1`,
      [order.id],
    );
    const row = found.rows[0];
    if (!row) throw new OperatorError('MAIL_NOT_FOUND', `No mail ${order.id}`);
    if (row.removed) throw new OperatorError('MAIL_NOT_RESENDABLE', 'This mail was kept without its link or code: the user asks for a new one');
    const inserted = await db.query<{ id: string }>(
      `INSERT INTO mail_outbox (recipient, subject, text, html, kind, status) VALUES ($1, $2, $3, $4, $5, 'outbox') RETURNING id::text AS id`,
      [row.recipient, row.subject, row.text, row.html, row.kind],
    );
    const copyId = inserted.rows[0]?.id ?? '';
    await recordAudit(db, actor, { action: 'mail.resend', subject: `mail:${order.id}`, reason: order.reason, details: { to: row.recipient, kind: row.kind, copy: copyId } });
    return { mail: row, copy: copyId };
  });
  const sent = await delivery.deliver({ to: mail.recipient, kind: mail.kind, subject: mail.subject, text: mail.text, html: mail.html });
  if (sent.status !== 'outbox') await pool.query('UPDATE mail_outbox SET status = $2, error = $3 WHERE id = $1', [copy, sent.status, sent.error]);
  return { id: copy, status: sent.status };
}
