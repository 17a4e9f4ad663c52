import { SMTPServer } from 'smtp-server';
import { freePort } from './server.ts';

/** A mail as received, with quoted-printable soft breaks undone so links read whole. */
export type ReceivedMail = { to: string; raw: string };

export type MailCatcher = {
  /** The SMTP_URL the server sends through. */
  url: string;
  inbox: ReceivedMail[];
  /** While true, every mail is refused, as a full mailbox or a failing relay would. */
  refuse: boolean;
  waitForMail: (to: string, subject: RegExp) => Promise<ReceivedMail>;
  /** The first link of the first mail to an address whose text matches. */
  waitForLink: (to: string, subject: RegExp) => Promise<string>;
  close: () => Promise<void>;
};

/** A real SMTP server on loopback that keeps what it receives: production keeps no live link in the outbox. */
export async function startMailCatcher(): Promise<MailCatcher> {
  const port = await freePort();
  const catcher: MailCatcher = {
    url: `smtp://127.0.0.1:${port}`,
    inbox: [],
    refuse: false,
    async waitForMail(to, subject) {
      for (let i = 0; i < 100; i += 1) {
        const mail = catcher.inbox.find((m) => m.to === to.toLowerCase() && subject.test(m.raw));
        if (mail) return mail;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`no mail to ${to}`);
    },
    async waitForLink(to, subject) {
      const mail = await catcher.waitForMail(to, subject);
      const link = mail.raw.match(/https?:\/\/[^\s"<>]+/)?.[0];
      if (!link) throw new Error(`the mail to ${to} has no link`);
      return link;
    },
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      stream.on('end', () => {
        if (catcher.refuse) return callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
        catcher.inbox.push({ to: (session.envelope.rcptTo[0]?.address ?? '').toLowerCase(), raw: raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(port, '127.0.0.1', resolve));
  return catcher;
}
