/**
 * The sign-in throttle's storage (domain/throttle.ts holds its rules): the user and the throttle rows read in one round
 * trip, an attempt reserved before the password is checked, and a reservation taken back. Every sign-in runs these.
 */
import type pg from 'pg';
import type { users } from '../db/schema.ts';
import { inTransaction } from '../db/transaction.ts';
import { afterFailure, retryAfterMs, type ThrottlePolicy, type ThrottleState } from './throttle.ts';

type LoginRow = { user: { id: string; passwordHash: string | null; confirmed: boolean; language: (typeof users.$inferSelect)['language'] } | null; throttle: Array<{ key: string; failures: number; windowStartedAt: string; lockedUntil: string | null }> | null };

type Reserved = { key: string; before: ThrottleState | undefined; after: ThrottleState };

const iso = (date: Date | null | undefined) => date?.toISOString() ?? null;

/**
 * Every statement is prepared once per connection (named; the keys go as arrays, so the text does not vary with
 * their number): each sign-in runs them, and PostgreSQL's share of a login's CPU was as large as the server's own
 * beside argon2id (bench:login).
 */
export function createLoginThrottleStore(pool: pg.Pool, now: () => Date) {
  /** The user and both throttle rows in one round trip: a login's database work is on the hot path. */
  const readLoginState = async (email: string, keys: string[]): Promise<{ user: LoginRow['user']; throttle: Map<string, ThrottleState> }> => {
    const result = await pool.query<LoginRow>({
      name: 'login_state',
      text: `SELECT
        (SELECT json_build_object('id', id, 'passwordHash', password_hash, 'confirmed', email_confirmed_at IS NOT NULL, 'language', language) FROM users WHERE email = $1) AS "user",
        (SELECT json_agg(json_build_object('key', key, 'failures', failures, 'windowStartedAt', window_started_at, 'lockedUntil', locked_until))
           FROM login_throttle WHERE key = ANY($2::text[])) AS "throttle"`,
      values: [email, keys],
    });
    const row = result.rows[0];
    const throttle = new Map(
      (row?.throttle ?? []).map((t) => [t.key, { failures: t.failures, windowStartedAt: new Date(t.windowStartedAt), lockedUntil: t.lockedUntil ? new Date(t.lockedUntil) : null }]),
    );
    return { user: row?.user ?? null, throttle };
  };

  /**
   * Counts the attempt as a failure on every key before the password is checked, in one transaction, unless a key
   * is locked (then the wait). Counting first means a burst of parallel guesses, in any number of processes, gets
   * no more checks than the keys allow; a right password takes its count back (undoReservation).
   */
  const reserveAttempt = async (keys: Array<{ key: string; policy: ThrottlePolicy }>): Promise<{ wait: number } | { reserved: Reserved[] }> => {
    // One order for every transaction, so two attempts sharing keys cannot wait on each other's rows.
    const sorted = [...keys].sort((a, b) => (a.key < b.key ? -1 : 1));
    return inTransaction(pool, async (client) => {
      const at = now();
      // One statement creates the missing rows and locks and reads them all (ON CONFLICT DO UPDATE locks the row it
      // meets, in the keys' order), so two first failures at once cannot both start from nothing.
      const rows = await client.query<{ key: string; failures: number; window_started_at: Date; locked_until: Date | null }>({
        name: 'login_throttle_lock',
        text: `INSERT INTO login_throttle (key, failures, window_started_at)
          SELECT key, 0, $2::timestamptz FROM unnest($1::text[]) WITH ORDINALITY AS k(key, n) ORDER BY n
          ON CONFLICT (key) DO UPDATE SET key = excluded.key
          RETURNING key, failures, window_started_at, locked_until`,
        values: [sorted.map(({ key }) => key), at.toISOString()],
      });
      const states = new Map<string, ThrottleState>(
        rows.rows.map((row) => [row.key, { failures: row.failures, windowStartedAt: new Date(row.window_started_at), lockedUntil: row.locked_until ? new Date(row.locked_until) : null }]),
      );
      const wait = Math.max(...sorted.map(({ key }) => retryAfterMs(states.get(key), at)));
      if (wait > 0) return { wait };
      const reserved = sorted.map(({ key, policy }) => {
        const before = states.get(key);
        return { key, before, after: afterFailure(before?.failures ? before : undefined, at, policy) };
      });
      await client.query({
        name: 'login_throttle_count',
        text: `UPDATE login_throttle AS t SET failures = v.failures, window_started_at = v.window_started_at, locked_until = v.locked_until
          FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::timestamptz[]) AS v(key, failures, window_started_at, locked_until) WHERE t.key = v.key`,
        values: [reserved.map(({ key }) => key), reserved.map(({ after }) => after.failures), reserved.map(({ after }) => iso(after.windowStartedAt)), reserved.map(({ after }) => iso(after.lockedUntil))],
      });
      return { reserved };
    });
  };

  /**
   * Takes back a reservation's count, and its lock if nothing locked the key since; `clear` is a key deleted
   * instead (the owner's own failures from this address, after a success). One statement.
   */
  const undoReservation = async (reserved: Reserved[], clear?: string) => {
    await pool.query({
      name: 'login_throttle_undo',
      text: `WITH cleared AS (DELETE FROM login_throttle WHERE key = $1)
        UPDATE login_throttle AS t SET failures = greatest(t.failures - 1, 0),
          locked_until = CASE WHEN v.set_lock IS NOT NULL AND t.locked_until = v.set_lock THEN v.old_lock ELSE t.locked_until END
        FROM unnest($2::text[], $3::timestamptz[], $4::timestamptz[]) AS v(key, set_lock, old_lock) WHERE t.key = v.key`,
      values: [clear ?? null, reserved.map(({ key }) => key), reserved.map(({ after }) => iso(after.lockedUntil)), reserved.map(({ before }) => iso(before?.lockedUntil))],
    });
  };

  return { readLoginState, reserveAttempt, undoReservation };
}
