/**
 * Reading the devnet: transfers after a cursor, confirmations by hash, heights and one transaction for its explorer.
 * Its cursor is the transfers' sequence number, not a block: the devnet never reorganises (see port.ts, ScanBatch).
 */
import type pg from 'pg';
import { formatUnits } from '../../../lib/amount.ts';
import { findCoin, type Network } from '../../../lib/currencies.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import { HEIGHT } from './devnet-clock.ts';
import { transferKey, type ChainPort, type ChainTransfer, type DevnetControls, type TransferStatus } from './port.ts';

/** Transfers younger than this are scanned again: one committed late under an earlier sequence number is not missed. */
const RESCAN_WINDOW = "interval '5 seconds'";

type TransferRow = {
  seq: string;
  network: Network;
  tx_hash: string;
  output_index: number;
  currency: string;
  from_address: string;
  to_address: string;
  amount: string;
  block_height: string;
  height: string;
  settled: boolean;
  created_at: Date;
};

export type DevnetReader = Pick<ChainPort, 'scan' | 'status'> & Pick<DevnetControls, 'heights' | 'findTransaction'>;

export function createDevnetReader(pool: pg.Pool, context: { explorer: string; confirmations: Record<Network, number> }): DevnetReader {
  return {
    async scan(network, cursor, limit) {
      const result = await pool.query<TransferRow>(
        `SELECT t.seq, t.network, t.tx_hash, t.output_index, t.currency, t.from_address, t.to_address, t.amount, t.block_height,
                ${HEIGHT} AS height, t.created_at < clock_timestamp() - ${RESCAN_WINDOW} AS settled, t.created_at
           FROM devnet_transactions t JOIN devnet_chains c ON c.network = t.network
          WHERE t.network = $1 AND t.seq > $2
          ORDER BY t.seq LIMIT $3`,
        [network, cursor ?? '0', limit],
      );
      let next = cursor;
      let contiguous = true;
      const transfers: ChainTransfer[] = result.rows.map((row) => {
        contiguous &&= row.settled;
        if (contiguous) next = row.seq;
        const mined = Number(row.block_height) <= Number(row.height);
        return {
          network: row.network,
          txHash: row.tx_hash,
          outputIndex: row.output_index,
          currency: row.currency,
          fromAddress: row.from_address,
          toAddress: row.to_address,
          amount: unitsFromRow(row.amount),
          blockHeight: mined ? Number(row.block_height) : null,
        };
      });
      return { transfers, cursor: next };
    },

    async status(network, refs) {
      const statuses = new Map<string, TransferStatus>();
      if (refs.length === 0) return statuses;
      const result = await pool.query<{ tx_hash: string; output_index: number; block_height: string; height: string }>(
        `SELECT t.tx_hash, t.output_index, t.block_height, ${HEIGHT} AS height
           FROM devnet_transactions t JOIN devnet_chains c ON c.network = t.network
           JOIN unnest($2::text[], $3::int[]) AS r(tx_hash, output_index) ON r.tx_hash = t.tx_hash AND r.output_index = t.output_index
          WHERE t.network = $1`,
        [network, refs.map((r) => r.txHash), refs.map((r) => r.outputIndex)],
      );
      for (const ref of refs) statuses.set(transferKey(ref), { state: 'DROPPED' });
      for (const row of result.rows) {
        const depth = Number(row.height) - Number(row.block_height) + 1;
        statuses.set(transferKey({ txHash: row.tx_hash, outputIndex: row.output_index }), {
          state: 'SEEN',
          blockHeight: depth > 0 ? Number(row.block_height) : null,
          confirmations: Math.max(0, depth),
        });
      }
      return statuses;
    },

    async heights() {
      const result = await pool.query<{ network: string; height: string }>(`SELECT c.network, ${HEIGHT} AS height FROM devnet_chains c`);
      return Object.fromEntries(result.rows.map((r) => [r.network, Number(r.height)]));
    },

    async findTransaction(txHash) {
      const result = await pool.query<TransferRow>(
        `SELECT t.seq, t.network, t.tx_hash, t.output_index, t.currency, t.from_address, t.to_address, t.amount, t.block_height,
                ${HEIGHT} AS height, true AS settled, t.created_at
           FROM devnet_transactions t JOIN devnet_chains c ON c.network = t.network
          WHERE t.tx_hash = $1 ORDER BY t.output_index LIMIT 1`,
        [txHash],
      );
      const row = result.rows[0];
      const coin = row && findCoin(row.currency);
      if (!row || !coin) return undefined;
      const depth = Number(row.height) - Number(row.block_height) + 1;
      return {
        network: row.network,
        currency: row.currency,
        txHash: row.tx_hash,
        outputIndex: row.output_index,
        fromAddress: row.from_address,
        toAddress: row.to_address,
        amount: formatUnits(unitsFromRow(row.amount), coin.decimals),
        blockHeight: Number(row.block_height),
        explorerUrl: context.explorer.replace('{tx}', row.tx_hash),
        height: Number(row.height),
        confirmations: Math.max(0, depth),
        requiredConfirmations: context.confirmations[row.network],
        createdAt: row.created_at,
      };
    },
  };
}
