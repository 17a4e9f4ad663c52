import type { AuditCheck } from './audit-check.ts';

/** The suffix of a movement's current round of keys (custody-movements.ts: none for the first, `#<n>` after a reopening). */
const roundSql = (round: string) => `CASE WHEN ${round} = 0 THEN '' ELSE '#' || ${round} END`;
const ROUND = roundSql('m.reopened');

/** ledger:audit's checks of custodian movements (cold sweeps): booked exactly when completed, with their amount and fee. */
export const CUSTODY_CHECKS: AuditCheck[] = [
  {
    name: 'each cold sweep is booked once it completed and only then: its amount from cold storage to the world, its network fee',
    sql: `SELECT m.id AS movement, m.state, m.amount::text, m.network_fee::text, s.id AS sweep_entry, f.id AS fee_entry
            FROM custody_movements m
            LEFT JOIN ledger_entries s ON s.idempotency_key = 'cold-sweep:' || m.id || ${ROUND}
            LEFT JOIN ledger_entries f ON f.idempotency_key = 'cold-sweep:network-fee:' || m.id || ${ROUND}
           WHERE (m.state = 'COMPLETED') <> (s.id IS NOT NULL)
              OR (f.id IS NOT NULL AND m.state <> 'COMPLETED')
              OR (m.state = 'COMPLETED' AND coalesce(m.network_fee, 0) > 0 AND f.id IS NULL)
              OR (s.id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.ledger_account_id
                                                    WHERE p.entry_id = s.id AND a.code = 'COLD_STORAGE:' || m.network AND p.amount = -m.amount))
              OR (f.id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.ledger_account_id
                                                    WHERE p.entry_id = f.id AND a.code = 'WORLD:' || m.network AND p.amount = m.network_fee))`,
  },
  {
    name: 'each earlier booking of a cold sweep reopened after a reorganisation has its entry and the entry that took it back',
    sql: `SELECT m.id AS movement, k.round
            FROM custody_movements m CROSS JOIN LATERAL generate_series(0, m.reopened - 1) AS k(round)
           WHERE NOT EXISTS (SELECT 1 FROM ledger_entries s WHERE s.idempotency_key = 'cold-sweep:' || m.id || ${roundSql('k.round')})
              OR NOT EXISTS (SELECT 1 FROM ledger_entries o WHERE o.idempotency_key = 'cold-sweep:reopen:' || m.id || ${roundSql('(k.round + 1)')})`,
  },
];
