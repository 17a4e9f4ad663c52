/**
 * Deposits: transfers to our addresses are recorded as soon as a chain shows them (the user sees a Pending
 * history item at once) and credited to the ledger once confirmed, exactly once: one row per chain output
 * (unique network, hash, output), and the credit flips PENDING → CREDITED in the same transaction as the entry.
 */
import type pg from 'pg';
import { findCoin, type Network } from '../../lib/currencies.ts';
import type { ChainPort, ChainTransfer } from '../adapters/chains/port.ts';
import { transferKey } from '../adapters/chains/port.ts';
import { ensureUserLedgerAccount, post, SYSTEM_ACCOUNTS, systemAccountId } from './ledger.ts';
import type { Logger } from '../log.ts';
import { notifyAccountChanged } from './account-changes.ts';
import { depositEntryKey } from './orders/entry-keys.ts';

const SCAN_BATCH = 500;
const CONFIRM_BATCH = 200;

/** Reads the chain after the saved cursor and records the transfers to our addresses; returns how many were new. */
export async function scanDeposits(pool: pg.Pool, chain: ChainPort, network: Network): Promise<number> {
  const saved = await pool.query<{ position: string }>('SELECT position FROM chain_cursors WHERE network = $1', [network]);
  const cursor = saved.rows[0]?.position ?? null;
  const batch = await chain.scan(network, cursor, SCAN_BATCH);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const recorded = await recordTransfers(client, chain, network, batch.transfers);
    if (batch.cursor !== null && batch.cursor !== cursor) {
      await client.query(
        `INSERT INTO chain_cursors (network, position) VALUES ($1, $2)
         ON CONFLICT (network) DO UPDATE SET position = excluded.position, updated_at = now()`,
        [network, batch.cursor],
      );
    }
    await client.query('COMMIT');
    return recorded;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/**
 * Records transfers to our deposit addresses: a chain_deposits row and a Pending history item each. A transfer
 * already recorded (seen again, or by another worker) is skipped by the unique chain output.
 */
export async function recordTransfers(db: pg.ClientBase, chain: ChainPort, network: Network, transfers: readonly ChainTransfer[]): Promise<number> {
  const candidates = transfers.filter((t) => {
    const coin = findCoin(t.currency);
    return coin !== undefined && coin.network === network && t.amount > 0n;
  });
  if (candidates.length === 0) return 0;
  const owners = await db.query<{ address: string; wallet_account_id: string }>(
    'SELECT address, wallet_account_id FROM deposit_addresses WHERE network = $1 AND address = ANY($2::text[])',
    [network, [...new Set(candidates.map((t) => t.toAddress))]],
  );
  const ownerOf = new Map(owners.rows.map((r) => [r.address, r.wallet_account_id]));
  let recorded = 0;
  for (const transfer of candidates) {
    const account = ownerOf.get(transfer.toAddress);
    if (!account) continue;
    const inserted = await db.query<{ id: string }>(
      `INSERT INTO chain_deposits (network, tx_hash, output_index, currency, from_address, to_address, amount, wallet_account_id,
                                   block_height, confirmations_required)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (network, tx_hash, output_index) DO NOTHING RETURNING id`,
      [
        network,
        transfer.txHash,
        transfer.outputIndex,
        transfer.currency,
        transfer.fromAddress,
        transfer.toAddress,
        transfer.amount.toString(),
        account,
        transfer.blockHeight,
        chain.requiredConfirmations(network),
      ],
    );
    const depositId = inserted.rows[0]?.id;
    if (!depositId) continue;
    const shown = await db.query<{ id: string }>(
      `INSERT INTO wallet_transactions (wallet_account_id, transaction_type, direction, state, currency, amount, network,
                                        from_address, to_address, hash, account_from_type, account_to_type, reference)
       VALUES ($1, 'DEPOSIT', 'DEPOSIT', 'IN_PROGRESS', $2, $3, $4, $5, $6, $7, NULL, 'B2C', $8) RETURNING id`,
      [account, transfer.currency, transfer.amount.toString(), network, transfer.fromAddress, transfer.toAddress, transfer.txHash, `deposit:${depositId}`],
    );
    await db.query('UPDATE chain_deposits SET wallet_transaction_id = $2 WHERE id = $1', [depositId, shown.rows[0]?.id]);
    // Money arriving in a currency the account hides (or never added) brings the asset back into view.
    await db.query(
      `INSERT INTO account_assets (wallet_account_id, currency) VALUES ($1, $2)
       ON CONFLICT (wallet_account_id, currency) DO UPDATE SET archived_at = NULL`,
      [account, transfer.currency],
    );
    await notifyAccountChanged(db, account);
    recorded++;
  }
  return recorded;
}

/** Credits every pending deposit that has its confirmations; marks dropped ones failed. Returns how many were credited. */
export async function confirmDeposits(pool: pg.Pool, chain: ChainPort, log: Logger): Promise<number> {
  const pending = await pool.query<{ id: string; network: Network; tx_hash: string; output_index: number; confirmations_required: number }>(
    `SELECT id, network, tx_hash, output_index, confirmations_required FROM chain_deposits
      WHERE state = 'PENDING' AND network = ANY($2::text[]) ORDER BY detected_at LIMIT $1`,
    // Only networks that are on: a network without an adapter has nobody to ask, its deposits wait.
    [CONFIRM_BATCH, chain.networks],
  );
  let credited = 0;
  const byNetwork = Map.groupBy(pending.rows, (row) => row.network);
  for (const [network, rows] of byNetwork) {
    const statuses = await chain.status(
      network,
      rows.map((r) => ({ txHash: r.tx_hash, outputIndex: r.output_index })),
    );
    for (const row of rows) {
      const status = statuses.get(transferKey({ txHash: row.tx_hash, outputIndex: row.output_index }));
      if (!status) continue;
      if (status.state === 'DROPPED') {
        await failDeposit(pool, row.id, 'the transaction left the chain');
        log.warn({ deposit: row.id, network, tx: row.tx_hash }, 'deposit dropped from the chain');
      } else if (status.confirmations >= row.confirmations_required) {
        if (await creditDeposit(pool, row.id, status.confirmations, status.blockHeight)) credited++;
      } else {
        await pool.query(
          `UPDATE chain_deposits SET confirmations = $2, block_height = coalesce($3, block_height)
            WHERE id = $1 AND state = 'PENDING' AND confirmations <> $2`,
          [row.id, status.confirmations, status.blockHeight],
        );
      }
    }
  }
  return credited;
}

/**
 * Credits one deposit: the ledger entry (world → user), the deposit's state and its history item, in one
 * transaction. Returns false when it was already credited or another worker holds it right now.
 */
export async function creditDeposit(pool: pg.Pool, depositId: string, confirmations: number, blockHeight: number | null): Promise<boolean> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const claimed = await client.query<{ network: Network; tx_hash: string; output_index: number; currency: string; amount: string; wallet_account_id: string; wallet_transaction_id: string | null }>(
      `SELECT network, tx_hash, output_index, currency, amount, wallet_account_id, wallet_transaction_id
         FROM chain_deposits WHERE id = $1 AND state = 'PENDING' FOR UPDATE SKIP LOCKED`,
      [depositId],
    );
    const deposit = claimed.rows[0];
    if (!deposit) {
      await client.query('ROLLBACK');
      return false;
    }
    const user = await ensureUserLedgerAccount(client, deposit.wallet_account_id);
    const amount = BigInt(deposit.amount);
    const entry = await post(client, {
      key: depositEntryKey(deposit.network, deposit.tx_hash, deposit.output_index),
      kind: 'DEPOSIT',
      reference: `deposit:${depositId}`,
      postings: [
        { account: systemAccountId(SYSTEM_ACCOUNTS.world(deposit.network)), currency: deposit.currency, bucket: 'AVAILABLE', amount: -amount },
        { account: user, currency: deposit.currency, bucket: 'AVAILABLE', amount },
      ],
    });
    await client.query(
      `UPDATE chain_deposits SET state = 'CREDITED', ledger_entry_id = $2, confirmations = $3, block_height = coalesce($4, block_height),
              credited_at = now() WHERE id = $1`,
      [depositId, entry.entryId, confirmations, blockHeight],
    );
    await client.query(`UPDATE wallet_transactions SET state = 'COMPLETED', completed_at = now(), updated_at = now() WHERE id = $1`, [
      deposit.wallet_transaction_id,
    ]);
    await notifyAccountChanged(client, deposit.wallet_account_id);
    await client.query('COMMIT');
    return !entry.replayed;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

async function failDeposit(pool: pg.Pool, depositId: string, reason: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const updated = await client.query<{ wallet_transaction_id: string | null; wallet_account_id: string }>(
      `UPDATE chain_deposits SET state = 'FAILED' WHERE id = $1 AND state = 'PENDING' RETURNING wallet_transaction_id, wallet_account_id`,
      [depositId],
    );
    const transactionId = updated.rows[0]?.wallet_transaction_id;
    if (updated.rows[0]) await notifyAccountChanged(client, updated.rows[0].wallet_account_id);
    if (transactionId) {
      await client.query(`UPDATE wallet_transactions SET state = 'FAILED', failure_reason = $2, updated_at = now() WHERE id = $1`, [transactionId, reason]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
