/** The mail port: what the domain asks to send. mailer.ts implements it; templates.ts renders each kind. */
export type MailLanguage = 'ENG' | 'RUS';
export type MailKind = 'confirm_email' | 'reset_password' | 'signup_existing' | 'messenger_linked' | 'account_locked' | CodeMailKind;
/** Mails that carry a short code to type instead of a link (MailRequest.link holds the code). */
export type CodeMailKind = 'email_change_old' | 'email_change_new' | 'pincode_reset';

/** `link` is the mail's link, or for the code mails (CodeMailKind) the code to type. */
export type MailRequest = { to: string; kind: MailKind; language: MailLanguage; link: string };

/** The port the user service sends mail through. */
export type Mailer = { send: (mail: MailRequest) => Promise<void>; close: () => void };
