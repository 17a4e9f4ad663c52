/**
 * The signer's daily cap (issue 31 review): the approval seal's key comes from SIGNER_TOKEN, which the gateway holds,
 * so a seal stops whoever writes only the database but not a compromised gateway, which can seal anything. Whatever
 * the seals say, the signer signs out at most SIGNER_DAILY_MAX of a currency in any 24 hours; a withdrawal or batch
 * that would take the total over it is refused (and logged), and waits PENDING with its hold for an operator.
 *
 * What was signed is recorded by the signer (signer_signed_payments) before it signs, once per payment reference, so
 * an order asked again (same bytes) is not counted twice, and one whose signing failed after the record still counts.
 * The signer also keeps what it signed in its own memory for the window: rows deleted from the database by whoever
 * can write it do not lift the cap of a running signer.
 */
import type pg from 'pg';
import { unitsFromRow } from '../db/amounts.ts';
import { formatUnits } from '../../lib/amount.ts';
import { sumUnits, type Units } from '../../lib/money.ts';
import { findCoin, type Network } from '../../lib/currencies.ts';
import { inTransaction } from '../db/transaction.ts';
import { SigningRefusal } from './signing.ts';

export const DAILY_CAP_WINDOW_MS = 24 * 60 * 60 * 1000;

/** One payment the signer is about to sign out: `reference` a withdrawal's id, `amount` what leaves, atomic units. */
export type CappedPayment = { reference: string; network: Network; currency: string; amount: Units };

/** The rule: `adding` on top of what was signed in the window stays within `cap` (no cap: always). */
export function withinDailyCap(cap: bigint | undefined, signedInWindow: bigint, adding: bigint): boolean {
  return cap === undefined || signedInWindow + adding <= cap;
}

const show = (currency: string, units: bigint) => `${formatUnits(units, findCoin(currency)?.decimals ?? 0)} ${currency}`;

export type DailyCap = {
  /**
   * Records `payments` as signed now, or refuses (SigningRefusal OVER_DAILY_CAP) when any capped currency would pass
   * its cap; references recorded before count once. Serialised per currency across signers on one database.
   */
  reserve(payments: readonly CappedPayment[]): Promise<void>;
  /** What is capped, for the start line. */
  describe(): string;
};

export function dailyCap(pool: pg.Pool, caps: Readonly<Record<string, bigint>>, now: () => number = Date.now): DailyCap {
  // This process's own record of what it signed, by reference.
  const signed = new Map<string, { currency: string; amount: Units; at: number }>();
  const forget = () => {
    for (const [reference, entry] of signed) if (entry.at < now() - DAILY_CAP_WINDOW_MS) signed.delete(reference);
  };
  return {
    async reserve(payments) {
      const capped = payments.filter((p) => caps[p.currency] !== undefined);
      if (capped.length === 0) return;
      forget();
      await inTransaction(pool, async (client) => {
        const currencies = [...new Set(capped.map((p) => p.currency))].sort();
        for (const currency of currencies) await client.query(`SELECT pg_advisory_xact_lock(hashtext('signer-daily-cap:' || $1))`, [currency]);
        const since = new Date(now() - DAILY_CAP_WINDOW_MS);
        const rows = await client.query<{ reference: string; currency: string; amount: string }>(
          `SELECT reference, currency, amount::text FROM signer_signed_payments WHERE currency = ANY($1::text[]) AND signed_at > $2`,
          [currencies, since],
        );
        const known = await client.query<{ reference: string }>('SELECT reference FROM signer_signed_payments WHERE reference = ANY($1::text[])', [capped.map((p) => p.reference)]);
        const counted = new Set(known.rows.map((r) => r.reference));
        for (const reference of signed.keys()) counted.add(reference);
        // What the window holds: the database's rows and this process's own, each reference once.
        const window = new Map<string, { currency: string; amount: Units }>();
        for (const r of rows.rows) window.set(r.reference, { currency: r.currency, amount: unitsFromRow(r.amount, 'amount') });
        for (const [reference, entry] of signed) if (currencies.includes(entry.currency)) window.set(reference, entry);
        const fresh = capped.filter((p) => !counted.has(p.reference));
        for (const currency of currencies) {
          const inWindow = sumUnits([...window.values()].filter((e) => e.currency === currency).map((e) => e.amount));
          const adding = sumUnits(fresh.filter((p) => p.currency === currency).map((p) => p.amount));
          if (!withinDailyCap(caps[currency], inWindow, adding)) {
            throw new SigningRefusal(
              'OVER_DAILY_CAP',
              `signing ${show(currency, adding)} (${fresh.map((p) => p.reference).join(', ')}) would take what the signer signed out in 24 hours to ${show(currency, inWindow + adding)}, over SIGNER_DAILY_MAX ${show(currency, caps[currency] ?? 0n)}`,
            );
          }
        }
        if (fresh.length > 0) {
          await client.query(
            `INSERT INTO signer_signed_payments (reference, network, currency, amount, signed_at)
             SELECT unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), unnest($4::numeric[]), $5 ON CONFLICT (reference) DO NOTHING`,
            [fresh.map((p) => p.reference), fresh.map((p) => p.network), fresh.map((p) => p.currency), fresh.map((p) => p.amount.toString()), new Date(now())],
          );
        }
        for (const p of fresh) signed.set(p.reference, { currency: p.currency, amount: p.amount, at: now() });
      });
    },
    describe() {
      const entries = Object.entries(caps);
      return entries.length === 0 ? 'none (SIGNER_DAILY_MAX unset)' : entries.map(([currency, units]) => `${show(currency, units)} a day`).join(', ');
    },
  };
}
