/** The mail port: what the domain asks to send. mailer.ts implements it; templates.ts renders each kind. */
export type MailLanguage = 'ENG' | 'RUS';
export type MailKind = 'confirm_email' | 'reset_password' | 'signup_existing' | 'messenger_linked' | 'account_locked' | 'feedback' | CodeMailKind;
/** Mails that carry a short code to type instead of a link (MailRequest.link holds the code). */
export type CodeMailKind = 'email_change_old' | 'email_change_new' | 'pincode_reset';

/**
 * `link` is the mail's link, or for the code mails (CodeMailKind) the code to type. A 'feedback' mail goes to support:
 * `link` names who wrote it, `text` is what they wrote and `replyTo` where support answers.
 */
export type MailRequest = { to: string; kind: MailKind; language: MailLanguage; link: string; text?: string; replyTo?: string };

/** The port the user service sends mail through. */
export type Mailer = { send: (mail: MailRequest) => Promise<void>; close: () => void };

/** A mail as the outbox keeps it, rendered already. */
export type StoredMail = { to: string; kind: string; subject: string; text: string; html: string };

/** Sends a stored mail again as it is (the operator console's resend): 'outbox' where no SMTP_URL sends it. */
export type MailDelivery = { deliver: (mail: StoredMail) => Promise<{ status: 'outbox' | 'sent' | 'failed'; error: string | null }>; close: () => void };
