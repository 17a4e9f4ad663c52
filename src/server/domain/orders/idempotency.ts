/**
 * The one idempotency rule of every call that moves money or creates an order (ARCHITECTURE.md "The gateway's
 * contract"): a key plus a hash of the normalised input (`requestHash`, one spelling for every flow). The same key and
 * input give the first result; the same key with another input is IDEMPOTENCY_KEY_REUSED (422). A request arriving
 * while the first with its key still runs waits for it, up to KEY_WAIT_MS, and then answers as it did (a double tap or
 * a flaky network's resend gets the one answer); one still running after that is IDEMPOTENCY_KEY_IN_USE (409). The
 * key is taken with a transaction-scoped advisory lock, so the first request's transaction owns it until it commits,
 * and a request after that commit finds its row.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { createKeyedTurns } from '../../db/keyed-turns.ts';
import { inTransaction } from '../../db/transaction.ts';
import { DomainError } from '../errors.ts';
import type { Queryable } from '../ledger.ts';

export type IdempotencyCode = 'IDEMPOTENCY_KEY_REUSED' | 'IDEMPOTENCY_KEY_IN_USE';

export class IdempotencyError extends DomainError<IdempotencyCode> {}

export type CanonicalValue = string | number | boolean | bigint | null | readonly CanonicalValue[] | { readonly [key: string]: CanonicalValue | undefined };

/** JSON with keys sorted at every level, bigints as decimal strings and undefined fields left out: one spelling per input. */
export function canonicalJson(value: CanonicalValue | undefined): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value === 'bigint') return JSON.stringify(value.toString());
  if (Array.isArray(value)) return `[${value.map((item: CanonicalValue) => canonicalJson(item)).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as { readonly [key: string]: CanonicalValue | undefined })
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** sha256 (hex) of the canonical JSON of the fields that define a request, normalised by the caller (units, canonical address). */
export function requestHash(fields: { readonly [key: string]: CanonicalValue | undefined }): string {
  return createHash('sha256').update(canonicalJson(fields)).digest('hex');
}

/** How long a request waits for the first with its key to finish before it is refused IDEMPOTENCY_KEY_IN_USE. */
export const KEY_WAIT_MS = 5_000;

/** One request under a key: `scope` names the flow (keys of different flows never meet), `hash` is its requestHash. */
export type IdempotentRequest = { scope: string; account: string; key: string; hash: string; waitMs?: number };

/**
 * Takes the request's key for the rest of the transaction: at once when it is free (one round trip), else after the
 * first request with it ends, waiting at most `waitMs` (the transaction's lock_timeout for that one wait, then put
 * back), or refuses it as still running.
 */
export async function claimIdempotencyKey(db: Queryable, request: IdempotentRequest): Promise<void> {
  const lock = `${request.scope}:${request.account}:${request.key}`;
  const taken = await db.query<{ locked: boolean }>({ name: 'idempotency_claim', text: 'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked', values: [lock] });
  if (taken.rows[0]?.locked) return;
  const before = await db.query<{ previous: string }>({ name: 'idempotency_wait_limit', text: "SELECT current_setting('lock_timeout') AS previous, set_config('lock_timeout', $1, true)", values: [`${request.waitMs ?? KEY_WAIT_MS}ms`] });
  try {
    await db.query({ name: 'idempotency_wait', text: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', values: [lock] });
  } catch (error) {
    // 55P03 lock_not_available: the first request is still running after the wait.
    if ((error as { code?: string }).code === '55P03') throw new IdempotencyError('IDEMPOTENCY_KEY_IN_USE', 'A request with this idempotency key is still running; try again', { cause: error });
    throw error;
  }
  await db.query({ name: 'idempotency_wait_reset', text: "SELECT set_config('lock_timeout', $1, true)", values: [before.rows[0]?.previous ?? '0'] });
}

/**
 * Refuses a stored request that is not this one. A row from before request hashes were stored (NULL) is compared
 * field by field by `sameAsLegacy`; without it such a row never matches.
 */
export function assertSameRequest(storedHash: string | null, hash: string, sameAsLegacy?: () => boolean): void {
  const same = storedHash === null ? (sameAsLegacy?.() ?? false) : storedHash === hash;
  if (!same) throw new IdempotencyError('IDEMPOTENCY_KEY_REUSED', 'This idempotency key was used for another request');
}

export type OnceSteps<Found extends { requestHash: string | null }, Result> = {
  /** The row an earlier request with this key left, read inside the claimed transaction. */
  find: (db: pg.PoolClient) => Promise<Found | undefined>;
  /** For rows stored before request hashes: whether it is the same request, compared the old way. */
  sameAsLegacy?: (found: Found) => boolean;
  /** The first request's answer, from its row. */
  replay: (found: Found, db: pg.PoolClient) => Result | Promise<Result>;
  /** The first request's work; it stores `request.hash` with its row. Throwing rolls everything back. */
  create: (db: pg.PoolClient) => Promise<Result>;
};

/**
 * One account's orders in this process take turns before their transaction (db/keyed-turns.ts): they would wait for
 * each other on the account's rows anyway, and waiting here holds no pooled connection, so a burst on one account
 * does not starve other users' requests. A turn not reached within the key wait runs on as it would without turns
 * (the claim below and the rows' locks still decide).
 */
const accountTurns = createKeyedTurns();

/** The whole rule in one transaction: claim the key, replay or refuse an earlier request, else do the work once. */
export async function oncePerKey<Found extends { requestHash: string | null }, Result>(pool: pg.Pool, request: IdempotentRequest, steps: OnceSteps<Found, Result>): Promise<Result> {
  return accountTurns(
    [request.account],
    () =>
      inTransaction(pool, async (db) => {
        await claimIdempotencyKey(db, request);
        const found = await steps.find(db);
        if (!found) return steps.create(db);
        assertSameRequest(found.requestHash, request.hash, steps.sameAsLegacy && (() => steps.sameAsLegacy?.(found) ?? false));
        return steps.replay(found, db);
      }),
    request.waitMs ?? KEY_WAIT_MS,
  );
}
