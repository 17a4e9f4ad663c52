/**
 * One nonce sequence per sending address, kept in PostgreSQL (`evm_nonces`, `evm_transactions`): signing takes the
 * address's row FOR UPDATE, so two processes never hand out the same nonce or skip one, and the signed transaction is
 * saved under its reference in the same transaction, so the same reference always gets the same nonce and bytes.
 * The next nonce is never below the node's pending count (an operator's own transaction from the address moves it on).
 */
import type pg from 'pg';
import { keccak256, type Hex } from 'viem';
import { inTransaction } from '../../../db/transaction.ts';

export type SignedTx = { reference: string; fromAddress: string; nonce: bigint; rawTx: Hex; txHash: Hex };

type Row = { reference: string; from_address: string; nonce: string; raw_tx: string; tx_hash: string };

const toSigned = (row: Row): SignedTx => ({ reference: row.reference, fromAddress: row.from_address, nonce: BigInt(row.nonce), rawTx: row.raw_tx as Hex, txHash: row.tx_hash as Hex });

export async function findSigned(db: pg.Pool | pg.PoolClient, by: { reference: string } | { txHash: string }): Promise<SignedTx | undefined> {
  const [column, value] = 'reference' in by ? ['reference', by.reference] : ['tx_hash', by.txHash.toLowerCase()];
  const result = await db.query<Row>(`SELECT reference, from_address, nonce, raw_tx, tx_hash FROM evm_transactions WHERE ${column} = $1`, [value]);
  return result.rows[0] && toSigned(result.rows[0]);
}

/**
 * The transaction signed for `reference`: the saved one, or a new one from `build` with the address's next nonce.
 * `pendingCount` is the node's count of the address's transactions, mempool included.
 */
export async function signOnce(
  pool: pg.Pool,
  input: { reference: string; fromAddress: string; pendingCount: () => Promise<number>; build: (nonce: bigint) => Promise<Hex> },
): Promise<SignedTx> {
  const saved = await findSigned(pool, input);
  if (saved) return saved;
  return inTransaction(pool, async (client) => {
    await client.query('INSERT INTO evm_nonces (address, next_nonce) VALUES ($1, 0) ON CONFLICT (address) DO NOTHING', [input.fromAddress]);
    const locked = await client.query<{ next_nonce: string }>('SELECT next_nonce FROM evm_nonces WHERE address = $1 FOR UPDATE', [input.fromAddress]);
    // Another process may have signed this reference while this one waited for the lock.
    const signedMeanwhile = await findSigned(client, input);
    if (signedMeanwhile) return signedMeanwhile;
    const stored = BigInt(locked.rows[0]?.next_nonce ?? '0');
    const onChain = BigInt(await input.pendingCount());
    const nonce = stored > onChain ? stored : onChain;
    const rawTx = await input.build(nonce);
    const txHash = keccak256(rawTx);
    await client.query('INSERT INTO evm_transactions (reference, from_address, nonce, raw_tx, tx_hash) VALUES ($1, $2, $3, $4, $5)', [
      input.reference,
      input.fromAddress,
      nonce.toString(),
      rawTx,
      txHash,
    ]);
    await client.query('UPDATE evm_nonces SET next_nonce = $2, updated_at = now() WHERE address = $1', [input.fromAddress, (nonce + 1n).toString()]);
    return { reference: input.reference, fromAddress: input.fromAddress, nonce, rawTx, txHash };
  });
}

/** Saves a transaction signed for a nonce already handed out (a replacement by fee): no new nonce is taken. */
export async function saveSigned(pool: pg.Pool, tx: SignedTx): Promise<SignedTx> {
  await pool.query(
    'INSERT INTO evm_transactions (reference, from_address, nonce, raw_tx, tx_hash) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (reference) DO NOTHING',
    [tx.reference, tx.fromAddress, tx.nonce.toString(), tx.rawTx, tx.txHash],
  );
  return (await findSigned(pool, { reference: tx.reference })) ?? tx;
}
