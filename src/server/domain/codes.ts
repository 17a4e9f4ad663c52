import { createHash, randomBytes } from 'node:crypto';

/** How long a mailed code stays usable. */
export const CODE_TTL_MS = { confirm_email: 24 * 60 * 60 * 1000, reset_password: 60 * 60 * 1000 } as const;
export type CodePurpose = keyof typeof CODE_TTL_MS;

/** 256 random bits, URL-safe: the code travels in a link path. */
export function newCode(): string {
  return randomBytes(32).toString('base64url');
}

/** Only this hash is stored: a leaked table cannot be replayed as links. */
export function hashCode(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

export function codeExpiry(purpose: CodePurpose, now: Date): Date {
  return new Date(now.getTime() + CODE_TTL_MS[purpose]);
}
