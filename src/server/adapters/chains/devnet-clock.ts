/**
 * The devnet's block clock: height = (now - genesis) / block time, read from the database's clock so every process
 * agrees; `devnet_chains` holds genesis and block time per network.
 */
import type pg from 'pg';
import { NETWORKS } from '../../../lib/currencies.ts';

/** SQL for the current height of chain `c` (a devnet_chains row). */
export const HEIGHT = `floor(extract(epoch from (clock_timestamp() - c.genesis_at)) * 1000 / c.block_ms)::bigint`;

/** Creates the chains; `rebase` moves genesis so a changed block time keeps heights continuous. */
export async function initDevnetChains(pool: pg.Pool, blockMs: number, rebase: boolean): Promise<void> {
  await pool.query(
    `INSERT INTO devnet_chains (network, genesis_at, block_ms) SELECT unnest($1::text[]), clock_timestamp(), $2
     ON CONFLICT (network) DO NOTHING`,
    [NETWORKS, blockMs],
  );
  if (!rebase) return;
  await pool.query(
    `UPDATE devnet_chains c
        SET genesis_at = clock_timestamp() - (${HEIGHT} * $1::bigint) * interval '1 millisecond', block_ms = $1
      WHERE c.block_ms <> $1`,
    [blockMs],
  );
}

/** Inserts a transfer mined in the next block of its network's chain; its block height, or undefined when nothing was inserted. */
export async function insertDevnetTransfer(
  pool: pg.Pool,
  transfer: { network: string; txHash: string; currency: string; from: string; to: string; amount: string },
): Promise<number | undefined> {
  const result = await pool.query<{ block_height: string }>(
    `INSERT INTO devnet_transactions (network, tx_hash, output_index, currency, from_address, to_address, amount, block_height)
     SELECT c.network, $2, 0, $3, $4, $5, $6, ${HEIGHT} + 1 FROM devnet_chains c WHERE c.network = $1
     ON CONFLICT (network, tx_hash, output_index) DO NOTHING RETURNING block_height`,
    [transfer.network, transfer.txHash, transfer.currency, transfer.from, transfer.to, transfer.amount],
  );
  const row = result.rows[0];
  return row ? Number(row.block_height) : undefined;
}
