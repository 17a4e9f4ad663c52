/**
 * The sign-in throttle's storage (domain/throttle.ts holds its rules): the user and the throttle rows read in one round
 * trip, an attempt reserved before the password is checked, and a reservation taken back. Every sign-in runs these.
 */
import type pg from 'pg';
import { createKeyedTurns } from '../db/keyed-turns.ts';
import type { users } from '../db/schema.ts';
import type { ThrottlePolicy, ThrottleState } from './throttle.ts';

type LoginRow = { user: { id: string; passwordHash: string | null; confirmed: boolean; language: (typeof users.$inferSelect)['language'] } | null; throttle: Array<{ key: string; failures: number; windowStartedAt: string; lockedUntil: string | null }> | null };

type CountedRow = { key: string; failures: number; windowStartedAt: string; lockedUntil: string | null; beforeFailures: number | null; beforeWindow: string | null; beforeLock: string | null };

type Reserved = { key: string; before: ThrottleState | undefined; after: ThrottleState };

const iso = (date: Date | null | undefined) => date?.toISOString() ?? null;

/**
 * Every statement is prepared once per connection (named; the keys go as arrays, so the text does not vary with
 * their number): each sign-in runs them, and PostgreSQL's share of a login's CPU was as large as the server's own
 * beside argon2id (bench:login).
 */
export function createLoginThrottleStore(pool: pg.Pool, now: () => Date) {
  // A key's lock as this process's attempts saw it, kept only while attempts on that key wait their turn: the rest
  // of a burst is refused from memory, and the first attempt after the burst reads the row again (a password reset
  // or a right password may have lifted the lock).
  const seenLocks = new Map<string, number>();
  const inTurn = createKeyedTurns((key) => seenLocks.delete(key));
  const remember = (key: string, lockedUntil: Date | null, at: Date) => {
    if (lockedUntil && lockedUntil > at) seenLocks.set(key, lockedUntil.getTime());
  };

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
   * Counts the attempt as a failure on every key before the password is checked, unless a key is locked (then the
   * wait). Counting first means a burst of parallel guesses, in any number of processes, gets no more checks than the
   * keys allow; a right password takes its count back (undoReservation).
   *
   * One statement (RESERVE_SQL), committed on its own: the rows are locked only while it runs, so sign-ins from one
   * address (its `ip:` row) follow each other by a statement's time, not by a transaction's four round trips.
   */
  const reserveAttempt = (keys: Array<{ key: string; policy: ThrottlePolicy }>): Promise<{ wait: number } | { reserved: Reserved[] }> =>
    // Attempts on the same keys take turns here, not in the pool: a storm against one account or from one address
    // waits in memory, and other users' sign-ins keep the pool's connections.
    inTurn(
      keys.map(({ key }) => key),
      async () => {
        // One order for every statement, so two attempts sharing keys cannot wait on each other's rows.
        const sorted = [...keys].sort((a, b) => (a.key < b.key ? -1 : 1));
        const at = now();
        const known = Math.max(0, ...sorted.map(({ key }) => (seenLocks.get(key) ?? 0) - at.getTime()));
        if (known > 0) return { wait: known };
        const result = await pool.query<{ until: Date | null; locks: Record<string, string> | null; counted: CountedRow[] | null }>({
          name: 'login_throttle_reserve',
          text: RESERVE_SQL,
          values: [
            sorted.map(({ key }) => key),
            at.toISOString(),
            sorted.map(({ policy }) => policy.maxFailures),
            sorted.map(({ policy }) => policy.windowMs),
            sorted.map(({ policy }) => policy.lockMs),
            sorted.map(({ policy }) => policy.maxLockMs),
          ],
        });
        const row = result.rows[0];
        if (row?.until) {
          for (const [key, until] of Object.entries(row.locks ?? {})) remember(key, new Date(until), at);
          return { wait: Math.max(1, row.until.getTime() - at.getTime()) };
        }
        const counted = new Map((row?.counted ?? []).map((c) => [c.key, c]));
        const state = (failures: number, windowStartedAt: string, lockedUntil: string | null): ThrottleState => ({
          failures,
          windowStartedAt: new Date(windowStartedAt),
          lockedUntil: lockedUntil ? new Date(lockedUntil) : null,
        });
        const reserved = sorted.map(({ key }) => {
          const c = counted.get(key);
          if (!c) throw new Error(`the throttle key ${key} was not counted`);
          const after = state(c.failures, c.windowStartedAt, c.lockedUntil);
          remember(key, after.lockedUntil, at);
          return { key, before: c.beforeWindow === null ? undefined : state(c.beforeFailures ?? 0, c.beforeWindow, c.beforeLock), after };
        });
        return { reserved };
      },
    );

  /**
   * Takes back a reservation's count, and its lock if nothing locked the key since; `clear` is a key deleted
   * instead (the owner's own failures from this address, after a success). One statement.
   */
  const undoReservation = async (reserved: Reserved[], clear?: string) => {
    // A lock this reservation set is taken back below: the attempts waiting behind it must not see it either.
    for (const { key, after } of reserved) if (after.lockedUntil && seenLocks.get(key) === after.lockedUntil.getTime()) seenLocks.delete(key);
    if (clear) seenLocks.delete(clear);
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

/**
 * The reservation in one statement: $1 the keys (sorted), $2 the attempt's time, $3–$6 each key's policy (maxFailures,
 * windowMs, lockMs, maxLockMs). `old` locks the keys' rows in order (FOR UPDATE gives each row's latest version);
 * a lock still running on one of them (`until`, and each such key's in `locks`) counts nothing. Otherwise every key counts one failure:
 * throttle.ts afterFailure written in SQL (a row with no failures or past its window starts a new one; at the
 * limit the lock doubles per failure past it, up to the cap), computed in the upsert from the row it meets, so two
 * first attempts at once both count. Answers `until` or each key's state after, with the one before (`old`).
 */
export const RESERVE_SQL = `WITH k AS (
    SELECT * FROM unnest($1::text[], $3::int[], $4::bigint[], $5::bigint[], $6::bigint[]) AS k(key, max_failures, window_ms, lock_ms, max_lock_ms)),
  old AS (SELECT key, failures, window_started_at, locked_until FROM login_throttle WHERE key = ANY($1::text[]) ORDER BY key FOR UPDATE),
  blocked AS (SELECT max(locked_until) AS until, json_object_agg(key, locked_until) AS locks FROM old WHERE locked_until > $2::timestamptz),
  counted AS (
    INSERT INTO login_throttle AS t (key, failures, window_started_at, locked_until)
    SELECT key, 1, $2::timestamptz, CASE WHEN max_failures <= 1 THEN $2::timestamptz + least(max_lock_ms, lock_ms) * interval '1 millisecond' END
      FROM k WHERE (SELECT until FROM blocked) IS NULL ORDER BY key
    ON CONFLICT (key) DO UPDATE SET (failures, window_started_at, locked_until) = (
      SELECT n.failures, n.window_started_at,
             CASE WHEN n.failures < k.max_failures THEN n.locked_until
                  ELSE $2::timestamptz + least(k.max_lock_ms, k.lock_ms << least(n.failures - k.max_failures, 30)) * interval '1 millisecond' END
        FROM k, LATERAL (SELECT t.failures = 0 OR $2::timestamptz - t.window_started_at >= k.window_ms * interval '1 millisecond' AS fresh) f,
             LATERAL (SELECT CASE WHEN f.fresh THEN 1 ELSE t.failures + 1 END AS failures,
                             CASE WHEN f.fresh THEN $2::timestamptz ELSE t.window_started_at END AS window_started_at,
                             CASE WHEN f.fresh THEN NULL ELSE t.locked_until END AS locked_until) n
       WHERE k.key = t.key)
    RETURNING t.key, t.failures, t.window_started_at, t.locked_until)
  SELECT (SELECT until FROM blocked) AS until, (SELECT locks FROM blocked) AS locks,
         (SELECT json_agg(json_build_object('key', c.key, 'failures', c.failures, 'windowStartedAt', c.window_started_at, 'lockedUntil', c.locked_until,
                                            'beforeFailures', o.failures, 'beforeWindow', o.window_started_at, 'beforeLock', o.locked_until))
            FROM counted c LEFT JOIN old o ON o.key = c.key) AS counted`;
