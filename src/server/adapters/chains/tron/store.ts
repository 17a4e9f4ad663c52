/**
 * The adapter's signed transactions by reference (table tron_transactions): the first one signed for a reference
 * is the one kept, whoever signed it (two workers racing converge on one row).
 */
import type pg from 'pg';
import { unitsFromRow } from '../../../db/amounts.ts';
import type { Units } from '../../../../lib/money.ts';

export type KeptTransaction = { reference: string; txHash: string; rawTx: string; fromAddress: string; expiresAt: number; fee: Units };

type Row = { reference: string; tx_hash: string; raw_tx: string; from_address: string; expires_at: string; fee_estimate: string };

const COLUMNS = 'reference, tx_hash, raw_tx, from_address, expires_at, fee_estimate';

const kept = (row: Row | undefined): KeptTransaction | undefined =>
  row && { reference: row.reference, txHash: row.tx_hash, rawTx: row.raw_tx, fromAddress: row.from_address, expiresAt: Number(row.expires_at), fee: unitsFromRow(row.fee_estimate, 'fee_estimate') };

export type TronStore = {
  byReference(reference: string): Promise<KeptTransaction | undefined>;
  byHash(txHash: string): Promise<KeptTransaction | undefined>;
  /**
   * Keeps `next` for its reference unless another one is kept already (then that one is returned), or replaces the
   * kept one whose hash is `replacing`. Undefined when `next`'s hash is already kept for another reference.
   */
  keep(next: KeptTransaction, replacing?: string): Promise<KeptTransaction | undefined>;
};

export function createTronStore(pool: pg.Pool): TronStore {
  const byReference = async (reference: string) => kept((await pool.query<Row>(`SELECT ${COLUMNS} FROM tron_transactions WHERE reference = $1`, [reference])).rows[0]);
  return {
    byReference,
    byHash: async (txHash) => kept((await pool.query<Row>(`SELECT ${COLUMNS} FROM tron_transactions WHERE tx_hash = $1`, [txHash])).rows[0]),
    async keep(next, replacing) {
      const values = [next.reference, next.txHash, next.rawTx, next.fromAddress, next.expiresAt, next.fee.toString()];
      if (replacing !== undefined) {
        await pool.query(
          `UPDATE tron_transactions SET tx_hash = $2, raw_tx = $3, from_address = $4, expires_at = $5, fee_estimate = $6, created_at = now()
            WHERE reference = $1 AND tx_hash = $7 AND NOT EXISTS (SELECT 1 FROM tron_transactions WHERE tx_hash = $2)`,
          [...values, replacing],
        );
      } else {
        await pool.query(`INSERT INTO tron_transactions (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, values);
      }
      const now = await byReference(next.reference);
      // Still the replaced one: the new hash belongs to another reference (same transfer, same block, same millisecond).
      return now && now.txHash !== replacing ? now : undefined;
    },
  };
}
