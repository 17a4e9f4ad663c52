/**
 * The ledger's writes (ARCHITECTURE.md, "Money and the ledger"): `post` applies one journal entry whose postings sum
 * to zero per currency through the database function `ledger_post` (migration 0003), once per idempotency key;
 * `transfer`, `hold`, `release` and `settle` are its common shapes. Only `domain/orders/` imports this file (the
 * dependency-cruiser rule `ledger-writes-only-from-orders`): every entry is a step of a flow there, under a key
 * built in orders/entry-keys.ts.
 */
import { negateUnits, sumUnits, type Units } from '../../lib/money.ts';
import { LedgerError, type EntryInput, type PostedEntry, type Queryable } from './ledger.ts';

/** Applies one entry exactly once per key: a replay with the same postings returns the first entry. */
export async function post(db: Queryable, entry: EntryInput): Promise<PostedEntry> {
  if (entry.postings.length < 2) throw new LedgerError('UNBALANCED', 'an entry needs at least two postings');
  const sums = new Map<string, bigint>();
  for (const p of entry.postings) {
    if (p.amount === 0n) throw new LedgerError('UNBALANCED', 'a posting of zero moves nothing');
    sums.set(p.currency, (sums.get(p.currency) ?? 0n) + p.amount);
  }
  for (const [currency, sum] of sums) {
    if (sum !== 0n) throw new LedgerError('UNBALANCED', `entry ${entry.key} does not sum to zero in ${currency}`);
  }
  let row: { entry_id: string; replayed: boolean } | undefined;
  try {
    const result = await db.query<{ entry_id: string; replayed: boolean }>({
      name: 'ledger_post',
      text: 'SELECT entry_id, replayed FROM ledger_post($1, $2, $3, $4::uuid[], $5::text[], $6::text[], $7::numeric[])',
      values: [
        entry.key,
        entry.kind,
        entry.reference ?? null,
        entry.postings.map((p) => p.account),
        entry.postings.map((p) => p.currency),
        entry.postings.map((p) => p.bucket),
        entry.postings.map((p) => p.amount.toString()),
      ],
    });
    row = result.rows[0];
  } catch (error) {
    throw translate(error);
  }
  if (!row) throw new Error('ledger_post returned nothing');
  const posted = { entryId: Number(row.entry_id), replayed: row.replayed };
  if (posted.replayed) await assertSamePostings(db, posted.entryId, entry);
  return posted;
}

type MoveBase = { key: string; kind: string; currency: string; amount: Units; reference?: string };
type Side = { account: string; bucket: 'AVAILABLE' | 'ON_HOLD' };

/** The common shape of transfer, hold and release: `amount` leaves one account's bucket for another's. */
async function twoLegs(db: Queryable, move: MoveBase, from: Side, to: Side): Promise<PostedEntry> {
  return post(db, {
    key: move.key,
    kind: move.kind,
    reference: move.reference,
    postings: [
      { ...from, currency: move.currency, amount: negateUnits(positive(move.amount)) },
      { ...to, currency: move.currency, amount: move.amount },
    ],
  });
}

/** Moves available money from one account to another. */
export async function transfer(db: Queryable, move: MoveBase & { from: string; to: string }): Promise<PostedEntry> {
  return twoLegs(db, move, { account: move.from, bucket: 'AVAILABLE' }, { account: move.to, bucket: 'AVAILABLE' });
}

/** Sets money aside on the same account (a withdrawal or swap waiting to finish): available → on hold. */
export async function hold(db: Queryable, move: MoveBase & { account: string }): Promise<PostedEntry> {
  return twoLegs(db, move, { account: move.account, bucket: 'AVAILABLE' }, { account: move.account, bucket: 'ON_HOLD' });
}

/** Gives held money back (the operation failed or was cancelled): on hold → available. */
export async function release(db: Queryable, move: MoveBase & { account: string }): Promise<PostedEntry> {
  return twoLegs(db, move, { account: move.account, bucket: 'ON_HOLD' }, { account: move.account, bucket: 'AVAILABLE' });
}

/** Pays held money out to one or more accounts (the world, fee income...); `amount` is their total. */
export async function settle(
  db: Queryable,
  move: Omit<MoveBase, 'amount'> & { account: string; to: readonly { account: string; amount: Units }[] },
): Promise<PostedEntry> {
  const total = sumUnits(move.to.map((leg) => positive(leg.amount)));
  return post(db, {
    key: move.key,
    kind: move.kind,
    reference: move.reference,
    postings: [
      { account: move.account, currency: move.currency, bucket: 'ON_HOLD', amount: negateUnits(total) },
      ...move.to.map((leg) => ({ account: leg.account, currency: move.currency, bucket: 'AVAILABLE' as const, amount: leg.amount })),
    ],
  });
}

function positive(amount: Units): Units {
  if (amount <= 0n) throw new LedgerError('UNBALANCED', 'an amount to move must be above zero');
  return amount;
}

async function assertSamePostings(db: Queryable, entryId: number, entry: EntryInput): Promise<void> {
  const stored = await db.query<{ ledger_account_id: string; currency: string; bucket: string; amount: string }>(
    'SELECT ledger_account_id, currency, bucket, amount FROM ledger_postings WHERE entry_id = $1',
    [entryId],
  );
  const canon = (rows: { account: string; currency: string; bucket: string; amount: string }[]) =>
    rows
      .map((r) => `${r.account}|${r.currency}|${r.bucket}|${r.amount}`)
      .sort()
      .join('\n');
  const before = canon(stored.rows.map((r) => ({ account: r.ledger_account_id, currency: r.currency, bucket: r.bucket, amount: r.amount })));
  const now = canon(entry.postings.map((p) => ({ account: p.account, currency: p.currency, bucket: p.bucket, amount: p.amount.toString() })));
  if (before !== now) throw new LedgerError('KEY_REUSED', `idempotency key ${entry.key} was used for a different movement`);
}

function translate(error: unknown): unknown {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'WL002' || code === '23514') return new LedgerError('INSUFFICIENT_FUNDS', 'Not enough funds', { cause: error });
  if (code === 'WL001') return new LedgerError('UNBALANCED', message, { cause: error });
  if (code === 'WL003' || code === '23503') return new LedgerError('UNKNOWN_ACCOUNT', message, { cause: error });
  return error;
}
