/**
 * Credited deposits a reorganisation put in doubt (deposits.ts `unwindReorg` sets `in_doubt_since`), re-checked by
 * `status` on every confirm pass until the chain decides:
 * - mined again with its confirmations: the doubt is lifted (a HELD one's hold released: available again);
 * - on a chain again with fewer (back in the mempool, mined anew higher up): HELD, its amount on hold (available →
 *   on hold, its own idempotent entry; history Pending) so nobody spends coins that may not come; when the balance no
 *   longer holds it (spent meanwhile), the account is frozen for withdrawals with one ERROR until it is held or
 *   confirmed;
 * - gone (DROPPED, or mined and FAILED): the credit is reversed on the ledger (user → WORLD:<network>, its own
 *   idempotent entry; a HELD one's hold released first, so it always goes through) if the balance allows, state
 *   REVERSED and the history item FAILED with the reason; otherwise the deposit is REVERSAL_DUE, the account is
 *   frozen for withdrawals and an ERROR names account, deposit and tx.
 *   A REVERSAL_DUE deposit is re-checked too: reversed once the balance allows (or held or lifted if mined again), and
 *   the account is unfrozen when none is due any more.
 * A REVERSED deposit mined again later is revived by the scan (deposits.ts `recordTransfers`) and credited anew.
 * Each decision runs in one transaction holding the account's row lock (withdrawal requests take it shared), and
 * acts only on a deposit row unchanged since its status was read (`xmin`): two workers never reverse twice.
 */
import type pg from 'pg';
import { unitsFromRow } from '../db/amounts.ts';
import type { ChainPort, TransferStatus } from '../adapters/chains/port.ts';
import { withStatuses } from './deposit-status.ts';
import { selectColumns } from '../db/columns.ts';
import { chainDeposits } from '../db/schema/chains.ts';
import { inTransaction } from '../db/transaction.ts';
import type { Logger } from '../log.ts';
import { notifyAccountChanged } from './account-changes.ts';
import { LedgerError, SYSTEM_ACCOUNTS, systemAccountId } from './ledger.ts';
import { holdEntry, releaseEntry, transferEntry } from './orders/entries.ts';
import { depositEntry } from './orders/entry-keys.ts';
import { moveOrder, ORDER_TABLES } from './orders/state.ts';
import { freezeWithdrawals, lockAccountForFreeze, unfreezeWhenSettled } from './withdrawal-freeze.ts';

const RECHECK_BATCH = 200;

/** What the user's history item says of a reversed deposit. */
export const REVERSED_REASON = 'DEPOSIT_REVERSED: the transaction left the chain after it was credited, so the credit was taken back';

const FIELDS = ['id', 'network', 'txHash', 'outputIndex', 'currency', 'amount', 'walletAccountId', 'state', 'revivals', 'holds', 'confirmationsRequired', 'confirmations', 'blockHeight'] as const;
type Doubtful = Pick<typeof chainDeposits.$inferSelect, (typeof FIELDS)[number]> & { version: string };

/** Re-checks the credited deposits in doubt, the held ones and those whose reversal is due; returns how many it reversed. */
export async function recheckDoubtfulDeposits(pool: pg.Pool, chain: ChainPort, log: Logger): Promise<number> {
  const doubtful = await pool.query<Doubtful>(
    `SELECT ${selectColumns(chainDeposits, 'd', FIELDS)}, d.xmin::text AS version FROM chain_deposits d
      WHERE ((d.state = 'CREDITED' AND d.in_doubt_since IS NOT NULL) OR d.state IN ('REVERSAL_DUE', 'HELD')) AND d.network = ANY($2::text[])
      ORDER BY d.in_doubt_since NULLS LAST LIMIT $1`,
    [RECHECK_BATCH, chain.networks],
  );
  let reversed = 0;
  for await (const [row, status] of withStatuses(chain, doubtful.rows)) {
    // A held one whose standing has not changed: nothing to write.
    if (row.state === 'HELD' && status.state === 'SEEN' && status.confirmations < row.confirmationsRequired && status.confirmations === row.confirmations && status.blockHeight === row.blockHeight) continue;
    if (await settleDoubt(pool, row, status, log)) reversed++;
  }
  return reversed;
}

/** One deposit's outcome, in one transaction; true when it reversed the credit. */
async function settleDoubt(pool: pg.Pool, row: Doubtful, status: TransferStatus, log: Logger): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    await lockAccountForFreeze(client, row.walletAccountId);
    const claimed = await client.query(`SELECT 1 FROM chain_deposits WHERE id = $1 AND xmin = $2::text::xid FOR UPDATE SKIP LOCKED`, [row.id, row.version]);
    // Another worker decided it, or the chain told something new since the status was read: next pass.
    if (claimed.rowCount === 0) return false;
    if (status.state !== 'SEEN') return reverseCredit(client, row, log);
    if (status.blockHeight !== null && status.confirmations >= row.confirmationsRequired) await restoreCredit(client, row, status, log);
    else await holdCredit(client, row, status, log);
    await notifyAccountChanged(client, row.walletAccountId);
    return false;
  });
}

/** Mined again with its confirmations: the doubt is lifted, a hold released, a freeze it caused lifted. */
async function restoreCredit(client: pg.PoolClient, row: Doubtful, status: Extract<TransferStatus, { state: 'SEEN' }>, log: Logger): Promise<void> {
  const set = { in_doubt_since: null, confirmations: status.confirmations, block_height: status.blockHeight };
  if (row.state === 'HELD') {
    await releaseEntry(client, depositEntry('release', row, row.holds), { account: row.walletAccountId, money: { currency: row.currency, units: unitsFromRow(row.amount, 'amount') } });
    await moveOrder(client, ORDER_TABLES.deposit, row.id, { from: 'HELD', to: 'CREDITED', set, history: { state: 'COMPLETED' } });
    log.info({ network: row.network, deposit: row.id, tx: row.txHash, confirmations: status.confirmations }, 'a held deposit has its confirmations again: available');
  } else {
    await moveOrder(client, ORDER_TABLES.deposit, row.id, { from: row.state, to: 'CREDITED', set });
    log.info({ network: row.network, deposit: row.id, tx: row.txHash }, 'a credited deposit in doubt after a reorganisation is mined again');
  }
  if (await unfreezeWhenSettled(client, row.walletAccountId)) log.warn({ account: row.walletAccountId, deposit: row.id, tx: row.txHash }, 'a deposit in doubt has its confirmations again: withdrawals unfrozen');
}

/**
 * On a chain again with fewer than its confirmations: its amount goes on hold (HELD, history Pending) until it has
 * them. When the balance no longer holds it, the account's withdrawals are frozen (one ERROR) until it does or the
 * deposit is confirmed or reversed.
 */
async function holdCredit(client: pg.PoolClient, row: Doubtful, status: Extract<TransferStatus, { state: 'SEEN' }>, log: Logger): Promise<void> {
  const standing = { confirmations: status.confirmations, block_height: status.blockHeight };
  if (row.state === 'HELD') {
    await moveOrder(client, ORDER_TABLES.deposit, row.id, { from: 'HELD', to: 'HELD', set: standing });
    return;
  }
  const next = row.holds + 1;
  await client.query('SAVEPOINT deposit_hold');
  try {
    await holdEntry(client, depositEntry('hold', row, next), { account: row.walletAccountId, money: { currency: row.currency, units: unitsFromRow(row.amount, 'amount') } });
  } catch (error) {
    if (!(error instanceof LedgerError && error.problem === 'INSUFFICIENT_FUNDS')) throw error;
    await client.query('ROLLBACK TO SAVEPOINT deposit_hold');
    const reason = `deposit ${row.id} (${row.network} ${row.txHash}:${row.outputIndex}, ${row.amount} ${row.currency} atomic units) lost its confirmations after it was credited`;
    if (row.state === 'CREDITED' && (await freezeWithdrawals(client, row.walletAccountId, reason))) {
      log.error(
        { account: row.walletAccountId, deposit: row.id, network: row.network, tx: row.txHash, output: row.outputIndex, currency: row.currency, amount: row.amount, confirmations: status.confirmations },
        'credited deposit lost its confirmations and the balance cannot hold it: account frozen for withdrawals',
      );
    }
    return;
  }
  await client.query('RELEASE SAVEPOINT deposit_hold');
  await moveOrder(client, ORDER_TABLES.deposit, row.id, { from: row.state, to: 'HELD', set: { ...standing, holds: next }, history: { state: 'IN_PROGRESS' } });
  log.warn(
    { account: row.walletAccountId, deposit: row.id, network: row.network, tx: row.txHash, amount: row.amount, currency: row.currency, confirmations: status.confirmations },
    'credited deposit lost its confirmations: its amount is on hold until it has them again',
  );
  if (await unfreezeWhenSettled(client, row.walletAccountId)) log.warn({ account: row.walletAccountId, deposit: row.id, tx: row.txHash }, 'a deposit whose reversal was due is on a chain again and held: withdrawals unfrozen');
}

/** Takes the credit back if the balance allows; else marks the reversal due and freezes the account's withdrawals. */
async function reverseCredit(client: pg.PoolClient, row: Doubtful, log: Logger): Promise<boolean> {
  const amount = unitsFromRow(row.amount, 'amount');
  // A held credit is on hold: given back to available first, in the same transaction, so the reversal always fits.
  if (row.state === 'HELD') {
    await releaseEntry(client, depositEntry('release', row, row.holds), { account: row.walletAccountId, money: { currency: row.currency, units: amount } });
  }
  await client.query('SAVEPOINT deposit_reversal');
  try {
    await transferEntry(client, depositEntry('reversal', row, row.revivals), {
      from: row.walletAccountId,
      to: systemAccountId(SYSTEM_ACCOUNTS.world(row.network)),
      money: { currency: row.currency, units: amount },
    });
  } catch (error) {
    if (!(error instanceof LedgerError && error.problem === 'INSUFFICIENT_FUNDS')) throw error;
    await client.query('ROLLBACK TO SAVEPOINT deposit_reversal');
    if (row.state === 'REVERSAL_DUE') return false;
    await moveOrder(client, ORDER_TABLES.deposit, row.id, { from: row.state, to: 'REVERSAL_DUE' });
    const reason = `deposit ${row.id} (${row.network} ${row.txHash}:${row.outputIndex}, ${row.amount} ${row.currency} atomic units) left the chain after it was credited`;
    await freezeWithdrawals(client, row.walletAccountId, reason);
    log.error(
      { account: row.walletAccountId, deposit: row.id, network: row.network, tx: row.txHash, output: row.outputIndex, currency: row.currency, amount: row.amount },
      'credited deposit left the chain and the balance cannot cover its reversal: account frozen for withdrawals',
    );
    await notifyAccountChanged(client, row.walletAccountId);
    return false;
  }
  await client.query('RELEASE SAVEPOINT deposit_reversal');
  await moveOrder(client, ORDER_TABLES.deposit, row.id, {
    from: ['CREDITED', 'HELD', 'REVERSAL_DUE'],
    to: 'REVERSED',
    set: { in_doubt_since: null },
    history: { state: 'FAILED', set: { failure_reason: REVERSED_REASON } },
  });
  if (await unfreezeWhenSettled(client, row.walletAccountId)) {
    log.warn({ account: row.walletAccountId, deposit: row.id, tx: row.txHash }, 'the due reversal of a deposit went through: withdrawals unfrozen');
  }
  log.warn({ account: row.walletAccountId, deposit: row.id, network: row.network, tx: row.txHash, amount: row.amount, currency: row.currency }, 'credited deposit left the chain: credit reversed');
  await notifyAccountChanged(client, row.walletAccountId);
  return true;
}
