/**
 * Signed external messages of the custody's wallets, exactly once per reference (a withdrawal's id, a sweep's
 * reference), kept in PostgreSQL (`ton_messages`).
 *
 * A wallet v4R2 takes an external message only when its seqno is the wallet's current one and its `valid_until` is
 * not past. So:
 * - the same reference gives the stored message again (same bytes, same hash): sending it twice is harmless, the
 *   contract refuses the second by seqno;
 * - a new message for a wallet takes the seqno after every message of that wallet that may still land (the chain's
 *   seqno at least); allocation holds a transaction-scoped advisory lock on the wallet, so two processes never give
 *   one seqno to two live messages;
 * - a message is dead once the chain proves it can no longer land: it is not on the chain and the newest masterchain
 *   block is more than `GRACE_SECONDS` past its `valid_until` (no later block can take it; the grace covers shard
 *   blocks committed late). Only then is a reference's message rebuilt (a new attempt: new seqno, new
 *   `valid_until`, new hash), and only then may its seqno be given again.
 * The hash is the external-in message cell's hash: known before sending, what v2 sendBoc answers and what toncenter
 * v3 finds the wallet's transaction by (`transactionsByMessage?direction=in`).
 */
import type pg from 'pg';
import { beginCell, Cell, external, loadMessage, storeMessage, type MessageRelaxed } from '@ton/core';
import { inTransaction } from '../../../db/transaction.ts';
import type { TonApi, V3Transaction } from './api.ts';
import type { TonWallet } from './wallets.ts';

/** How long a signed message stays valid: the worker signs and sends in one run, so minutes are plenty. */
export const VALID_SECONDS = 300;
/** How far past `valid_until` the newest masterchain block must be before a message counts as dead. */
export const GRACE_SECONDS = 60;

export type StoredMessage = { reference: string; attempt: number; wallet: string; seqno: number; validUntil: number; hash: string; boc: string };

type Row = { reference: string; attempt: number; wallet: string; seqno: number; valid_until: number; message_hash: string; boc: string };
const COLUMNS = 'reference, attempt, wallet, seqno, valid_until, message_hash, boc';
const toStored = (row: Row): StoredMessage => ({ reference: row.reference, attempt: row.attempt, wallet: row.wallet, seqno: row.seqno, validUntil: row.valid_until, hash: row.message_hash, boc: row.boc });

export type TonMessages = ReturnType<typeof createTonMessages>;

export function createTonMessages(pool: pg.Pool, api: TonApi) {
  const latest = async (db: pg.Pool | pg.PoolClient, reference: string): Promise<StoredMessage | undefined> => {
    const found = await db.query<Row>(`SELECT ${COLUMNS} FROM ton_messages WHERE reference = $1 ORDER BY attempt DESC LIMIT 1`, [reference]);
    return found.rows[0] && toStored(found.rows[0]);
  };

  /** The transaction the message started, if the chain has it. */
  const landed = (message: StoredMessage): Promise<V3Transaction | undefined> => api.transactionByInMessage(message.hash);

  /** Not on the chain, and the chain's time is past its `valid_until` by the grace: it can never land. */
  async function isDead(message: StoredMessage, chainTime?: number): Promise<boolean> {
    const now = chainTime ?? (await api.tip()).utime;
    if (now <= message.validUntil + GRACE_SECONDS) return false;
    return (await landed(message)) === undefined;
  }

  /**
   * The signed message of `reference` from `wallet` carrying `messages`: the stored one while it may still land,
   * else a new attempt with the next free seqno.
   */
  async function prepare(reference: string, wallet: TonWallet, messages: MessageRelaxed[], sendMode: number): Promise<StoredMessage> {
    const stored = await latest(pool, reference);
    const tip = await api.tip();
    if (stored && !(await isDead(stored, tip.utime))) return stored;
    const state = await api.walletInformation(wallet.raw);
    const chainSeqno = state.status === 'active' ? state.seqno : 0;
    return inTransaction(pool, async (client) => {
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('ton_messages:' || $1))`, [wallet.raw]);
      // Another process may have made the new attempt meanwhile.
      const again = await latest(client, reference);
      if (again && again.attempt !== stored?.attempt) return again;
      // Messages of this wallet that may still land hold their seqno.
      const live = await client.query<{ top: number | null }>(`SELECT max(seqno) AS top FROM ton_messages WHERE wallet = $1 AND seqno >= $2 AND valid_until + $3 >= $4`, [
        wallet.raw,
        chainSeqno,
        GRACE_SECONDS,
        tip.utime,
      ]);
      const top = live.rows[0]?.top;
      const seqno = top === null || top === undefined ? chainSeqno : Math.max(chainSeqno, top + 1);
      // The chain's clock, not ours: the contract compares valid_until with the block's time.
      const validUntil = tip.utime + VALID_SECONDS;
      const body = wallet.contract.createTransfer({ seqno, secretKey: wallet.keys.secretKey, messages, sendMode, timeout: validUntil });
      // An undeployed wallet (a deposit wallet before its first sweep) deploys itself from the StateInit.
      const init = state.status === 'active' ? undefined : wallet.contract.init;
      const cell = beginCell()
        .store(storeMessage(external({ to: wallet.contract.address, init, body })))
        .endCell();
      const row: StoredMessage = { reference, attempt: (stored?.attempt ?? 0) + 1, wallet: wallet.raw, seqno, validUntil, hash: cell.hash().toString('hex'), boc: cell.toBoc().toString('base64') };
      await client.query(`INSERT INTO ton_messages (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [row.reference, row.attempt, row.wallet, row.seqno, row.validUntil, row.hash, row.boc]);
      return row;
    });
  }

  async function byHashes(hashes: readonly string[]): Promise<Map<string, StoredMessage>> {
    const found = await pool.query<Row>(`SELECT ${COLUMNS} FROM ton_messages WHERE message_hash = ANY($1::text[])`, [hashes]);
    return new Map(found.rows.map((row) => [row.message_hash, toStored(row)]));
  }

  return { prepare, byHashes, isDead, landed, latest: (reference: string) => latest(pool, reference) };
}

/** The hash of a base64 BoC of an external message: what the custody stores as the transaction's hash. */
export function messageHashOfBoc(boc: string): string {
  const cell = Cell.fromBase64(boc);
  loadMessage(cell.beginParse());
  return cell.hash().toString('hex');
}
