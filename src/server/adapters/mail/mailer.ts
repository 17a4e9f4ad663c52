import nodemailer from 'nodemailer';
import type { Db } from '../../db/database.ts';
import { mailOutbox } from '../../db/schema.ts';
import type { Logger } from '../../log.ts';
import type { MailDelivery, Mailer } from './port.ts';
import { isCodeMail, renderMail } from './templates.ts';

/**
 * Every mail is recorded in mail_outbox; with SMTP_URL it is also sent through nodemailer, without it the link
 * goes to the log so a developer can follow it. The record keeps the link (or code) only where the outbox is the
 * mailbox, outside production without SMTP_URL: a link at rest in the database is a credential to replay.
 */
export function createMailer(options: { db: Db; log: Logger; smtpUrl: string | undefined; from: string; production: boolean }): Mailer {
  const transport = options.smtpUrl ? nodemailer.createTransport(options.smtpUrl) : undefined;
  return {
    async send(mail) {
      const rendered = renderMail(mail.kind, mail.language, mail.link, mail.text);
      let status: 'outbox' | 'sent' | 'failed' = 'outbox';
      let error: string | null = null;
      if (transport) {
        try {
          await transport.sendMail({ from: options.from, to: mail.to, replyTo: mail.replyTo, subject: rendered.subject, text: rendered.text, html: rendered.html });
          status = 'sent';
        } catch (cause) {
          status = 'failed';
          error = cause instanceof Error ? cause.message : String(cause);
          options.log.error({ err: cause, kind: mail.kind }, 'mail could not be sent');
        }
      } else if (options.production) {
        options.log.warn({ to: mail.to, kind: mail.kind }, 'mail not delivered: SMTP_URL is unset in production');
      } else {
        options.log.info({ to: mail.to, kind: mail.kind, link: mail.link }, 'mail kept in the outbox (no SMTP_URL)');
      }
      const devMailbox = !transport && !options.production;
      // Feedback carries no link or code to replay: it is kept as written.
      const kept = devMailbox || mail.kind === 'feedback' ? rendered : renderMail(mail.kind, mail.language, isCodeMail(mail.kind) ? '[code removed]' : '[link removed]');
      await options.db.insert(mailOutbox).values({ recipient: mail.to, subject: kept.subject, text: kept.text, html: kept.html, kind: mail.kind, status, error });
    },
    close() {
      transport?.close();
    },
  };
}

/**
 * Sends a mail already rendered (one from the outbox, resent by an operator) through SMTP_URL; without it, it stays
 * in the outbox (outside production that is the developer's mailbox). The caller records it.
 */
export function createMailDelivery(options: { log: Logger; smtpUrl: string | undefined; from: string }): MailDelivery {
  const transport = options.smtpUrl ? nodemailer.createTransport(options.smtpUrl) : undefined;
  return {
    async deliver(mail) {
      if (!transport) return { status: 'outbox', error: null };
      try {
        await transport.sendMail({ from: options.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
        return { status: 'sent', error: null };
      } catch (cause) {
        options.log.error({ err: cause, kind: mail.kind }, 'mail could not be resent');
        return { status: 'failed', error: cause instanceof Error ? cause.message : String(cause) };
      }
    },
    close() {
      transport?.close();
    },
  };
}
