/**
 * Completed withdrawals a reorganisation put in doubt (deposits.ts `unwindReorg` sets `in_doubt_since` on those mined
 * in the replaced blocks), re-checked by `status` of the transaction that completed them:
 * - still mined with its confirmations: the doubt is lifted;
 * - back in the mempool, mined anew with fewer confirmations, gone or failed: the withdrawal is reopened, COMPLETED →
 *   BROADCAST (history Pending), its settlement taken back onto the user's hold in one entry of its own
 *   (`withdrawal:reopen:<id>#<round>`, the network fee's booking undone with it). From there the worker's ordinary
 *   rules apply to the same signed transaction(s): sent again with the same bytes while the node lost it and its
 *   inputs are unspent (the adapter's `status`), completed again once mined (a settlement of its round), and failed
 *   (the hold released to the user) only when every one of its transactions is DROPPED, which a UTXO adapter answers
 *   only once its inputs are spent elsewhere.
 * Its reserved inputs stay reserved throughout: the same transaction may still be mined.
 */
import type pg from 'pg';
import { unitsFromRow, unitsFromRowOrZero } from '../../db/amounts.ts';
import { NETWORK_INFO } from '../../../lib/currencies.ts';
import { money, negateUnits, subtractUnits } from '../../../lib/money.ts';
import { transferKey, type HotWalletFees, type TransferStatus, type WithdrawalChainPort } from '../../adapters/chains/port.ts';
import { selectColumns } from '../../db/columns.ts';
import { withdrawals } from '../../db/schema/withdrawals.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { Logger } from '../../log.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { feePayerOf, SYSTEM_ACCOUNTS, systemAccountId, type Posting } from '../ledger.ts';
import { reopenOrder, type SettleLeg } from '../orders/entries.ts';
import { orderEntryKey } from '../orders/entry-keys.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';

const BATCH = 200;
const FIELDS = ['id', 'walletAccountId', 'network', 'currency', 'amount', 'fee', 'txHash', 'networkFee', 'reopened', 'blockHeight', 'confirmations'] as const;
type Completed = Pick<typeof withdrawals.$inferSelect, (typeof FIELDS)[number]> & { txHash: string; version: string };

/** Where a withdrawal's held amount goes when it completes: less the fee to the network's world account, the fee to fee income. */
export function settleLegs(w: Pick<typeof withdrawals.$inferSelect, 'network' | 'amount' | 'fee'>): SettleLeg[] {
  const fee = unitsFromRow(w.fee, 'fee');
  const legs: SettleLeg[] = [{ account: systemAccountId(SYSTEM_ACCOUNTS.world(w.network)), units: subtractUnits(unitsFromRow(w.amount, 'amount'), fee) }];
  if (fee > 0n) legs.push({ account: systemAccountId(SYSTEM_ACCOUNTS.feeIncome()), units: fee });
  return legs;
}

/** Re-checks the completed withdrawals in doubt; returns how many it reopened. */
export async function recheckCompletedWithdrawals(pool: pg.Pool, chain: WithdrawalChainPort & Partial<HotWalletFees>, log: Logger): Promise<number> {
  const doubtful = await pool.query<Completed>(
    `SELECT ${selectColumns(withdrawals, 'w', FIELDS)}, w.xmin::text AS version FROM withdrawals w
      WHERE w.state = 'COMPLETED' AND w.in_doubt_since IS NOT NULL AND w.tx_hash IS NOT NULL AND w.network = ANY($2::text[])
      ORDER BY w.in_doubt_since LIMIT $1`,
    [BATCH, chain.networks],
  );
  let reopened = 0;
  for (const [network, rows] of Map.groupBy(doubtful.rows, (row) => row.network)) {
    const statuses = await chain.status(network, rows.map((r) => ({ txHash: r.txHash, outputIndex: 0 })));
    const required = chain.requiredConfirmations(network);
    for (const row of rows) {
      const status = statuses.get(transferKey({ txHash: row.txHash, outputIndex: 0 }));
      if (!status) continue;
      if (status.state === 'SEEN' && status.blockHeight !== null && status.confirmations >= required) {
        await pool.query(`UPDATE withdrawals SET in_doubt_since = NULL, block_height = $2, confirmations = $3 WHERE id = $1 AND state = 'COMPLETED' AND xmin = $4::text::xid`, [
          row.id,
          status.blockHeight,
          status.confirmations,
          row.version,
        ]);
        continue;
      }
      const tip = chain.replaceAfterBlocks?.(network) !== undefined && chain.tipHeight ? await chain.tipHeight(network) : null;
      if (await reopen(pool, row, status, tip)) {
        reopened++;
        log.warn({ withdrawal: row.id, network, tx: row.txHash, now: status.state, confirmations: status.state === 'SEEN' ? status.confirmations : undefined }, 'a completed withdrawal’s transaction left the chain: in flight again until it is mined again or fails');
      }
    }
  }
  return reopened;
}

/** COMPLETED → BROADCAST with its settlement (and network fee) taken back onto the hold, in one transaction. */
async function reopen(pool: pg.Pool, row: Completed, status: TransferStatus, tip: number | null): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const claimed = await client.query(`SELECT 1 FROM withdrawals WHERE id = $1 AND state = 'COMPLETED' AND xmin = $2::text::xid FOR UPDATE SKIP LOCKED`, [row.id, row.version]);
    if (claimed.rowCount === 0) return false;
    const round = row.reopened + 1;
    const coin = NETWORK_INFO[row.network].coin;
    const networkFee = unitsFromRowOrZero(row.networkFee, 'networkFee');
    const undo: Posting[] =
      networkFee > 0n
        ? [
            { account: systemAccountId(SYSTEM_ACCOUNTS.world(row.network)), currency: coin, bucket: 'AVAILABLE', amount: negateUnits(networkFee) },
            { account: await feePayerOf(client, orderEntryKey('withdrawal', row.id, 'networkFee', row.reopened), row.network), currency: coin, bucket: 'AVAILABLE', amount: networkFee },
          ]
        : [];
    await reopenOrder(client, { flow: 'withdrawal', id: row.id }, { account: row.walletAccountId, money: money(row.currency, unitsFromRow(row.amount, 'amount')), from: settleLegs(row), undo, round });
    await moveOrder(client, ORDER_TABLES.withdrawal, row.id, {
      from: 'COMPLETED',
      to: 'BROADCAST',
      set: {
        reopened: round,
        in_doubt_since: null,
        closed_at: null,
        network_fee: null,
        block_height: null,
        confirmations: status.state === 'SEEN' ? status.confirmations : 0,
        broadcast_height: tip,
      },
      history: { state: 'IN_PROGRESS' },
    });
    await notifyAccountChanged(client, row.walletAccountId);
    return true;
  });
}
