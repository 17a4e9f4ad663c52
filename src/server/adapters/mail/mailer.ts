import nodemailer from 'nodemailer';
import type { Db } from '../../db/database.ts';
import { mailOutbox } from '../../db/schema.ts';
import type { Logger } from '../../log.ts';
import { renderMail, type MailKind, type MailLanguage } from './templates.ts';

/** `link` is the mail's link, or for the code mails (templates.ts CodeMailKind) the code to type. */
export type MailRequest = { to: string; kind: MailKind; language: MailLanguage; link: string };

/** The port the user service sends mail through. */
export type Mailer = { send: (mail: MailRequest) => Promise<void>; close: () => void };

/**
 * Every mail is recorded in mail_outbox; with SMTP_URL it is also sent through nodemailer, without it the link
 * goes to the log so a developer can follow it.
 */
export function createMailer(options: { db: Db; log: Logger; smtpUrl: string | undefined; from: string }): Mailer {
  const transport = options.smtpUrl ? nodemailer.createTransport(options.smtpUrl) : undefined;
  return {
    async send(mail) {
      const rendered = renderMail(mail.kind, mail.language, mail.link);
      let status: 'outbox' | 'sent' | 'failed' = 'outbox';
      let error: string | null = null;
      if (transport) {
        try {
          await transport.sendMail({ from: options.from, to: mail.to, subject: rendered.subject, text: rendered.text, html: rendered.html });
          status = 'sent';
        } catch (cause) {
          status = 'failed';
          error = cause instanceof Error ? cause.message : String(cause);
          options.log.error({ err: cause, kind: mail.kind }, 'mail could not be sent');
        }
      } else {
        options.log.info({ to: mail.to, kind: mail.kind, link: mail.link }, 'mail kept in the outbox (no SMTP_URL)');
      }
      // A sent mail's link is a live one-time credential: the record keeps the mail without it.
      const keep = (body: string) => (status === 'sent' ? body.split(mail.link).join('[link removed after sending]') : body);
      await options.db
        .insert(mailOutbox)
        .values({ recipient: mail.to, subject: rendered.subject, text: keep(rendered.text), html: keep(rendered.html), kind: mail.kind, status, error });
    },
    close() {
      transport?.close();
    },
  };
}
