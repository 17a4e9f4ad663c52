import { randomInt, timingSafeEqual } from 'node:crypto';
import type pg from 'pg';
import type { Mailer } from '../adapters/mail/port.ts';
import type { SecretsKey } from '../adapters/keys/port.ts';
import { storedCode, storedCodes } from './codes.ts';
import type { Logger } from '../log.ts';
import { DomainError } from './errors.ts';
import type { emailChanges, userPincodes, users } from '../db/schema.ts';
import { realEmail } from '../../lib/messenger-email.ts';
import { guardPincode, hashPincode, pincodeActive, PINCODE_PATTERN } from './pincode.ts';
import { normalizeEmail } from './users.ts';
import { inTransaction } from '../db/transaction.ts';

/** SPEC §5, §9: a verification code is 4 alphanumeric characters; a new one may be sent after 59 s. */
export const VERIFICATION_CODE_PATTERN = /^[A-Za-z0-9]{4}$/;
export const RESEND_AFTER_SECONDS = 59;
export const CODE_TTL_MINUTES = 15;
/** Wrong codes one mailed code takes before it stops working: with 31⁴ codes, guessing one is a long shot. */
export const CODE_ATTEMPTS = 5;
/**
 * Passcode-reset codes mailed to one user in a day: with CODE_ATTEMPTS tries each, 25 guesses a day at 31⁴ codes,
 * where a code every 59 s would give 7 000 and find one in about two months.
 */
export const MAX_RESET_CODES_PER_DAY = 5;
/** Codes one e-mail change may mail (first one included); starting over is again guarded by the passcode. */
export const MAX_SENDS = 5;
// No 0/O, 1/I/L: the code is read off a mail and typed.
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

export type EmailChangeStage = (typeof emailChanges.$inferSelect)['stage'];

function newVerificationCode(): string {
  return Array.from({ length: 4 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

const notActive = () => new DomainError('PINCODE_NOT_ACTIVE', 'No pin code is set');

type UserRow = Pick<typeof users.$inferSelect, 'email' | 'language'>;
type EmailChange = typeof emailChanges.$inferSelect;

/**
 * The passcode (SPEC §7 /user/pinCode/*) and the e-mail change by verification codes (/user/email-change*).
 * Every refusal is a DomainError with the wire's code; the passcode checks go through `guardPincode`.
 */
export function createProtectionService(deps: { pool: pg.Pool; mailer: Mailer; log: Logger; secrets: SecretsKey }) {
  const { pool, mailer, log } = deps;
  // A keyed hash: 31⁴ four-character codes are no secret behind a bare sha256 to anyone who reads the table.
  const hashVerificationCode = (code: string) => storedCode(deps.secrets, 'verification', code.trim().toUpperCase());
  // A code mailed before a SECRETS_KEY rotation is stored under the previous key.
  const matchesCode = (stored: string, code: string) => storedCodes(deps.secrets, 'verification', code.trim().toUpperCase()).some((hash) => sameHash(stored, hash));

  const user = async (userId: string): Promise<UserRow> => {
    const result = await pool.query<UserRow>('SELECT email, language FROM users WHERE id = $1', [userId]);
    const row = result.rows[0];
    if (!row) throw new DomainError('NOT_FOUND', 'The user does not exist');
    return row;
  };

  const requireActive = async (userId: string) => {
    if (!(await pincodeActive(pool, userId))) throw notActive();
  };

  const checkNewPincode = (pincode: string) => {
    if (!PINCODE_PATTERN.test(pincode)) throw new DomainError('VALIDATION', 'The pin code must be exactly 4 digits');
  };

  const mailCode = async (to: string, kind: 'email_change_old' | 'email_change_new' | 'pincode_reset', language: UserRow['language'], code: string) => {
    try {
      await mailer.send({ to, kind, language, link: code });
    } catch (error) {
      // The per-address mail cap (limits.ts) is the user's to wait out, not a failure of ours.
      if (error instanceof DomainError) throw error;
      log.error({ err: error, kind }, 'verification mail failed');
      throw new DomainError('MAIL_UNAVAILABLE', 'The verification mail could not be sent; try again later', { cause: error });
    }
  };

  return {
    /** POST /user/pinCode/enable: sets the first passcode; refused while one is set (change it instead). */
    async enable(userId: string, pincode: string): Promise<void> {
      checkNewPincode(pincode);
      const pinHash = await hashPincode(pincode);
      const result = await pool.query(
        `INSERT INTO user_pincodes (user_id, pin_hash, failures, locked_until, blocked_at, updated_at) VALUES ($1, $2, 0, NULL, NULL, now())
         ON CONFLICT (user_id) DO UPDATE SET pin_hash = excluded.pin_hash, failures = 0, locked_until = NULL, blocked_at = NULL,
           reset_code_hash = NULL, reset_expires_at = NULL, reset_attempts = 0, updated_at = now()
         WHERE user_pincodes.pin_hash IS NULL`,
        [userId, pinHash],
      );
      if (result.rowCount === 0) throw new DomainError('PINCODE_ACTIVE', 'A pin code is already set; change it instead');
    },

    /** POST /user/pinCode/validate: the header's code against the stored one, counted like any guarded action. */
    async validate(userId: string, pincode: string | undefined): Promise<void> {
      await requireActive(userId);
      await guardPincode(pool, userId, pincode);
    },

    /** POST /user/pinCode/change: the header holds the current code, the body the new one. */
    async change(userId: string, current: string | undefined, next: string): Promise<void> {
      checkNewPincode(next);
      await requireActive(userId);
      await guardPincode(pool, userId, current);
      const pinHash = await hashPincode(next);
      await pool.query('UPDATE user_pincodes SET pin_hash = $2, failures = 0, locked_until = NULL, updated_at = now() WHERE user_id = $1 AND pin_hash IS NOT NULL', [userId, pinHash]);
    },

    /** POST /user/pinCode/disable: needs the current code. */
    async disable(userId: string, current: string | undefined): Promise<void> {
      await requireActive(userId);
      await guardPincode(pool, userId, current);
      await pool.query('UPDATE user_pincodes SET pin_hash = NULL, failures = 0, locked_until = NULL, blocked_at = NULL, updated_at = now() WHERE user_id = $1', [userId]);
    },

    /** POST /user/pinCode/reset: a blocked passcode (B2C_USM0032) mails a code that turns it off. */
    async requestReset(userId: string): Promise<void> {
      const { email, language } = await user(userId);
      const to = realEmail(email);
      if (!to) throw new DomainError('EMAIL_REQUIRED', 'Add an e-mail address to reset the pin code');
      const code = newVerificationCode();
      // A new day of codes starts once the last one began more than a day ago.
      const result = await pool.query(
        `UPDATE user_pincodes SET reset_code_hash = $2, reset_expires_at = now() + make_interval(mins => $3), reset_attempts = 0, updated_at = now(),
            reset_sends = CASE WHEN reset_sends_since > now() - interval '1 day' THEN reset_sends + 1 ELSE 1 END,
            reset_sends_since = CASE WHEN reset_sends_since > now() - interval '1 day' THEN reset_sends_since ELSE now() END
          WHERE user_id = $1 AND blocked_at IS NOT NULL
            AND (reset_expires_at IS NULL OR reset_expires_at - make_interval(mins => $3) + make_interval(secs => $4) <= now())
            AND NOT coalesce(reset_sends_since > now() - interval '1 day' AND reset_sends >= $5, false)`,
        [userId, hashVerificationCode(code), CODE_TTL_MINUTES, RESEND_AFTER_SECONDS, MAX_RESET_CODES_PER_DAY],
      );
      if (result.rowCount === 0) {
        const state = await pool.query<{ capped: boolean }>(
          `SELECT reset_sends_since > now() - interval '1 day' AND reset_sends >= $2 AS capped FROM user_pincodes WHERE user_id = $1 AND blocked_at IS NOT NULL`,
          [userId, MAX_RESET_CODES_PER_DAY],
        );
        const row = state.rows[0];
        if (!row) throw new DomainError('PINCODE_NOT_BLOCKED', 'The pin code is not blocked');
        if (row.capped) throw new DomainError('TOO_MANY_CODES', `${MAX_RESET_CODES_PER_DAY} codes were sent in the last 24 hours; try again later`);
        throw new DomainError('RESEND_TOO_SOON', `A code was sent less than ${RESEND_AFTER_SECONDS} s ago`);
      }
      await mailCode(to, 'pincode_reset', language, code);
    },

    /** POST /user/pinCode/reset/confirm: the mailed code turns the blocked passcode off. */
    async confirmReset(userId: string, code: string): Promise<void> {
      const tried = await pool.query<{ resetCodeHash: NonNullable<(typeof userPincodes.$inferSelect)['resetCodeHash']> }>(
        `UPDATE user_pincodes SET reset_attempts = reset_attempts + 1
          WHERE user_id = $1 AND reset_code_hash IS NOT NULL AND reset_expires_at > now() AND reset_attempts < $2
          RETURNING reset_code_hash AS "resetCodeHash"`,
        [userId, CODE_ATTEMPTS],
      );
      const row = tried.rows[0];
      if (!row || !matchesCode(row.resetCodeHash, code)) throw new DomainError('CONFIRMATION_INVALID', 'The code is wrong or has expired');
      await pool.query(
        `UPDATE user_pincodes SET pin_hash = NULL, failures = 0, locked_until = NULL, blocked_at = NULL, reset_code_hash = NULL, reset_expires_at = NULL, reset_attempts = 0, updated_at = now()
          WHERE user_id = $1 AND reset_code_hash = $2`,
        [userId, row.resetCodeHash],
      );
    },

    /**
     * POST /user/email-change: guarded by the passcode. With a real e-mail on the account, the old address gets a
     * code first (stage 'old'); without one (none, or the messenger's), the new address gets it at once ('new').
     */
    async startEmailChange(userId: string, rawEmail: string, pincode: string | undefined): Promise<{ stage: EmailChangeStage }> {
      await guardPincode(pool, userId, pincode);
      const newEmail = normalizeEmail(rawEmail);
      if (realEmail(newEmail) === null) throw new DomainError('VALIDATION', 'This address cannot receive mail; give another one');
      const { email, language } = await user(userId);
      const current = realEmail(email);
      if (current === newEmail) throw new DomainError('EMAIL_SAME', 'This is already your e-mail address');
      const taken = await pool.query('SELECT 1 FROM users WHERE email = $1 AND id <> $2', [newEmail, userId]);
      if (taken.rowCount) throw new DomainError('EMAIL_TAKEN', 'An account with this e-mail already exists');
      const stage: EmailChangeStage = current ? 'old' : 'new';
      const code = newVerificationCode();
      await pool.query(
        `INSERT INTO email_changes (user_id, new_email, stage, code_hash, attempts, sends, sent_at, expires_at)
         VALUES ($1, $2, $3, $4, 0, 1, now(), now() + make_interval(mins => $5))
         ON CONFLICT (user_id) DO UPDATE SET new_email = excluded.new_email, stage = excluded.stage, code_hash = excluded.code_hash,
           attempts = 0, sends = 1, sent_at = excluded.sent_at, expires_at = excluded.expires_at, created_at = now()`,
        [userId, newEmail, stage, hashVerificationCode(code), CODE_TTL_MINUTES],
      );
      await mailCode(current && stage === 'old' ? current : newEmail, stage === 'old' ? 'email_change_old' : 'email_change_new', language, code);
      return { stage };
    },

    /** POST /user/email-change/confirm: the old address's code moves on to the new one; the new one's sets the e-mail. */
    async confirmEmailChange(userId: string, code: string): Promise<{ stage: 'new' | 'done'; email?: string }> {
      const tried = await pool.query<Pick<EmailChange, 'stage' | 'codeHash' | 'newEmail'>>(
        `UPDATE email_changes SET attempts = attempts + 1 WHERE user_id = $1 AND expires_at > now() AND attempts < $2
         RETURNING stage, code_hash AS "codeHash", new_email AS "newEmail"`,
        [userId, CODE_ATTEMPTS],
      );
      const row = tried.rows[0];
      if (!row) throw new DomainError('CONFIRMATION_INVALID', 'The code has expired or was tried too often; ask for a new one');
      if (!matchesCode(row.codeHash, code)) throw new DomainError('CONFIRMATION_INVALID', 'The code is wrong');
      const { language } = await user(userId);
      if (row.stage === 'old') {
        const next = newVerificationCode();
        // Only the request holding the current code moves the stage on: a double submit sends one mail.
        const moved = await pool.query(
          `UPDATE email_changes SET stage = 'new', code_hash = $3, attempts = 0, sends = 1, sent_at = now(), expires_at = now() + make_interval(mins => $4)
            WHERE user_id = $1 AND stage = 'old' AND code_hash = $2`,
          [userId, row.codeHash, hashVerificationCode(next), CODE_TTL_MINUTES],
        );
        if (moved.rowCount === 0) throw new DomainError('CONFIRMATION_USED', 'This code was already used');
        await mailCode(row.newEmail, 'email_change_new', language, next);
        return { stage: 'new' };
      }
      try {
        return await inTransaction(pool, async (client) => {
          const done = await client.query<Pick<EmailChange, 'newEmail'>>(`DELETE FROM email_changes WHERE user_id = $1 AND stage = 'new' AND code_hash = $2 RETURNING new_email AS "newEmail"`, [
            userId,
            row.codeHash,
          ]);
          const email = done.rows[0]?.newEmail;
          if (!email) throw new DomainError('CONFIRMATION_USED', 'This code was already used');
          await client.query('UPDATE users SET email = $2, email_confirmed_at = coalesce(email_confirmed_at, now()) WHERE id = $1', [userId, email]);
          return { stage: 'done' as const, email };
        });
      } catch (error) {
        if ((error as { code?: string }).code === '23505') throw new DomainError('EMAIL_TAKEN', 'An account with this e-mail already exists', { cause: error });
        throw error;
      }
    },

    /**
     * POST /user/email-change/resend-confirmation: a fresh code for the current stage. The screen waits 59 s between
     * sends; the gateway caps their number per change instead, so no clock of its own has to agree with the screen's.
     */
    async resendEmailChange(userId: string): Promise<{ stage: EmailChangeStage }> {
      const code = newVerificationCode();
      const result = await pool.query<Pick<EmailChange, 'stage' | 'newEmail'>>(
        `UPDATE email_changes SET code_hash = $2, attempts = 0, sends = sends + 1, sent_at = now(), expires_at = now() + make_interval(mins => $3)
          WHERE user_id = $1 AND sends < $4
          RETURNING stage, new_email AS "newEmail"`,
        [userId, hashVerificationCode(code), CODE_TTL_MINUTES, MAX_SENDS],
      );
      const row = result.rows[0];
      if (!row) {
        const pending = await pool.query('SELECT 1 FROM email_changes WHERE user_id = $1', [userId]);
        if (pending.rowCount === 0) throw new DomainError('NO_EMAIL_CHANGE', 'No e-mail change is in progress');
        throw new DomainError('TOO_MANY_CODES', 'Too many codes were sent for this change; start it again');
      }
      const { email, language } = await user(userId);
      const current = realEmail(email);
      await mailCode(row.stage === 'old' && current ? current : row.newEmail, row.stage === 'old' ? 'email_change_old' : 'email_change_new', language, code);
      return { stage: row.stage };
    },
  };
}

export type ProtectionService = ReturnType<typeof createProtectionService>;
