/**
 * Deposits: transfers to our addresses are recorded as soon as a chain shows them (the user sees a Pending
 * history item at once) and credited to the ledger once confirmed, exactly once: one row per chain output
 * (unique network, hash, output), and the credit flips PENDING → CREDITED in the same transaction as the entry.
 */
import type pg from 'pg';
import { findCoin, NETWORK_INFO, type Network } from '../../lib/currencies.ts';
import { formatMoney, money, unitsOf } from '../../lib/money.ts';
import type { ChainPort, ChainReorg, ChainTransfer } from '../adapters/chains/port.ts';
import { withStatuses } from './deposit-status.ts';
import { unitsFromRow } from '../db/amounts.ts';
import { selectColumns } from '../db/columns.ts';
import { type chainCursors, chainDeposits } from '../db/schema/chains.ts';
import type { depositAddresses } from '../db/schema/wallet.ts';
import { inTransaction } from '../db/transaction.ts';
import { ensureUserLedgerAccount, networkFeePayer, SYSTEM_ACCOUNTS, systemAccountId } from './ledger.ts';
import type { Logger } from '../log.ts';
import { notifyAccountChanged } from './account-changes.ts';
import { recheckDoubtfulDeposits } from './deposit-reversals.ts';
import { buyItemOfDeposit, settleBuyOfDeposit } from './buy/onramp-deposits.ts';
import { transferEntry } from './orders/entries.ts';
import { depositEntry } from './orders/entry-keys.ts';
import { recordHistory } from './orders/history.ts';
import { NOW } from './orders/sql-set.ts';
import { moveOrder, ORDER_TABLES } from './orders/state.ts';
import { queueOrderNotification } from './notifications.ts';
import type { DepositAddressGuard } from './deposit-address-guard.ts';

const SCAN_BATCH = 500;
const CONFIRM_BATCH = 200;

/** What composition hands the deposit scanner (custody.ts → jobs/handlers.ts). */
export type DepositOptions = {
  /** MIN_DEPOSIT: per currency, atomic units below which a transfer is recorded BELOW_MINIMUM and never credited. */
  minDeposit?: Readonly<Record<string, bigint>> | undefined;
  /**
   * Which account a deposit address pays: only the one its MAC names (deposit-address-guard.ts). A row moved to
   * another account, or an address put in by someone without SECRETS_KEY, credits nobody (logged as an error); the
   * coins stay in custody, seen by reconciliation as holdings no user owns.
   */
  guard?: Pick<DepositAddressGuard, 'check'> | undefined;
  log?: Logger | undefined;
};

/**
 * Reads the chain after the saved cursor and records the transfers to our addresses; returns how many were new (or
 * seen again after they had failed). A batch that noticed a reorganisation first un-pends the network's deposits
 * at or above `rescanFrom` and puts its credited ones there in doubt (deposit-reversals.ts re-checks them).
 */
export async function scanDeposits(pool: pg.Pool, chain: ChainPort, network: Network, options: DepositOptions = {}): Promise<number> {
  const saved = await pool.query<Pick<typeof chainCursors.$inferSelect, 'position'>>('SELECT position FROM chain_cursors WHERE network = $1', [network]);
  const cursor = saved.rows[0]?.position ?? null;
  const batch = await chain.scan(network, cursor, SCAN_BATCH);
  const moved = batch.cursor !== null && batch.cursor !== cursor;
  // Nothing new on the chain (an idle network's every poll): no transaction to open.
  if (!batch.reorg && batch.transfers.length === 0 && !moved) return 0;
  return inTransaction(pool, async (client) => {
    if (batch.reorg) await unwindReorg(client, network, batch.reorg, options.log);
    const recorded = await recordTransfers(client, chain, network, batch.transfers, options.minDeposit, options.guard);
    if (moved) {
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
 * A reorganisation replaced the blocks from `rescanFrom`: pending deposits there (and those without a block, whose
 * status may have been read before) lose their height and confirmations until `status` says again, and credited
 * ones there are put in doubt. One statement: a credit committing meanwhile is seen credited, and a credit decided
 * on a status read before finds its row changed (confirmDeposits' row version check) and waits for the next pass.
 */
async function unwindReorg(db: pg.ClientBase, network: Network, reorg: ChainReorg, log: Logger | undefined): Promise<void> {
  const touched = await db.query<Pick<typeof chainDeposits.$inferSelect, 'id' | 'state' | 'txHash' | 'walletAccountId'>>(
    `UPDATE chain_deposits
        SET block_height = CASE WHEN state = 'PENDING' THEN NULL ELSE block_height END,
            confirmations = CASE WHEN state = 'PENDING' THEN 0 ELSE confirmations END,
            in_doubt_since = CASE WHEN state = 'CREDITED' THEN coalesce(in_doubt_since, now()) ELSE in_doubt_since END
      WHERE network = $1 AND ((state = 'PENDING' AND (block_height IS NULL OR block_height >= $2)) OR (state = 'CREDITED' AND block_height >= $2))
      RETURNING id, state, tx_hash AS "txHash", wallet_account_id AS "walletAccountId"`,
    [network, reorg.rescanFrom],
  );
  // Completed withdrawals, cold sweeps and sweeps mined there are checked again too (withdrawals/reopen.ts,
  // custody-movements.ts, sweeps.ts): their transaction may have left. So are those still in flight: the network's
  // other job may be completing one on a status it read before this reorganisation (its own lane, at the same time);
  // completing keeps the mark, so it is checked once more after.
  await db.query(
    `UPDATE withdrawals SET in_doubt_since = coalesce(in_doubt_since, now())
      WHERE network = $1 AND kind = 'EXTERNAL' AND (state = 'BROADCAST'
        OR (state = 'COMPLETED' AND (block_height >= $2 OR (block_height IS NULL AND closed_at > now() - interval '1 day'))))`,
    [network, reorg.rescanFrom],
  );
  for (const [table, done, flying] of [['custody_movements', 'COMPLETED', 'BROADCAST'], ['sweeps', 'CONFIRMED', 'SENT']] as const) {
    await db.query(
      `UPDATE ${table} SET in_doubt_since = coalesce(in_doubt_since, now())
        WHERE network = $1 AND (state = $4 OR (state = $3 AND (block_height >= $2 OR (block_height IS NULL AND closed_at > now() - interval '1 day'))))`,
      [network, reorg.rescanFrom, done, flying],
    );
  }
  const context = { network, orphaned: reorg.orphaned, rescanFrom: reorg.rescanFrom };
  // A node that came back with a shorter chain is an operator's matter (a restored or damaged node): said once, here;
  // the cursor moves onto its chain, so the next scans are ordinary ones.
  if (reorg.lostBlocks !== undefined) log?.error({ ...context, lostBlocks: reorg.lostBlocks }, 'the node lost blocks below the scan cursor: handled as a reorganisation of that depth');
  else log?.warn(context, 'chain reorganisation: deposits from the replaced blocks are checked again');
  for (const row of touched.rows.filter((r) => r.state === 'CREDITED')) {
    log?.warn({ network, deposit: row.id, account: row.walletAccountId, tx: row.txHash }, 'a credited deposit was in a replaced block: checking it is mined again');
  }
}

/**
 * Records transfers to our deposit addresses: a chain_deposits row and a history item each (Pending, or Failed
 * with its reason below MIN_DEPOSIT). A transfer already recorded (seen again, or by another worker) is skipped by
 * the unique chain output, unless it had FAILED (its transaction left the chain): then it is pending again.
 */
export async function recordTransfers(
  db: pg.ClientBase,
  chain: ChainPort,
  network: Network,
  transfers: readonly ChainTransfer[],
  minDeposit: Readonly<Record<string, bigint>> = {},
  guard?: Pick<DepositAddressGuard, 'check'>,
): Promise<number> {
  const candidates = transfers.filter((t) => {
    const coin = findCoin(t.currency);
    return coin !== undefined && coin.network === network && t.amount > 0n;
  });
  if (candidates.length === 0) return 0;
  const owners = await db.query<Pick<typeof depositAddresses.$inferSelect, 'network' | 'address' | 'walletAccountId' | 'derivationIndex' | 'mac'>>(
    `SELECT network, address, wallet_account_id AS "walletAccountId", derivation_index AS "derivationIndex", mac
       FROM deposit_addresses WHERE network = $1 AND address = ANY($2::text[])`,
    [network, [...new Set(candidates.map((t) => t.toAddress))]],
  );
  const ownerOf = new Map<string, string>();
  // An address that cannot be checked now fails the batch (the scan is tried again); one that does not hold credits nobody.
  for (const owner of owners.rows) if (!guard || (await guard.check(db, owner, { uncheckable: 'throw' })) !== undefined) ownerOf.set(owner.address, owner.walletAccountId);
  let recorded = 0;
  for (const transfer of candidates) {
    const account = ownerOf.get(transfer.toAddress);
    if (!account) continue;
    const minimum = minDeposit[transfer.currency] ?? 0n;
    const below = transfer.amount < minimum;
    // A failed deposit seen again was mined again (after a reorganisation): pending once more, its history item too.
    // So is a reversed one; it counts a revival, so that its next credit (and any reversal of it) is a new entry.
    const inserted = await db.query<{ id: string }>(
      `INSERT INTO chain_deposits (network, tx_hash, output_index, currency, from_address, to_address, amount, wallet_account_id,
                                   block_height, confirmations_required, state)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (network, tx_hash, output_index) DO NOTHING
       RETURNING id`,
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
        below ? 'BELOW_MINIMUM' : 'PENDING',
      ],
    );
    const row = inserted.rows[0];
    if (!row) {
      if (await reviveDeposit(db, network, transfer)) {
        await notifyAccountChanged(db, account);
        recorded++;
      }
      continue;
    }
    // What taking it in cost the custody's wallet (TON) is the gas float's, once per deposit, whatever becomes of it.
    if (transfer.receiveFee !== undefined && transfer.receiveFee > 0n) {
      await transferEntry(db, depositEntry('receiveFee', { id: row.id, network, txHash: transfer.txHash, outputIndex: transfer.outputIndex }), {
        from: networkFeePayer(network),
        to: systemAccountId(SYSTEM_ACCOUNTS.world(network)),
        money: { currency: NETWORK_INFO[network].coin, units: unitsOf(transfer.receiveFee) },
      });
    }
    // Coins an on-ramp sent for a purchase (issue 32) show as that purchase: the deposit shares its history item.
    const bought = below ? undefined : await buyItemOfDeposit(db, { id: row.id, walletAccountId: account, network, currency: transfer.currency, txHash: transfer.txHash, toAddress: transfer.toAddress, fromAddress: transfer.fromAddress, amount: transfer.amount });
    const shown = bought ?? await recordHistory(db, {
      walletAccountId: account,
      transactionType: 'DEPOSIT',
      direction: 'DEPOSIT',
      state: below ? 'FAILED' : 'IN_PROGRESS',
      currency: transfer.currency,
      amount: transfer.amount.toString(),
      network,
      fromAddress: transfer.fromAddress,
      toAddress: transfer.toAddress,
      hash: transfer.txHash,
      accountFromType: null,
      accountToType: 'B2C',
      reference: `deposit:${row.id}`,
      ...(below ? { failureReason: `${BELOW_MINIMUM_REASON}: the minimum deposit is ${formatMoney(money(transfer.currency, unitsOf(minimum)))} ${transfer.currency}, this one is not credited` } : {}),
    });
    await db.query('UPDATE chain_deposits SET wallet_transaction_id = $2 WHERE id = $1', [row.id, shown]);
    if (!below) await queueOrderNotification(db, ORDER_TABLES.deposit, row.id, 'deposit.pending');
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

/**
 * A recorded output seen on a chain again: a FAILED or REVERSED deposit is mined again (after a reorganisation) and
 * PENDING once more, its history item too; a reversed one counts a revival, so that its next credit (and any reversal
 * of it) is an entry of its own. Any other state is left alone: false.
 */
async function reviveDeposit(db: pg.ClientBase, network: Network, transfer: ChainTransfer): Promise<boolean> {
  const found = await db.query<Pick<typeof chainDeposits.$inferSelect, 'id' | 'state'>>(
    `SELECT ${selectColumns(chainDeposits, 'd', ['id', 'state'])} FROM chain_deposits d WHERE d.network = $1 AND d.tx_hash = $2 AND d.output_index = $3`,
    [network, transfer.txHash, transfer.outputIndex],
  );
  const deposit = found.rows[0];
  if (!deposit || (deposit.state !== 'FAILED' && deposit.state !== 'REVERSED')) return false;
  return moveOrder(db, ORDER_TABLES.deposit, deposit.id, {
    from: deposit.state,
    to: 'PENDING',
    set: { block_height: transfer.blockHeight, confirmations: 0, ...(deposit.state === 'REVERSED' ? { revivals: { add: 1 } } : {}) },
    history: { state: 'IN_PROGRESS', set: { failure_reason: null } },
    ifMoved: 'skip',
  });
}

/** The reason code a deposit below MIN_DEPOSIT shows in the user's history (state FAILED, never credited). */
export const BELOW_MINIMUM_REASON = 'BELOW_MINIMUM_DEPOSIT';

/**
 * Credits every pending deposit that has its confirmations; marks dropped ones failed; then re-checks the credited
 * deposits a reorganisation put in doubt (deposit-reversals.ts). Returns how many were credited. Each row is acted on
 * only if no one changed it since it was read (its row version, `xmin`): a status read before a reorganisation or a
 * revival is never applied after it.
 */
export async function confirmDeposits(pool: pg.Pool, chain: ChainPort, log: Logger): Promise<number> {
  const fields = ['id', 'network', 'txHash', 'outputIndex', 'confirmationsRequired'] as const;
  const pending = await pool.query<Pick<typeof chainDeposits.$inferSelect, (typeof fields)[number]> & { version: string }>(
    `SELECT ${selectColumns(chainDeposits, 'd', fields)}, d.xmin::text AS version FROM chain_deposits d
      WHERE d.state = 'PENDING' AND d.network = ANY($2::text[]) ORDER BY d.detected_at LIMIT $1`,
    // Only networks that are on: a network without an adapter has nobody to ask, its deposits wait.
    [CONFIRM_BATCH, chain.networks],
  );
  let credited = 0;
  for await (const [row, status] of withStatuses(chain, pending.rows)) {
    if (status.state !== 'SEEN') {
      if (!(await failDeposit(pool, row.id, row.version, status.state === 'FAILED' ? status.reason : 'the transaction left the chain'))) continue;
      log.warn({ deposit: row.id, network: row.network, tx: row.txHash }, 'deposit dropped from the chain');
    } else if (status.confirmations >= row.confirmationsRequired) {
      if (await creditDeposit(pool, row.id, status.confirmations, status.blockHeight, row.version)) credited++;
    } else {
      await pool.query(
        `UPDATE chain_deposits SET confirmations = $2, block_height = coalesce($3, block_height)
          WHERE id = $1 AND state = 'PENDING' AND xmin = $4::text::xid AND (confirmations <> $2 OR block_height IS DISTINCT FROM coalesce($3, block_height))`,
        [row.id, status.confirmations, status.blockHeight, row.version],
      );
    }
  }
  await recheckDoubtfulDeposits(pool, chain, log);
  return credited;
}

const CREDIT_FIELDS = ['network', 'txHash', 'outputIndex', 'currency', 'amount', 'walletAccountId', 'revivals'] as const;

/**
 * Credits one deposit: the ledger entry (world → user), the deposit's state and its history item, in one
 * transaction. Returns false when it was already credited, another worker holds it right now, or the row changed
 * since `version` (its xmin when the status was read) was taken.
 */
export async function creditDeposit(pool: pg.Pool, depositId: string, confirmations: number, blockHeight: number | null, version?: string): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const claimed = await client.query<Pick<typeof chainDeposits.$inferSelect, (typeof CREDIT_FIELDS)[number]>>(
      `SELECT ${selectColumns(chainDeposits, 'd', CREDIT_FIELDS)} FROM chain_deposits d
        WHERE d.id = $1 AND d.state = 'PENDING' AND ($2::text IS NULL OR d.xmin = $2::text::xid) FOR UPDATE SKIP LOCKED`,
      [depositId, version ?? null],
    );
    const deposit = claimed.rows[0];
    if (!deposit) return false;
    const user = await ensureUserLedgerAccount(client, deposit.walletAccountId);
    const credited = money(deposit.currency, unitsFromRow(deposit.amount));
    const entry = await transferEntry(client, depositEntry('credit', { ...deposit, id: depositId }, deposit.revivals), {
      from: systemAccountId(SYSTEM_ACCOUNTS.world(deposit.network)),
      to: user,
      money: credited,
    });
    await moveOrder(client, ORDER_TABLES.deposit, depositId, {
      from: 'PENDING',
      to: 'CREDITED',
      // A status without a height keeps the one recorded when the transfer was seen.
      set: { ledger_entry_id: entry.entryId, confirmations, credited_at: NOW, ...(blockHeight === null ? {} : { block_height: blockHeight }) },
      history: { state: 'COMPLETED' },
    });
    // The on-ramp purchase these coins bring (issue 32) completes with their credit.
    await settleBuyOfDeposit(client, depositId);
    await notifyAccountChanged(client, deposit.walletAccountId);
    return !entry.replayed;
  });
}

/** Fails a pending deposit unchanged since `version`; false when it changed or another worker holds it. */
async function failDeposit(pool: pg.Pool, depositId: string, version: string, reason: string): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const owner = await client.query<Pick<typeof chainDeposits.$inferSelect, 'walletAccountId'>>(
      `SELECT wallet_account_id AS "walletAccountId" FROM chain_deposits WHERE id = $1 AND xmin = $2::text::xid FOR UPDATE SKIP LOCKED`,
      [depositId, version],
    );
    if (!owner.rows[0]) return false;
    // Already credited or failed by another worker: nothing to do.
    const moved = await moveOrder(client, ORDER_TABLES.deposit, depositId, { from: 'PENDING', to: 'FAILED', history: { state: 'FAILED', set: { failure_reason: reason } }, ifMoved: 'skip' });
    const account = owner.rows[0]?.walletAccountId;
    if (moved && account) await notifyAccountChanged(client, account);
    return moved;
  });
}
