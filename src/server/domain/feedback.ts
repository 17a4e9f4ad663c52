/**
 * 'Leave feedback' (SPEC §2 Settings): a user's message for support, kept in PostgreSQL and mailed to SUPPORT_EMAIL
 * through the mail outbox. The message is kept even when the mail is refused (the per-address cap): support can read
 * the table, and the user is never told their words were lost.
 */
import type pg from 'pg';
import type { Mailer } from '../adapters/mail/port.ts';
import type { Logger } from '../log.ts';
import { realEmail } from '../../lib/messenger-email.ts';

/** The longest message the form takes. */
export const FEEDBACK_MAX_LENGTH = 2000;

export type FeedbackInput = { text: string; replyTo: string | null };

export function createFeedbackService(deps: { pool: pg.Pool; mailer: Mailer; log: Logger; supportEmail: string }) {
  return {
    /** Keeps the message, then mails it to support; resolves with its id once it is kept. */
    async leave(userId: string, input: FeedbackInput): Promise<{ id: string }> {
      const account = await deps.pool.query<{ email: string | null }>('SELECT email FROM users WHERE id = $1', [userId]);
      const kept = await deps.pool.query<{ id: string }>('INSERT INTO feedback (user_id, reply_to, text) VALUES ($1, $2, $3) RETURNING id', [userId, input.replyTo, input.text]);
      const id = kept.rows[0]?.id;
      if (!id) throw new Error('the feedback was not saved');
      const from = input.replyTo ?? realEmail(account.rows[0]?.email) ?? `user ${userId}`;
      try {
        await deps.mailer.send({ to: deps.supportEmail, kind: 'feedback', language: 'ENG', link: from, text: input.text, replyTo: input.replyTo ?? undefined });
        await deps.pool.query('UPDATE feedback SET mailed_at = now() WHERE id = $1', [id]);
      } catch (error) {
        deps.log.warn({ err: error, feedback: id }, 'feedback kept but not mailed to support');
      }
      return { id };
    },
  };
}

export type FeedbackService = ReturnType<typeof createFeedbackService>;
