/**
 * SPEC §3: accounts made by the messenger sign-in carry an e-mail in the messenger's own domain; such an address is
 * no real e-mail (the wallet offers to add one, and no mail is ever sent to it).
 */
export const MESSENGER_EMAIL_DOMAINS = ['telegram.org', 't.me', 'tg.local'] as const;

export function isMessengerEmail(email: string): boolean {
  const domain = email.trim().toLowerCase().split('@')[1] ?? '';
  return MESSENGER_EMAIL_DOMAINS.some((own) => domain === own || domain.endsWith(`.${own}`));
}

/** The address mail can reach, or null when there is none (absent or in the messenger's domain). */
export function realEmail(email: string | null | undefined): string | null {
  return email && !isMessengerEmail(email) ? email : null;
}
