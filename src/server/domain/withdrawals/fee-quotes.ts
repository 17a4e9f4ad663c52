/**
 * Withdrawal fee quotes: the fee the send form shows, fixed for 300 s (SPEC §9 review validity) for one account,
 * currency and outside address. A withdrawal naming a quote that is live, unused and made for its account, currency
 * and address pays the quote's fee, and uses it up; any other quote (expired, used, purged, someone else's, for
 * another currency or address) is ignored and the withdrawal pays the current fee, which is never below what the
 * network asks now. Expiry is judged by the database's clock, so every process agrees.
 */
import type { FeeEstimate } from '../../adapters/chains/port.ts';
import type { Units } from '../../../lib/money.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import type { Queryable } from '../ledger.ts';

/** SPEC §9: a review is valid 300 s (as swap and buy quotes are). */
export const FEE_QUOTE_TTL_S = 300;

const QUOTE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type SavedFeeQuote = { id: string; expiresAt: Date };

/** Keeps a quote of `fee` for a withdrawal of `currency` from `account` to `toAddress` (address-book spelling). */
export async function saveFeeQuote(db: Queryable, quote: { account: string; currency: string; toAddress: string; fee: Units; estimate: FeeEstimate; marginBps: number }): Promise<SavedFeeQuote> {
  const saved = await db.query<SavedFeeQuote>(
    `INSERT INTO withdrawal_fee_quotes (wallet_account_id, currency, to_address, fee, estimate, estimate_currency, margin_bps, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8)) RETURNING id, expires_at AS "expiresAt"`,
    [quote.account, quote.currency, quote.toAddress, quote.fee.toString(), quote.estimate.amount.toString(), quote.estimate.currency, quote.marginBps, FEE_QUOTE_TTL_S],
  );
  const row = saved.rows[0];
  if (!row) throw new Error('the fee quote was not saved');
  return row;
}

/**
 * The quote a withdrawal may pay, locked for the caller's transaction, or undefined when it does not apply. Two
 * withdrawals naming one quote queue on its row: the second finds it used and pays the current fee.
 */
export async function takeFeeQuote(db: Queryable, wanted: { id: string; account: string; currency: string; toAddress: string }): Promise<{ id: string; fee: Units } | undefined> {
  // Not an id of ours at all: no quote (the database would refuse to compare it).
  if (!QUOTE_ID.test(wanted.id)) return undefined;
  const found = await db.query<{ id: string; fee: string }>(
    `SELECT id, fee FROM withdrawal_fee_quotes
      WHERE id = $1 AND wallet_account_id = $2 AND currency = $3 AND to_address = $4 AND withdrawal_id IS NULL AND expires_at > now()
      FOR UPDATE`,
    [wanted.id, wanted.account, wanted.currency, wanted.toAddress],
  );
  const row = found.rows[0];
  return row ? { id: row.id, fee: unitsFromRow(row.fee, 'fee') } : undefined;
}

/** Marks a quote taken by `takeFeeQuote` as used by the withdrawal, in the same transaction. */
export async function useFeeQuote(db: Queryable, quoteId: string, withdrawalId: string): Promise<void> {
  await db.query('UPDATE withdrawal_fee_quotes SET withdrawal_id = $2 WHERE id = $1', [quoteId, withdrawalId]);
}
