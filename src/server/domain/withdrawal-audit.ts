import type { AuditCheck } from './audit-check.ts';
import { orderEntryKeySql } from './orders/entry-keys.ts';

/** ledger:audit's checks of withdrawals: each one's entries match its state, and so do its history items. */
export const WITHDRAWAL_CHECKS: AuditCheck[] = [
  {
    name: "each outside withdrawal's entries match its state: held, then settled or returned, never both",
    sql: `SELECT w.id AS withdrawal, w.state, h.id AS hold_entry, s.id AS settle_entry, r.id AS release_entry
            FROM withdrawals w
            LEFT JOIN ledger_entries h ON h.idempotency_key = ${orderEntryKeySql('withdrawal', 'hold', 'w.id')}
            LEFT JOIN ledger_entries s ON s.idempotency_key = ${orderEntryKeySql('withdrawal', 'settle', 'w.id', 'w.reopened')}
            LEFT JOIN ledger_entries r ON r.idempotency_key = ${orderEntryKeySql('withdrawal', 'release', 'w.id')}
           WHERE w.kind = 'EXTERNAL' AND (
                 h.id IS NULL
              OR NOT EXISTS (SELECT 1 FROM ledger_postings p WHERE p.entry_id = h.id AND p.ledger_account_id = w.wallet_account_id
                                AND p.currency = w.currency AND p.bucket = 'ON_HOLD' AND p.amount = w.amount)
              OR (w.state IN ('UNDER_REVIEW', 'PENDING', 'SIGNED', 'BROADCAST') AND (s.id IS NOT NULL OR r.id IS NOT NULL))
              OR (w.state = 'COMPLETED' AND (s.id IS NULL OR r.id IS NOT NULL))
              OR (w.state = 'FAILED' AND (r.id IS NULL OR s.id IS NOT NULL)))`,
  },
  {
    name: 'each completed outside withdrawal paid the recipient the amount less the fee, and the fee to fee income',
    sql: `SELECT w.id AS withdrawal, w.amount::text, w.fee::text
            FROM withdrawals w JOIN ledger_entries s ON s.idempotency_key = ${orderEntryKeySql('withdrawal', 'settle', 'w.id', 'w.reopened')}
           WHERE w.kind = 'EXTERNAL' AND (
                 NOT EXISTS (SELECT 1 FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.ledger_account_id
                              WHERE p.entry_id = s.id AND a.code = 'WORLD:' || w.network AND p.amount = w.amount - w.fee)
              OR (w.fee > 0 AND NOT EXISTS (SELECT 1 FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.ledger_account_id
                              WHERE p.entry_id = s.id AND a.code = 'FEE_INCOME' AND p.amount = w.fee)))`,
  },
  {
    name: "each withdrawal's network fee is booked once, from the gas float or network fees to the world, exactly as recorded",
    sql: `SELECT w.id AS withdrawal, w.network_fee::text, n.id AS fee_entry
            FROM withdrawals w LEFT JOIN ledger_entries n ON n.idempotency_key = ${orderEntryKeySql('withdrawal', 'networkFee', 'w.id', 'w.reopened')}
           WHERE (w.network_fee IS NULL) <> (n.id IS NULL)
              OR (n.id IS NOT NULL AND (
                   NOT EXISTS (SELECT 1 FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.ledger_account_id
                                WHERE p.entry_id = n.id AND a.code = 'WORLD:' || w.network AND p.amount = w.network_fee)
                OR NOT EXISTS (SELECT 1 FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.ledger_account_id
                                WHERE p.entry_id = n.id AND a.code IN ('GAS_FLOAT:' || w.network, 'NETWORK_FEES:' || w.network) AND p.amount = -w.network_fee)))`,
  },
  {
    name: 'each earlier settlement of a withdrawal reopened after a reorganisation has its entry and the entry that took it back',
    sql: `SELECT w.id AS withdrawal, k.round
            FROM withdrawals w CROSS JOIN LATERAL generate_series(0, w.reopened - 1) AS k(round)
           WHERE NOT EXISTS (SELECT 1 FROM ledger_entries s WHERE s.idempotency_key = ${orderEntryKeySql('withdrawal', 'settle', 'w.id', 'k.round')})
              OR NOT EXISTS (SELECT 1 FROM ledger_entries o JOIN ledger_postings p ON p.entry_id = o.id
                              WHERE o.idempotency_key = ${orderEntryKeySql('withdrawal', 'reopen', 'w.id', '(k.round + 1)')}
                                AND p.ledger_account_id = w.wallet_account_id AND p.currency = w.currency AND p.bucket = 'ON_HOLD' AND p.amount = w.amount)`,
  },
  {
    // One held for review (withdrawals/review.ts) has a hold; approved, the hold went back before the transfer; rejected, no transfer.
    name: 'each transfer to another user is one entry from the sender to the recipient once completed, without a fee; held while in review',
    sql: `SELECT w.id AS withdrawal, w.state, e.id AS entry_id, h.id AS hold_entry, r.id AS release_entry
            FROM withdrawals w
            LEFT JOIN ledger_entries e ON e.idempotency_key = ${orderEntryKeySql('withdrawal', 'internal', 'w.id')}
            LEFT JOIN ledger_entries h ON h.idempotency_key = ${orderEntryKeySql('withdrawal', 'hold', 'w.id')}
            LEFT JOIN ledger_entries r ON r.idempotency_key = ${orderEntryKeySql('withdrawal', 'release', 'w.id')}
           WHERE w.kind = 'INTERNAL' AND (
                 w.fee <> 0
              OR w.state NOT IN ('COMPLETED', 'UNDER_REVIEW', 'FAILED')
              OR (h.id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ledger_postings p WHERE p.entry_id = h.id AND p.ledger_account_id = w.wallet_account_id
                                AND p.currency = w.currency AND p.bucket = 'ON_HOLD' AND p.amount = w.amount))
              OR (w.state = 'UNDER_REVIEW' AND (h.id IS NULL OR r.id IS NOT NULL OR e.id IS NOT NULL))
              OR (w.state = 'FAILED' AND (h.id IS NULL OR r.id IS NULL OR e.id IS NOT NULL))
              OR (w.state = 'COMPLETED' AND (
                   e.id IS NULL OR (h.id IS NULL) <> (r.id IS NULL)
                OR NOT EXISTS (SELECT 1 FROM ledger_postings p WHERE p.entry_id = e.id AND p.ledger_account_id = w.wallet_account_id
                                AND p.currency = w.currency AND p.bucket = 'AVAILABLE' AND p.amount = -w.amount)
                OR NOT EXISTS (SELECT 1 FROM ledger_postings p WHERE p.entry_id = e.id AND p.ledger_account_id = w.recipient_account_id
                                AND p.currency = w.currency AND p.bucket = 'AVAILABLE' AND p.amount = w.amount))))`,
  },
  {
    name: "each withdrawal's history items have the withdrawal's state",
    sql: `SELECT w.id AS withdrawal, w.state, t.state AS shown, r.state AS shown_to_recipient
            FROM withdrawals w
            LEFT JOIN wallet_transactions t ON t.id = w.wallet_transaction_id
            LEFT JOIN wallet_transactions r ON r.id = w.recipient_transaction_id
           WHERE t.id IS NULL
              OR t.state <> CASE WHEN w.state IN ('UNDER_REVIEW', 'PENDING', 'SIGNED', 'BROADCAST') THEN 'IN_PROGRESS' ELSE w.state END
              OR (w.kind = 'INTERNAL' AND w.state = 'COMPLETED' AND (r.id IS NULL OR r.state <> 'COMPLETED'))
              OR (w.kind = 'INTERNAL' AND w.state <> 'COMPLETED' AND r.id IS NOT NULL)`,
  },
];
