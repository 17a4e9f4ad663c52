/**
 * The custody's index of its outputs on one UTXO network, in PostgreSQL (utxo_outputs, utxo_change_addresses,
 * utxo_transactions): recording a block (its outputs to our addresses, its spends of our outputs), unwinding from a
 * height (a reorganisation, or a block read again), what is spendable or held, and the transactions we signed
 * (withdrawals, their replacements and CPFP children).
 */
import type pg from 'pg';
import { unitsFromRow, unitsFromRowOrZero } from '../../../db/amounts.ts';
import type { Coin } from './builder.ts';
import type { Units } from '../../../../lib/money.ts';

type Db = Pick<pg.ClientBase, 'query'>;

/** One output of a block that pays an address (as the node writes the address). */
export type BlockOutput = { txHash: string; vout: number; address: string; amount: Units };
export type BlockSpend = { txHash: string; vout: number; spentBy: string };
export type OwnedOutput = BlockOutput & { keyChain: number; keyIndex: number };

/** Which of `addresses` are the custody's on `network`: deposit addresses (chain 0) and change (chain 1). */
export async function ownedAddresses(db: Db, network: string, addresses: readonly string[]): Promise<Map<string, { keyChain: number; keyIndex: number }>> {
  if (addresses.length === 0) return new Map();
  const found = await db.query<{ address: string; key_chain: number; key_index: number }>(
    `SELECT address, 0 AS key_chain, derivation_index AS key_index FROM deposit_addresses WHERE network = $1 AND address = ANY($2::text[])
     UNION ALL
     SELECT address, 1 AS key_chain, derivation_index AS key_index FROM utxo_change_addresses WHERE network = $1 AND address = ANY($2::text[])`,
    [network, [...new Set(addresses)]],
  );
  return new Map(found.rows.map((r) => [r.address, { keyChain: r.key_chain, keyIndex: r.key_index }]));
}

/**
 * Records one block read at `height`: first forgets what the index holds from this height on (a block read again, or
 * the replaced blocks of a reorganisation), then its outputs to our addresses and its spends of our outputs.
 */
export async function recordBlock(db: Db, network: string, block: { height: number; hash: string }, outputs: readonly OwnedOutput[], spends: readonly BlockSpend[]): Promise<void> {
  await unwindFrom(db, network, block.height);
  if (outputs.length > 0) {
    await db.query(
      `INSERT INTO utxo_outputs (network, tx_hash, vout, address, amount, key_chain, key_index, block_height, block_hash)
       SELECT $1, * , $8::bigint, $9::text FROM unnest($2::text[], $3::int[], $4::text[], $5::numeric[], $6::int[], $7::int[])
       ON CONFLICT (network, tx_hash, vout) DO UPDATE SET block_height = excluded.block_height, block_hash = excluded.block_hash`,
      [
        network,
        outputs.map((o) => o.txHash),
        outputs.map((o) => o.vout),
        outputs.map((o) => o.address),
        outputs.map((o) => o.amount.toString()),
        outputs.map((o) => o.keyChain),
        outputs.map((o) => o.keyIndex),
        block.height,
        block.hash,
      ],
    );
  }
  if (outputs.length > 0) {
    // A block read again (a reorganisation, a scan repeated after a crash) keeps the reservations of our transactions.
    await db.query(
      `UPDATE utxo_outputs o SET reserved_by = t.reference FROM utxo_transactions t
        WHERE o.network = $1 AND o.block_height = $2 AND o.reserved_by IS NULL
          AND t.network = $1 AND t.released_at IS NULL AND (o.tx_hash || ':' || o.vout) = ANY(t.inputs)`,
      [network, block.height],
    );
  }
  if (spends.length > 0) {
    await db.query(
      `UPDATE utxo_outputs o SET spent_tx = s.spent_by, spent_height = $5
         FROM unnest($2::text[], $3::int[], $4::text[]) AS s(tx_hash, vout, spent_by)
        WHERE o.network = $1 AND o.tx_hash = s.tx_hash AND o.vout = s.vout`,
      [network, spends.map((s) => s.txHash), spends.map((s) => s.vout), spends.map((s) => s.spentBy), block.height],
    );
  }
}

/** Forgets outputs mined at `height` or above and spends mined there: those blocks are read again. */
export async function unwindFrom(db: Db, network: string, height: number): Promise<void> {
  await db.query('DELETE FROM utxo_outputs WHERE network = $1 AND block_height >= $2', [network, height]);
  await db.query('UPDATE utxo_outputs SET spent_tx = NULL, spent_height = NULL WHERE network = $1 AND spent_height >= $2', [network, height]);
}

/** Outputs with `confirmations` at tip `tip`, unspent and not reserved by a transaction of ours: what may be spent. */
export async function spendable(db: Db, network: string, tip: number, confirmations: number): Promise<Coin[]> {
  const rows = await db.query<{ tx_hash: string; vout: number; amount: string; key_chain: number; key_index: number }>(
    `SELECT tx_hash, vout, amount::text, key_chain, key_index FROM utxo_outputs
      WHERE network = $1 AND spent_tx IS NULL AND reserved_by IS NULL AND block_height <= $2
      ORDER BY amount DESC, tx_hash, vout`,
    [network, tip - confirmations + 1],
  );
  return rows.rows.map((r) => ({ txHash: r.tx_hash, vout: r.vout, amount: unitsFromRow(r.amount), keyChain: r.key_chain, keyIndex: r.key_index }));
}

/**
 * What the custody holds with `confirmations` at `tip`: outputs mined that deep, less those spent that deep (a spend
 * still shallower is not final, like the ledger entry that waits for the same confirmations).
 */
export async function heldUnits(db: Db, network: string, tip: number, confirmations: number): Promise<Units> {
  const deep = tip - confirmations + 1;
  const sum = await db.query<{ total: string | null }>(
    `SELECT sum(amount)::text AS total FROM utxo_outputs
      WHERE network = $1 AND block_height <= $2 AND (spent_height IS NULL OR spent_height > $2)`,
    [network, deep],
  );
  return unitsFromRowOrZero(sum.rows[0]?.total, 'total');
}

/** heldUnits address by address, with the key (chain 0 deposit, 1 change, and index) of each. */
export async function heldByAddress(db: Db, network: string, tip: number, confirmations: number): Promise<{ address: string; keyChain: number; keyIndex: number; amount: Units }[]> {
  const rows = await db.query<{ address: string; key_chain: number; key_index: number; total: string }>(
    `SELECT address, key_chain, key_index, sum(amount)::text AS total FROM utxo_outputs
      WHERE network = $1 AND block_height <= $2 AND (spent_height IS NULL OR spent_height > $2)
      GROUP BY address, key_chain, key_index HAVING sum(amount) > 0 ORDER BY address`,
    [network, tip - confirmations + 1],
  );
  return rows.rows.map((r) => ({ address: r.address, keyChain: r.key_chain, keyIndex: r.key_index, amount: unitsFromRow(r.total, 'total') }));
}

export type SignedRecord = {
  reference: string;
  attempt: number;
  txHash: string;
  rawTx: string;
  toAddress: string;
  amount: Units;
  fee: Units;
  /** Atomic units per virtual byte: a rate, not an amount. */
  feeRate: bigint;
  inputs: string[];
  changeIndex: number | null;
  /** A batch's payments in output order (`toAddress`/`amount`: the first address and the total); undefined for one payment. */
  payments?: readonly { address: string; amount: Units }[] | null;
  /** A CPFP child's: the unconfirmed transaction of ours it pays for (the reference's or the previous child); else null. */
  parentTx: string | null;
  /** Read back only: the node took it once (`accepted_at`), so peers may mine it; it is never released. */
  accepted?: boolean;
  /** Read back only: released (`released_at`). */
  released?: boolean;
};

const SIGNED_COLUMNS = `reference, attempt, tx_hash AS "txHash", raw_tx AS "rawTx", to_address AS "toAddress", amount::text, fee::text, fee_rate::text AS "feeRate", inputs, change_index AS "changeIndex", payments, parent_tx AS "parentTx", accepted_at IS NOT NULL AS accepted, released_at IS NOT NULL AS released`;
type SignedRow = Omit<SignedRecord, 'amount' | 'fee' | 'feeRate' | 'payments'> & { amount: string; fee: string; feeRate: string; payments: { address: string; amount: string }[] | null };
const fromRow = (r: SignedRow): SignedRecord => ({
  ...r,
  amount: unitsFromRow(r.amount),
  fee: unitsFromRow(r.fee, 'fee'),
  // A rate (atomic units per virtual byte), not an amount.
  feeRate: BigInt(r.feeRate),
  payments: r.payments?.map((p) => ({ address: p.address, amount: unitsFromRow(p.amount, 'payments.amount') })) ?? null,
});

/** The newest transaction signed for `reference` (the first or a replacement the node took; not a CPFP child), if any. */
export async function latestSigned(db: Db, reference: string): Promise<SignedRecord | undefined> {
  const rows = await db.query<SignedRow>(
    `SELECT ${SIGNED_COLUMNS} FROM utxo_transactions WHERE reference = $1 AND parent_tx IS NULL AND (attempt = 0 OR released_at IS NULL) ORDER BY attempt DESC LIMIT 1`,
    [reference],
  );
  return rows.rows[0] && fromRow(rows.rows[0]);
}

/** The next free attempt number of `reference` (replacements and CPFP children share the sequence). */
export async function nextAttempt(db: Db, reference: string): Promise<number> {
  const next = await db.query<{ next: number }>('SELECT coalesce(max(attempt) + 1, 0) AS next FROM utxo_transactions WHERE reference = $1', [reference]);
  return next.rows[0]?.next ?? 0;
}

/** Replacements of `reference` signed after `attempt` (not CPFP children), oldest first; `refused` too: those the node refused. */
export async function laterAttempts(db: Db, reference: string, attempt: number, options: { refused?: boolean } = {}): Promise<SignedRecord[]> {
  const rows = await db.query<SignedRow>(
    `SELECT ${SIGNED_COLUMNS} FROM utxo_transactions WHERE reference = $1 AND attempt > $2 AND parent_tx IS NULL AND ($3 OR released_at IS NULL) ORDER BY attempt`,
    [reference, attempt, options.refused ?? false],
  );
  return rows.rows.map(fromRow);
}

/**
 * The CPFP children paying for each of `hashes`, transitively (a child of a child), each with the hash it
 * ultimately pays for (`root`), in the order they were made.
 */
export async function cpfpChildren(db: Db, network: string, hashes: readonly string[], options: { released?: boolean } = {}): Promise<(SignedRecord & { root: string })[]> {
  if (hashes.length === 0) return [];
  const live = options.released ? '' : ' AND t.released_at IS NULL';
  const rows = await db.query<SignedRow & { root: string }>(
    `WITH RECURSIVE chain AS (
       SELECT t.*, t.parent_tx AS root FROM utxo_transactions t WHERE t.network = $1 AND t.parent_tx = ANY($2::text[])${live}
       UNION ALL
       SELECT t.*, c.root FROM utxo_transactions t JOIN chain c ON t.network = c.network AND t.parent_tx = c.tx_hash${live}
     )
     SELECT ${SIGNED_COLUMNS}, root FROM chain ORDER BY attempt`,
    [network, [...hashes]],
  );
  return rows.rows.map((r) => ({ ...fromRow(r), root: r.root }));
}

/**
 * Marks a replacement or CPFP child the node refused as released: it reserves nothing (a replacement's inputs stay
 * reserved by the transaction it would have replaced), is never offered again, and is never handed to the caller.
 * One the node ever took (`accepted_at`) is never released: peers may still mine it. True when it was released.
 */
export async function releaseBump(db: Db, network: string, txHash: string): Promise<boolean> {
  const released = await db.query('UPDATE utxo_transactions SET released_at = coalesce(released_at, now()) WHERE network = $1 AND tx_hash = $2 AND attempt > 0 AND accepted_at IS NULL', [network, txHash]);
  return (released.rowCount ?? 0) > 0;
}

/** A CPFP child released after its parent was mined: the parent's change it would have spent is free again. */
export async function freeInputs(db: Db, network: string, record: Pick<SignedRecord, 'reference' | 'inputs'>): Promise<void> {
  await db.query('UPDATE utxo_outputs SET reserved_by = NULL WHERE network = $1 AND reserved_by = $2 AND tx_hash || \':\' || vout = ANY($3::text[])', [network, record.reference, record.inputs]);
}

/**
 * Records that the node took (or holds, or mined) a transaction of ours: it is never released from now on; one
 * released earlier is live again and reserves its inputs again.
 */
export async function markAccepted(db: Db, network: string, record: Pick<SignedRecord, 'txHash' | 'reference' | 'inputs'>): Promise<void> {
  const updated = await db.query(
    'UPDATE utxo_transactions SET accepted_at = coalesce(accepted_at, now()), released_at = NULL WHERE network = $1 AND tx_hash = $2 AND (accepted_at IS NULL OR released_at IS NOT NULL)',
    [network, record.txHash],
  );
  if ((updated.rowCount ?? 0) === 0) return;
  await db.query('UPDATE utxo_outputs SET reserved_by = $2 WHERE network = $1 AND reserved_by IS NULL AND tx_hash || \':\' || vout = ANY($3::text[])', [network, record.reference, record.inputs]);
}

/** The change index of a CPFP child of `parentTx` the node refused (never took): a retry pays the same address. */
export async function refusedChildChangeIndex(db: Db, network: string, parentTx: string): Promise<number | undefined> {
  const rows = await db.query<{ change_index: number }>(
    `SELECT change_index FROM utxo_transactions WHERE network = $1 AND parent_tx = $2 AND released_at IS NOT NULL AND accepted_at IS NULL AND change_index IS NOT NULL ORDER BY attempt DESC LIMIT 1`,
    [network, parentTx],
  );
  return rows.rows[0]?.change_index;
}

/**
 * Marks `reference`'s fee-bump alert as raised (on its transaction `txHash`); true only the first time for the
 * reference, so the alert is logged once per withdrawal whatever its later attempts.
 */
export async function claimFeeAlert(db: Db, network: string, reference: string, txHash: string): Promise<boolean> {
  const claimed = await db.query(
    `UPDATE utxo_transactions SET fee_alerted_at = now() WHERE network = $1 AND tx_hash = $2
        AND NOT EXISTS (SELECT 1 FROM utxo_transactions WHERE reference = $3 AND fee_alerted_at IS NOT NULL)`,
    [network, txHash, reference],
  );
  return (claimed.rowCount ?? 0) > 0;
}

export async function signedByHash(db: Db, network: string, hashes: readonly string[]): Promise<Map<string, SignedRecord>> {
  const rows = await db.query<SignedRow>(`SELECT ${SIGNED_COLUMNS} FROM utxo_transactions WHERE network = $1 AND tx_hash = ANY($2::text[])`, [network, [...hashes]]);
  return new Map(rows.rows.map((r) => [r.txHash, fromRow(r)]));
}

/** Stores a signed transaction and reserves its inputs for its reference. */
export async function storeSigned(db: Db, network: string, record: SignedRecord): Promise<void> {
  await db.query(
    `INSERT INTO utxo_transactions (reference, attempt, network, tx_hash, raw_tx, to_address, amount, fee, fee_rate, inputs, change_index, parent_tx, payments)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb)`,
    [
      record.reference,
      record.attempt,
      network,
      record.txHash,
      record.rawTx,
      record.toAddress,
      record.amount.toString(),
      record.fee.toString(),
      record.feeRate.toString(),
      record.inputs,
      record.changeIndex,
      record.parentTx,
      record.payments ? JSON.stringify(record.payments.map((p) => ({ address: p.address, amount: p.amount.toString() }))) : null,
    ],
  );
  await db.query(
    `UPDATE utxo_outputs SET reserved_by = $2 WHERE network = $1 AND tx_hash || ':' || vout = ANY($3::text[])`,
    [network, record.reference, record.inputs],
  );
}

/** A fresh change index (0 is the hot wallet's shown address, used for change too) and its address, recorded. */
export async function nextChangeIndex(db: Db, network: string): Promise<number> {
  const next = await db.query<{ next: number }>('SELECT coalesce(max(derivation_index) + 1, 0) AS next FROM utxo_change_addresses WHERE network = $1', [network]);
  return next.rows[0]?.next ?? 0;
}

export async function recordChangeAddress(db: Db, network: string, index: number, address: string): Promise<void> {
  await db.query('INSERT INTO utxo_change_addresses (network, derivation_index, address) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [network, index, address]);
}
