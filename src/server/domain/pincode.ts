import { hash, verify } from '@node-rs/argon2';
import type { Queryable } from './ledger.ts';
import { ARGON2_OPTIONS } from './passwords.ts';
import { DomainError } from './errors.ts';
import type { userPincodes, users } from '../db/schema.ts';

/** SPEC §5: exactly four digits. */
export const PINCODE_PATTERN = /^\d{4}$/;

/**
 * Wrong codes in a row: the first four answer B2C_USM0031; from the fifth on each one answers B2C_USM0030 and
 * locks the passcode for a wait that doubles with every further failure (30 s, 1 min, 2 min, 4 min, 8 min); the
 * tenth blocks it (B2C_USM0032) until the user resets it through e-mail. A right code clears the count.
 */
export const PINCODE_POLICY = { freeFailures: 5, baseWaitSeconds: 30, blockAt: 10 } as const;

/** Seconds of the wait that follows the `failures`-th wrong code in a row (0 while below the free failures). */
export function pincodeWaitSeconds(failures: number): number {
  if (failures < PINCODE_POLICY.freeFailures) return 0;
  return PINCODE_POLICY.baseWaitSeconds * 2 ** Math.min(failures - PINCODE_POLICY.freeFailures, 20);
}

type Language = (typeof users.$inferSelect)['language'];

/** The refusals of SPEC §8; they carry the user's language, so the gateway can answer in it (http/messages.ts). */
export function wrongPincode(language: Language): DomainError {
  return new DomainError('B2C_USM0031', 'Incorrect pin code', { details: { language } });
}

export function pincodeWait(seconds: number, language: Language): DomainError {
  return new DomainError('B2C_USM0030', `Too many wrong pin codes; wait ${Math.max(1, Math.ceil(seconds))} s`, { details: { language, waitSeconds: seconds, retryAfterSeconds: Math.max(1, Math.ceil(seconds)) } });
}

export function pincodeBlocked(language: Language): DomainError {
  return new DomainError('B2C_USM0032', 'The pin code is blocked; reset it through e-mail', { details: { language } });
}

export function hashPincode(pincode: string): Promise<string> {
  return hash(pincode, ARGON2_OPTIONS);
}

type Pincode = typeof userPincodes.$inferSelect;
type Reserved = Pick<Pincode, 'failures'> & { pinHash: NonNullable<Pincode['pinHash']>; language: Language };
type Standing = Pick<Pincode, 'pinHash'> & { blocked: boolean; waitSeconds: number; language: Language };

/**
 * The passcode guard (SPEC §6) for the actions it protects: withdrawals, sell orders (crypto leaving the wallet
 * like a withdrawal), swap confirmation, e-mail change and turning the passcode off. Call it inside the request before anything moves. It passes when the user has no
 * active passcode; otherwise a missing or wrong `pincode` header throws DomainError B2C_USM0031 (wrong code),
 * B2C_USM0030 (too many wrong codes: wait) or B2C_USM0032 (blocked until reset by e-mail). Only a four-digit code
 * uses up a try: a missing or malformed one guesses nothing, so it is refused without counting.
 *
 * Call it with the pool (or a connection outside any transaction): each try is counted in its own statement
 * before the code is checked, so a refusal that rolls back the caller's transaction would lose its count.
 * Counting first, in one atomic UPDATE, means parallel guesses from any number of processes each use up a try.
 */
export async function guardPincode(db: Queryable, userId: string, pincode: string | undefined): Promise<void> {
  const guess = pincode !== undefined && PINCODE_PATTERN.test(pincode) ? pincode : undefined;
  for (let round = 0; round < 3; round += 1) {
    const reserved = await db.query<Reserved>(
      `UPDATE user_pincodes
          SET failures = failures + 1,
              locked_until = CASE WHEN failures + 1 >= $2 THEN now() + make_interval(secs => $3 * power(2, least(failures + 1 - $2, 20))) ELSE NULL END,
              blocked_at = CASE WHEN failures + 1 >= $4 THEN now() ELSE NULL END,
              updated_at = now()
        WHERE $5 AND user_id = $1 AND pin_hash IS NOT NULL AND blocked_at IS NULL AND (locked_until IS NULL OR locked_until <= now())
        RETURNING failures, pin_hash AS "pinHash", (SELECT language FROM users WHERE users.id = user_pincodes.user_id) AS language`,
      [userId, PINCODE_POLICY.freeFailures, PINCODE_POLICY.baseWaitSeconds, PINCODE_POLICY.blockAt, guess !== undefined],
    );
    const row = reserved.rows[0];
    if (row) {
      const right = guess !== undefined && (await verify(row.pinHash, guess).catch(() => false));
      if (right) {
        // Only this try's count is taken back with the rest: the pin hash must still be the one just checked.
        await db.query(`UPDATE user_pincodes SET failures = 0, locked_until = NULL, blocked_at = NULL, updated_at = now() WHERE user_id = $1 AND pin_hash = $2`, [userId, row.pinHash]);
        return;
      }
      if (row.failures >= PINCODE_POLICY.blockAt) throw pincodeBlocked(row.language);
      if (row.failures >= PINCODE_POLICY.freeFailures) throw pincodeWait(pincodeWaitSeconds(row.failures), row.language);
      throw wrongPincode(row.language);
    }
    const standing = await db.query<Standing>(
      `SELECT p.pin_hash AS "pinHash", p.blocked_at IS NOT NULL AS blocked,
              greatest(0, extract(epoch FROM (p.locked_until - now())))::float8 AS "waitSeconds", u.language
         FROM user_pincodes p JOIN users u ON u.id = p.user_id WHERE p.user_id = $1`,
      [userId],
    );
    const state = standing.rows[0];
    if (!state?.pinHash) return;
    if (state.blocked) throw pincodeBlocked(state.language);
    if (state.waitSeconds > 0) throw pincodeWait(state.waitSeconds, state.language);
    if (guess === undefined) throw wrongPincode(state.language);
    // The wait ran out between the two statements: try to count again.
  }
  throw new DomainError('PINCODE_BUSY', 'The pin code is being checked by another request; try again');
}

/** Whether the user's passcode is on (GET /user's pinCodeActive). */
export async function pincodeActive(db: Queryable, userId: string): Promise<boolean> {
  const result = await db.query<{ active: boolean }>('SELECT pin_hash IS NOT NULL AS active FROM user_pincodes WHERE user_id = $1', [userId]);
  return result.rows[0]?.active ?? false;
}

/** How recent a sign-in stands in for the passcode when it is off (linking a messenger account, issue 14). */
export const RECENT_SIGN_IN_S = 300;

/**
 * The guard of changes that let another way into the account (linking or unlinking a messenger account): the
 * passcode when it is on, as guardPincode checks it; otherwise a sign-in less than RECENT_SIGN_IN_S old, so a
 * stolen access token (valid for minutes after a sign-in long ago) cannot make itself lasting access.
 * `authTime` is the token's auth_time in seconds since the epoch.
 */
export async function guardPincodeOrRecentSignIn(db: Queryable, userId: string, pincode: string | undefined, authTime: number | undefined, nowMs = Date.now()): Promise<void> {
  if (await pincodeActive(db, userId)) return guardPincode(db, userId, pincode);
  if (authTime !== undefined && nowMs / 1000 - authTime <= RECENT_SIGN_IN_S) return;
  throw new DomainError('RECENT_SIGN_IN_REQUIRED', 'Sign in again (or turn the passcode on) to change how this account signs in');
}
