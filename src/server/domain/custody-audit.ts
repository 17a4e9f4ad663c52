import type { AuditCheck } from './audit-check.ts';
import { coldSweepEntryKeySql } from './orders/entry-keys.ts';

/**
 * ledger:audit's checks of custodian movements (cold sweeps, and consolidations, which book their fee alone): booked
 * exactly when completed, with their amount and fee.
 */
export const CUSTODY_CHECKS: AuditCheck[] = [
  {
    name: 'each cold sweep is booked once it completed and only then: its amount from cold storage to the world, its network fee',
    sql: `SELECT m.id AS movement, m.state, m.amount::text, m.network_fee::text, s.id AS sweep_entry, f.id AS fee_entry
            FROM custody_movements m
            LEFT JOIN ledger_entries s ON s.idempotency_key = ${coldSweepEntryKeySql('sweep', 'm.id', 'm.reopened')}
            LEFT JOIN ledger_entries f ON f.idempotency_key = ${coldSweepEntryKeySql('networkFee', 'm.id', 'm.reopened')}
           WHERE (m.state = 'COMPLETED' AND m.kind = 'COLD') <> (s.id IS NOT NULL)
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
           WHERE m.kind = 'COLD' AND NOT EXISTS (SELECT 1 FROM ledger_entries s WHERE s.idempotency_key = ${coldSweepEntryKeySql('sweep', 'm.id', 'k.round')})
              OR (m.kind = 'COLD' OR EXISTS (SELECT 1 FROM ledger_entries f WHERE f.idempotency_key = ${coldSweepEntryKeySql('networkFee', 'm.id', 'k.round')}))
                 AND NOT EXISTS (SELECT 1 FROM ledger_entries o WHERE o.idempotency_key = ${coldSweepEntryKeySql('reopen', 'm.id', '(k.round + 1)')})`,
  },
];
