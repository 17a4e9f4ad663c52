/**
 * Proves the ledger's invariants over the whole database (npm run ledger:audit). Each check is a query that
 * returns the rows that break it; an empty result is a pass. Features add their own checks to LEDGER_CHECKS
 * (a withdrawal's state against its postings, a swap's...).
 */
import type pg from 'pg';
import type { AuditCheck } from './audit-check.ts';
import { WITHDRAWAL_CHECKS } from './withdrawal-audit.ts';
import { SWEEP_CHECKS } from './sweep-audit.ts';
import { CUSTODY_CHECKS } from './custody-audit.ts';
import { ADJUSTMENT_CHECKS } from './operator/adjustments.ts';
import { depositEntryKeySql, depositHoldKeySql, depositReversalKeySql, orderEntryKeySql } from './orders/entry-keys.ts';

export const LEDGER_CHECKS: AuditCheck[] = [
  {
    name: 'every entry sums to zero per currency',
    sql: `SELECT entry_id, currency, sum(amount)::text AS sum FROM ledger_postings GROUP BY entry_id, currency HAVING sum(amount) <> 0`,
    sampled: `SELECT p.entry_id, p.currency, sum(p.amount)::text AS sum FROM ledger_postings p
               WHERE p.entry_id IN (SELECT id FROM ledger_entries TABLESAMPLE SYSTEM (:percent))
               GROUP BY p.entry_id, p.currency HAVING sum(p.amount) <> 0`,
  },
  {
    name: 'every entry has at least two postings',
    sql: `SELECT e.id AS entry_id, e.idempotency_key, count(p.id)::int AS postings
            FROM ledger_entries e LEFT JOIN ledger_postings p ON p.entry_id = e.id
           GROUP BY e.id HAVING count(p.id) < 2`,
    sampled: `SELECT e.id AS entry_id, e.idempotency_key, count(p.id)::int AS postings
                FROM ledger_entries e TABLESAMPLE SYSTEM (:percent) LEFT JOIN ledger_postings p ON p.entry_id = e.id
               GROUP BY e.id HAVING count(p.id) < 2`,
  },
  {
    name: 'every posting has its entry and its balance row',
    sql: `SELECT p.id AS posting, p.entry_id, p.ledger_account_id AS account, p.currency
            FROM ledger_postings p
           WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.id = p.entry_id)
              OR NOT EXISTS (SELECT 1 FROM ledger_balances b WHERE b.ledger_account_id = p.ledger_account_id AND b.currency = p.currency)`,
    sampled: `SELECT p.id AS posting, p.entry_id, p.ledger_account_id AS account, p.currency
                FROM ledger_postings p TABLESAMPLE SYSTEM (:percent)
               WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.id = p.entry_id)
                  OR NOT EXISTS (SELECT 1 FROM ledger_balances b WHERE b.ledger_account_id = p.ledger_account_id AND b.currency = p.currency)`,
  },
  {
    name: 'every balance row equals the sum of its postings',
    sql: `WITH sums AS (
            SELECT ledger_account_id, currency,
                   coalesce(sum(amount) FILTER (WHERE bucket = 'AVAILABLE'), 0) AS available,
                   coalesce(sum(amount) FILTER (WHERE bucket = 'ON_HOLD'), 0) AS on_hold
              FROM ledger_postings GROUP BY ledger_account_id, currency)
          SELECT coalesce(b.ledger_account_id, s.ledger_account_id) AS account, coalesce(b.currency, s.currency) AS currency,
                 b.available::text AS row_available, s.available::text AS posted_available,
                 b.on_hold::text AS row_on_hold, s.on_hold::text AS posted_on_hold
            FROM ledger_balances b FULL OUTER JOIN sums s
              ON s.ledger_account_id = b.ledger_account_id AND s.currency = b.currency
           WHERE b.available IS DISTINCT FROM coalesce(s.available, 0) OR b.on_hold IS DISTINCT FROM coalesce(s.on_hold, 0)`,
    // Users' rows only, each summed through its own postings' index: a system account (the world, fee income) has
    // postings from every user, and is held to the whole ledger's sum per currency (below) instead. A posting
    // without its balance row is the check above's.
    sampled: `SELECT b.ledger_account_id AS account, b.currency, b.available::text AS row_available, s.available::text AS posted_available,
                     b.on_hold::text AS row_on_hold, s.on_hold::text AS posted_on_hold
                FROM ledger_balances b TABLESAMPLE SYSTEM (:percent)
                JOIN ledger_accounts a ON a.id = b.ledger_account_id AND a.kind = 'USER'
                CROSS JOIN LATERAL (SELECT coalesce(sum(amount) FILTER (WHERE bucket = 'AVAILABLE'), 0) AS available,
                                           coalesce(sum(amount) FILTER (WHERE bucket = 'ON_HOLD'), 0) AS on_hold
                                      FROM ledger_postings p WHERE p.ledger_account_id = b.ledger_account_id AND p.currency = b.currency) s
               WHERE b.available <> s.available OR b.on_hold <> s.on_hold`,
  },
  {
    name: 'no balance that may not go negative is negative',
    sql: `SELECT b.ledger_account_id AS account, a.code, b.currency, b.available::text, b.on_hold::text
            FROM ledger_balances b JOIN ledger_accounts a ON a.id = b.ledger_account_id
           WHERE NOT a.allow_negative AND (b.available < 0 OR b.on_hold < 0)`,
  },
  {
    name: 'each currency sums to zero across the whole ledger',
    sql: `SELECT currency, (sum(available) + sum(on_hold))::text AS total FROM ledger_balances GROUP BY currency
          HAVING sum(available) + sum(on_hold) <> 0`,
  },
  {
    name: 'each credited deposit has exactly its entry: world to the user, its amount',
    sql: `SELECT d.id AS deposit, d.state, d.amount::text, e.id AS entry_id
            FROM chain_deposits d
            LEFT JOIN ledger_entries e ON e.idempotency_key = ${depositEntryKeySql('d')}
           WHERE (d.state IN ('CREDITED', 'HELD', 'REVERSAL_DUE', 'REVERSED')) <> (e.id IS NOT NULL)
              OR (e.id IS NOT NULL AND NOT EXISTS (
                    SELECT 1 FROM ledger_postings p
                     WHERE p.entry_id = e.id AND p.ledger_account_id = d.wallet_account_id
                       AND p.currency = d.currency AND p.bucket = 'AVAILABLE' AND p.amount = d.amount))`,
  },
  {
    name: 'each reversed deposit has exactly its reversal entry: the user back to the world, its amount',
    sql: `SELECT d.id AS deposit, d.state, d.amount::text, r.id AS entry_id
            FROM chain_deposits d
            LEFT JOIN ledger_entries r ON r.idempotency_key = ${depositReversalKeySql('d')}
           WHERE (d.state = 'REVERSED') <> (r.id IS NOT NULL)
              OR (r.id IS NOT NULL AND NOT EXISTS (
                    SELECT 1 FROM ledger_postings p
                     WHERE p.entry_id = r.id AND p.ledger_account_id = d.wallet_account_id
                       AND p.currency = d.currency AND p.bucket = 'AVAILABLE' AND p.amount = -d.amount))`,
  },
  {
    name: 'each earlier credit of a deposit mined again after its reversal has its entry and its reversal',
    sql: `SELECT d.id AS deposit, k.revival
            FROM chain_deposits d CROSS JOIN LATERAL generate_series(0, d.revivals - 1) AS k(revival)
           WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.idempotency_key = ${depositEntryKeySql('d', 'k.revival')})
              OR NOT EXISTS (SELECT 1 FROM ledger_entries r WHERE r.idempotency_key = ${depositReversalKeySql('d', 'k.revival')})`,
  },
  {
    name: "each hold of a credited deposit that lost its confirmations has its entry, and its release unless it is still held",
    sql: `SELECT d.id AS deposit, d.state, k.n AS hold
            FROM chain_deposits d CROSS JOIN LATERAL generate_series(1, d.holds) AS k(n)
           WHERE NOT EXISTS (SELECT 1 FROM ledger_entries h JOIN ledger_postings p ON p.entry_id = h.id
                              WHERE h.idempotency_key = ${depositHoldKeySql('hold', 'd', 'k.n')} AND p.ledger_account_id = d.wallet_account_id
                                AND p.currency = d.currency AND p.bucket = 'ON_HOLD' AND p.amount = d.amount)
              OR (d.state = 'HELD' AND k.n = d.holds) = EXISTS (SELECT 1 FROM ledger_entries r WHERE r.idempotency_key = ${depositHoldKeySql('release', 'd', 'k.n')})
          UNION ALL
          SELECT d.id, d.state, 0 FROM chain_deposits d WHERE d.state = 'HELD' AND d.holds = 0`,
  },
  {
    name: "each deposit's history item has the deposit's state",
    sql: `SELECT d.id AS deposit, d.state, t.state AS shown
            FROM chain_deposits d LEFT JOIN wallet_transactions t ON t.id = d.wallet_transaction_id
           WHERE t.id IS NULL
              OR (d.state IN ('PENDING', 'HELD') AND t.state <> 'IN_PROGRESS')
              OR (d.state IN ('CREDITED', 'REVERSAL_DUE') AND t.state <> 'COMPLETED')
              OR (d.state IN ('FAILED', 'BELOW_MINIMUM', 'REVERSED') AND t.state <> 'FAILED')`,
  },
  {
    name: "each sell order's entries match its state: held, then paid out or returned, never both",
    sql: `SELECT o.id AS sell_order, o.state, h.id AS hold_entry, s.id AS settle_entry, r.id AS release_entry
            FROM sell_orders o
            LEFT JOIN ledger_entries h ON h.idempotency_key = ${orderEntryKeySql('sell', 'hold', 'o.id')}
            LEFT JOIN ledger_entries s ON s.idempotency_key = ${orderEntryKeySql('sell', 'settle', 'o.id')}
            LEFT JOIN ledger_entries r ON r.idempotency_key = ${orderEntryKeySql('sell', 'release', 'o.id')}
           WHERE h.id IS NULL
              OR NOT EXISTS (SELECT 1 FROM ledger_postings p WHERE p.entry_id = h.id AND p.ledger_account_id = o.wallet_account_id
                                AND p.currency = o.currency AND p.bucket = 'ON_HOLD' AND p.amount = o.amount)
              OR (o.state = 'PROCESSING' AND (s.id IS NOT NULL OR r.id IS NOT NULL))
              OR (o.state = 'COMPLETED' AND (s.id IS NULL OR r.id IS NOT NULL))
              OR (o.state = 'FAILED' AND (r.id IS NULL OR s.id IS NOT NULL))`,
  },
  {
    name: "each sell order's history item has the order's state",
    sql: `SELECT o.id AS sell_order, o.state, t.state AS shown
            FROM sell_orders o LEFT JOIN wallet_transactions t ON t.id = o.wallet_transaction_id
           WHERE t.id IS NULL OR t.state <> CASE o.state WHEN 'PROCESSING' THEN 'IN_PROGRESS' ELSE o.state END`,
  },
  {
    // Held at confirmation (orders from before were held at creation): a hold is never left behind, released or exchanged.
    name: "each swap order's entries match its state: held and exchanged once, or released if held, never both",
    sql: `SELECT o.id AS swap_order, o.state, h.id AS hold_entry, c.id AS confirm_entry, r.id AS release_entry
            FROM swap_orders o
            LEFT JOIN ledger_entries h ON h.idempotency_key = ${orderEntryKeySql('swap', 'hold', 'o.id')}
            LEFT JOIN ledger_entries c ON c.idempotency_key = ${orderEntryKeySql('swap', 'confirm', 'o.id')}
            LEFT JOIN ledger_entries r ON r.idempotency_key = ${orderEntryKeySql('swap', 'release', 'o.id')}
           WHERE (h.id IS NULL AND (c.id IS NOT NULL OR r.id IS NOT NULL OR o.state = 'COMPLETED'))
              OR (h.id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ledger_postings p WHERE p.entry_id = h.id AND p.ledger_account_id = o.wallet_account_id
                                AND p.currency = o.source_currency AND p.bucket = 'ON_HOLD' AND p.amount = o.source_amount))
              OR (o.state = 'PENDING' AND (c.id IS NOT NULL OR r.id IS NOT NULL))
              OR (o.state = 'COMPLETED' AND (c.id IS NULL OR r.id IS NOT NULL
                    OR NOT EXISTS (SELECT 1 FROM ledger_postings p WHERE p.entry_id = c.id AND p.ledger_account_id = o.wallet_account_id
                                      AND p.currency = o.destination_currency AND p.bucket = 'AVAILABLE' AND p.amount = o.destination_amount)))
              OR (o.state IN ('EXPIRED', 'CANCELLED') AND ((h.id IS NOT NULL AND r.id IS NULL) OR c.id IS NOT NULL))`,
  },
  ...WITHDRAWAL_CHECKS,
  ...SWEEP_CHECKS,
  ...CUSTODY_CHECKS,
  ...ADJUSTMENT_CHECKS,
  {
    name: "each buy order is credited once when paid, from card settlement, its fixed amount, and never otherwise (an on-ramp's never)",
    sql: `SELECT o.id AS buy_order, o.state, o.delivery, e.id AS credit_entry
            FROM buy_orders o LEFT JOIN ledger_entries e ON e.idempotency_key = ${orderEntryKeySql('buy', 'credit', 'o.id')}
           WHERE (o.state = 'COMPLETED' AND o.delivery = 'LEDGER') <> (e.id IS NOT NULL)
              OR (e.id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ledger_postings p WHERE p.entry_id = e.id AND p.ledger_account_id = o.wallet_account_id
                                                    AND p.currency = o.currency AND p.bucket = 'AVAILABLE' AND p.amount = o.amount))`,
  },
  {
    name: "each confirmed buy order's history item has the order's state (one whose coins came on chain shares its deposit's)",
    sql: `SELECT o.id AS buy_order, o.state, t.state AS shown
            FROM buy_orders o LEFT JOIN wallet_transactions t ON t.id = o.wallet_transaction_id
           WHERE o.state IN ('PENDING', 'COMPLETED', 'FAILED') AND o.chain_deposit_id IS NULL
             AND (t.id IS NULL OR t.state <> CASE o.state WHEN 'PENDING' THEN 'IN_PROGRESS' ELSE o.state END)`,
  },
  {
    name: "each on-ramp purchase is completed by exactly its deposit's credit: its amount, its history item, one item for both",
    sql: `SELECT o.id AS buy_order, o.state, d.id AS deposit, d.state AS deposit_state, o.amount::text, d.amount::text AS deposit_amount
            FROM buy_orders o LEFT JOIN chain_deposits d ON d.id = o.chain_deposit_id
           WHERE o.chain_deposit_id IS NOT NULL
             AND (d.id IS NULL OR o.delivery <> 'CHAIN' OR d.wallet_account_id <> o.wallet_account_id OR d.currency <> o.currency OR d.amount <> o.amount
                  OR d.wallet_transaction_id IS DISTINCT FROM o.wallet_transaction_id
                  OR (o.state = 'COMPLETED') <> (d.state IN ('CREDITED', 'HELD', 'REVERSAL_DUE', 'REVERSED'))
                  OR o.state NOT IN ('PENDING', 'COMPLETED'))
          UNION ALL
          SELECT o.id, o.state, NULL, NULL, o.amount::text, NULL FROM buy_orders o WHERE o.delivery = 'CHAIN' AND o.state = 'COMPLETED' AND o.chain_deposit_id IS NULL`,
  },
];

export type AuditResult = { name: string; ok: boolean; problems: Record<string, unknown>[] };

/**
 * Runs every check in one repeatable-read snapshot, so money moving meanwhile cannot fake a failure. `sample`: the
 * checks that read every posting read that percentage of them instead (a random sample of pages, new each run);
 * the others stay whole.
 */
export async function auditLedger(
  db: pg.ClientBase,
  checks: readonly AuditCheck[] = LEDGER_CHECKS,
  options: { sample?: number } = {},
): Promise<AuditResult[]> {
  const { sample } = options;
  if (sample !== undefined && !(sample > 0 && sample <= 100)) throw new RangeError(`the sample is a percentage above 0 and at most 100, not ${sample}`);
  await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    const results: AuditResult[] = [];
    for (const check of checks) {
      const sql = sample !== undefined && check.sampled ? check.sampled.replaceAll(':percent', String(sample)) : check.sql;
      const { rows } = await db.query<Record<string, unknown>>(`${sql} LIMIT 20`);
      results.push({ name: check.name, ok: rows.length === 0, problems: rows });
    }
    return results;
  } finally {
    await db.query('ROLLBACK');
  }
}
