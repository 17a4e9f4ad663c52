/**
 * Deposits: transfers to our addresses are recorded as soon as a chain shows them (the user sees a Pending
 * history item at once) and credited to the ledger once confirmed, exactly once: one row per chain output
 * (unique network, hash, output), and the credit flips PENDING → CREDITED in the same transaction as the entry.
 */
import type pg from 'pg';
import { findCoin, type Network } from '../../lib/currencies.ts';
import { money } from '../../lib/money.ts';
import type { ChainPort, ChainTransfer } from '../adapters/chains/port.ts';
import { transferKey } from '../adapters/chains/port.ts';
import { selectColumns } from '../db/columns.ts';
import { type chainCursors, chainDeposits } from '../db/schema/chains.ts';
import type { depositAddresses } from '../db/schema/wallet.ts';
import { inTransaction } from '../db/transaction.ts';
import { ensureUserLedgerAccount, SYSTEM_ACCOUNTS, systemAccountId, transfer } from './ledger.ts';
import type { Logger } from '../log.ts';
import { notifyAccountChanged } from './account-changes.ts';
import { depositEntryKey } from './orders/entry-keys.ts';
import { recordHistory } from './orders/history.ts';
import { NOW } from './orders/sql-set.ts';
import { moveOrder, ORDER_TABLES } from './orders/state.ts';

const SCAN_BATCH = 500;
const CONFIRM_BATCH = 200;

/** Reads the chain after the saved cursor and records the transfers to our addresses; returns how many were new. */
export async function scanDeposits(pool: pg.Pool, chain: ChainPort, network: Network): Promise<number> {
  const saved = await pool.query<Pick<typeof chainCursors.$inferSelect, 'position'>>('SELECT position FROM chain_cursors WHERE network = $1', [network]);
  const cursor = saved.rows[0]?.position ?? null;
  const batch = await chain.scan(network, cursor, SCAN_BATCH);
  return inTransaction(pool, async (client) => {
    const recorded = await recordTransfers(client, chain, network, batch.transfers);
    if (batch.cursor !== null && batch.cursor !== cursor) {
      await client.query(
        `INSERT INTO chain_cursors (network, position) VALUES ($1, $2)
         ON CONFLICT (network) DO UPDATE SET position = excluded.position, updated_at = now()`,
        [network, batch.cursor],
      );
    }
    return recorded;
  });
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
  const owners = await db.query<Pick<typeof depositAddresses.$inferSelect, 'address' | 'walletAccountId'>>(
    'SELECT address, wallet_account_id AS "walletAccountId" FROM deposit_addresses WHERE network = $1 AND address = ANY($2::text[])',
    [network, [...new Set(candidates.map((t) => t.toAddress))]],
  );
  const ownerOf = new Map(owners.rows.map((r) => [r.address, r.walletAccountId]));
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
    const shown = await recordHistory(db, {
      walletAccountId: account,
      transactionType: 'DEPOSIT',
      direction: 'DEPOSIT',
      state: 'IN_PROGRESS',
      currency: transfer.currency,
      amount: transfer.amount.toString(),
      network,
      fromAddress: transfer.fromAddress,
      toAddress: transfer.toAddress,
      hash: transfer.txHash,
      accountFromType: null,
      accountToType: 'B2C',
      reference: `deposit:${depositId}`,
    });
    await db.query('UPDATE chain_deposits SET wallet_transaction_id = $2 WHERE id = $1', [depositId, shown]);
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
  const fields = ['id', 'network', 'txHash', 'outputIndex', 'confirmationsRequired'] as const;
  const pending = await pool.query<Pick<typeof chainDeposits.$inferSelect, (typeof fields)[number]>>(
    `SELECT ${selectColumns(chainDeposits, 'd', fields)} FROM chain_deposits d
      WHERE d.state = 'PENDING' AND d.network = ANY($2::text[]) ORDER BY d.detected_at LIMIT $1`,
    // Only networks that are on: a network without an adapter has nobody to ask, its deposits wait.
    [CONFIRM_BATCH, chain.networks],
  );
  let credited = 0;
  for (const [network, rows] of Map.groupBy(pending.rows, (row) => row.network)) {
    const statuses = await chain.status(
      network,
      rows.map((r) => ({ txHash: r.txHash, outputIndex: r.outputIndex })),
    );
    for (const row of rows) {
      const status = statuses.get(transferKey({ txHash: row.txHash, outputIndex: row.outputIndex }));
      if (!status) continue;
      if (status.state === 'DROPPED') {
        await failDeposit(pool, row.id, 'the transaction left the chain');
        log.warn({ deposit: row.id, network, tx: row.txHash }, 'deposit dropped from the chain');
      } else if (status.confirmations >= row.confirmationsRequired) {
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

const CREDIT_FIELDS = ['network', 'txHash', 'outputIndex', 'currency', 'amount', 'walletAccountId'] as const;

/**
 * Credits one deposit: the ledger entry (world → user), the deposit's state and its history item, in one
 * transaction. Returns false when it was already credited or another worker holds it right now.
 */
export async function creditDeposit(pool: pg.Pool, depositId: string, confirmations: number, blockHeight: number | null): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const claimed = await client.query<Pick<typeof chainDeposits.$inferSelect, (typeof CREDIT_FIELDS)[number]>>(
      `SELECT ${selectColumns(chainDeposits, 'd', CREDIT_FIELDS)} FROM chain_deposits d WHERE d.id = $1 AND d.state = 'PENDING' FOR UPDATE SKIP LOCKED`,
      [depositId],
    );
    const deposit = claimed.rows[0];
    if (!deposit) return false;
    const user = await ensureUserLedgerAccount(client, deposit.walletAccountId);
    const credited = money(deposit.currency, BigInt(deposit.amount));
    const entry = await transfer(client, {
      key: depositEntryKey(deposit.network, deposit.txHash, deposit.outputIndex),
      kind: 'DEPOSIT',
      reference: `deposit:${depositId}`,
      from: systemAccountId(SYSTEM_ACCOUNTS.world(deposit.network)),
      to: user,
      currency: credited.currency,
      amount: credited.units,
    });
    await moveOrder(client, ORDER_TABLES.deposit, depositId, {
      from: 'PENDING',
      to: 'CREDITED',
      // A status without a height keeps the one recorded when the transfer was seen.
      set: { ledger_entry_id: entry.entryId, confirmations, credited_at: NOW, ...(blockHeight === null ? {} : { block_height: blockHeight }) },
      history: { state: 'COMPLETED' },
    });
    await notifyAccountChanged(client, deposit.walletAccountId);
    return !entry.replayed;
  });
}

async function failDeposit(pool: pg.Pool, depositId: string, reason: string): Promise<void> {
  await inTransaction(pool, async (client) => {
    const owner = await client.query<Pick<typeof chainDeposits.$inferSelect, 'walletAccountId'>>('SELECT wallet_account_id AS "walletAccountId" FROM chain_deposits WHERE id = $1', [depositId]);
    // Already credited or failed by another worker: nothing to do.
    const moved = await moveOrder(client, ORDER_TABLES.deposit, depositId, { from: 'PENDING', to: 'FAILED', history: { state: 'FAILED', set: { failure_reason: reason } }, ifMoved: 'skip' });
    const account = owner.rows[0]?.walletAccountId;
    if (moved && account) await notifyAccountChanged(client, account);
  });
}
