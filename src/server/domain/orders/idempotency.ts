/**
 * The one idempotency rule of every call that moves money or creates an order (ARCHITECTURE.md "The gateway's
 * contract"): a key plus a hash of the normalised input. The same key and input give the first result; the same key
 * with another input is IDEMPOTENCY_KEY_REUSED (422); a request arriving while the first with its key still runs is
 * IDEMPOTENCY_KEY_IN_USE (409). The key is taken with a transaction-scoped advisory lock, so the first request's
 * transaction owns it until it commits, and a request after that commit finds its row.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
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

/**
 * sha256 (hex) of plain JSON with the fields in the order given: how buy and sell hashed their requests before
 * requestHash existed. Their stored request_hash values only match this spelling, so those flows keep it.
 */
export function fieldOrderHash(fields: { readonly [key: string]: string | boolean }): string {
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

/**
 * One request under a key: `scope` names the flow (keys of different flows never meet), `hash` is its requestHash.
 * `whileRunning` 'wait' queues a request behind the first with its key and answers as it did, instead of 409: for
 * flows whose clients already count on every same-key retry getting the first answer (buy, sell).
 */
export type IdempotentRequest = { scope: string; account: string; key: string; hash: string; whileRunning?: 'refuse' | 'wait' };

/** Takes the request's key for the rest of the transaction, or refuses it: another request with it is still running. */
export async function claimIdempotencyKey(db: Queryable, request: IdempotentRequest): Promise<void> {
  if (request.whileRunning === 'wait') {
    await db.query({ name: 'idempotency_wait', text: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', values: [`${request.scope}:${request.account}:${request.key}`] });
    return;
  }
  const taken = await db.query<{ locked: boolean }>({
    name: 'idempotency_claim',
    text: 'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked',
    values: [`${request.scope}:${request.account}:${request.key}`],
  });
  if (!taken.rows[0]?.locked) throw new IdempotencyError('IDEMPOTENCY_KEY_IN_USE', 'A request with this idempotency key is still running; try again');
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

/** The whole rule in one transaction: claim the key, replay or refuse an earlier request, else do the work once. */
export async function oncePerKey<Found extends { requestHash: string | null }, Result>(pool: pg.Pool, request: IdempotentRequest, steps: OnceSteps<Found, Result>): Promise<Result> {
  return inTransaction(pool, async (db) => {
    await claimIdempotencyKey(db, request);
    const found = await steps.find(db);
    if (!found) return steps.create(db);
    assertSameRequest(found.requestHash, request.hash, steps.sameAsLegacy && (() => steps.sameAsLegacy?.(found) ?? false));
    return steps.replay(found, db);
  });
}
