import type { AuditCheck } from './audit-check.ts';
import { sweepEntryKeySql } from './orders/entry-keys.ts';

/** ledger:audit's checks of sweeps: the network fees booked are exactly those their sweeps and top-ups paid. */
export const SWEEP_CHECKS: AuditCheck[] = [
  {
    name: "each mined sweep's network fee is booked once, from the gas float (or NETWORK_FEES before it) to WORLD, and no open sweep has one",
    sql: `SELECT s.id AS sweep, s.state, s.fee::text, e.id AS fee_entry
            FROM sweeps s LEFT JOIN ledger_entries e ON e.idempotency_key = ${sweepEntryKeySql.fee('s.id::text', 's.reopened')}
           WHERE (e.id IS NOT NULL) <> (s.state IN ('CONFIRMED', 'FAILED') AND s.fee > 0)
              OR (e.id IS NOT NULL AND NOT EXISTS (
                    SELECT 1 FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.ledger_account_id
                     WHERE p.entry_id = e.id AND a.code IN ('GAS_FLOAT:' || s.network, 'NETWORK_FEES:' || s.network) AND p.amount = -s.fee))`,
  },
  {
    name: "each sweep's top-up fees are booked from the gas float (or NETWORK_FEES before it), their sum the sweep's",
    // The top-up fees of every sweep in one pass over the ledger, joined to their sweeps by the id in their keys: a
    // join on a LIKE per sweep read the whole ledger once for each (no index serves a LIKE under the collation).
    sql: `SELECT s.id AS sweep, s.top_up_fees::text AS recorded, coalesce(sum(b.booked), 0)::text AS booked
            FROM sweeps s
            LEFT JOIN (SELECT ${sweepEntryKeySql.topUpFeeSweep('e.idempotency_key')} AS sweep, p.ledger_account_id AS account, sum(-p.amount) AS booked
                         FROM ledger_entries e JOIN ledger_postings p ON p.entry_id = e.id
                        WHERE ${sweepEntryKeySql.topUpFees('e.idempotency_key')}
                        GROUP BY 1, 2) b
              ON b.sweep = s.id::text AND b.account IN (SELECT id FROM ledger_accounts WHERE code IN ('GAS_FLOAT:' || s.network, 'NETWORK_FEES:' || s.network))
           GROUP BY s.id, s.top_up_fees HAVING coalesce(sum(b.booked), 0) <> s.top_up_fees`,
  },
  {
    name: "each earlier fee of a sweep reopened after a reorganisation is taken back by the entry of its reopening",
    sql: `SELECT s.id AS sweep, k.round
            FROM sweeps s CROSS JOIN LATERAL generate_series(0, s.reopened - 1) AS k(round)
           WHERE EXISTS (SELECT 1 FROM ledger_entries e WHERE e.idempotency_key = ${sweepEntryKeySql.fee('s.id::text', 'k.round')})
             <> EXISTS (SELECT 1 FROM ledger_entries r WHERE r.idempotency_key = ${sweepEntryKeySql.feeReopen('s.id::text', '(k.round + 1)')})`,
  },
];
