/**
 * The worker's side of withdrawals: PENDING → SIGNED (the signed transaction and its hash are recorded before
 * anything is sent) → BROADCAST → COMPLETED once the chain confirms it (the hold settles: amount less fee to the
 * network's world account, the fee to fee income), or FAILED (refused or dropped: the hold is released). Each row is
 * claimed with FOR UPDATE SKIP LOCKED in its own transaction, so several workers share the work and a crashed one
 * gives its rows back with its connection; a withdrawal found SIGNED after a crash is first looked up on the chain by
 * its hash: if the chain has it, it is only marked broadcast, never sent again.
 */
import type pg from 'pg';
import { BroadcastRejectedError, transferKey, type WithdrawalChainPort } from '../../adapters/chains/port.ts';
import { selectColumns } from '../../db/columns.ts';
import { withdrawals } from '../../db/schema/withdrawals.ts';
import { inTransaction } from '../../db/transaction.ts';
import { ALERT_AFTER_ATTEMPTS, type Logger } from '../../log.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { SYSTEM_ACCOUNTS, systemAccountId, type Queryable } from '../ledger.ts';
import { releaseOrder, settleOrder, type SettleLeg } from '../orders/entries.ts';
import { money } from '../../../lib/money.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';
import { NOW } from '../orders/sql-set.ts';

const SIGN_BATCH = 20;
const BROADCAST_BATCH = 20;
const CONFIRM_BATCH = 200;

const CLAIM_FIELDS = ['id', 'walletAccountId', 'currency', 'network', 'amount', 'fee', 'toAddress', 'rawTx', 'txHash', 'broadcastAttempts'] as const;
type Claimed = Pick<typeof withdrawals.$inferSelect, (typeof CLAIM_FIELDS)[number]>;
const CLAIM = `SELECT ${selectColumns(withdrawals, 'w', CLAIM_FIELDS)} FROM withdrawals w`;

/** PENDING → SIGNED: the hot wallet signs each withdrawal; the raw transaction and its hash are saved before any broadcast. */
export async function signWithdrawals(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger, batch = SIGN_BATCH): Promise<number> {
  return inTransaction(pool, async (client) => {
    // Only networks that are on: one without an adapter keeps its withdrawals (and their holds) until it is back.
    const due = await client.query<Claimed>(`${CLAIM} WHERE w.state = 'PENDING' AND w.network = ANY($2::text[]) ORDER BY w.created_at LIMIT $1 FOR UPDATE SKIP LOCKED`, [batch, chain.networks]);
    let signedCount = 0;
    for (const w of due.rows) {
      let signed: Awaited<ReturnType<WithdrawalChainPort['signWithdrawal']>>;
      try {
        signed = await chain.signWithdrawal({ reference: w.id, network: w.network, currency: w.currency, toAddress: w.toAddress, amount: BigInt(w.amount) - BigInt(w.fee) });
      } catch (error) {
        // One the signer refuses stays PENDING with its hold; the rest of the batch is signed and kept.
        log.warn({ err: error, withdrawal: w.id }, 'signing failed; it will be tried again');
        continue;
      }
      await moveOrder(client, ORDER_TABLES.withdrawal, w.id, { from: 'PENDING', to: 'SIGNED', set: { raw_tx: signed.rawTx, tx_hash: signed.txHash, from_address: signed.fromAddress, signed_at: NOW } });
      signedCount += 1;
    }
    return signedCount;
  });
}

/**
 * SIGNED → BROADCAST, one row at a time, fewest attempts first. The chain is asked for the hash first: a transaction
 * it already has (the previous worker died after sending it) is only marked, never sent twice. A refusal for good
 * fails the withdrawal; any other error counts an attempt and leaves it for a later run, behind the others.
 */
export async function broadcastWithdrawals(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger, batch = BROADCAST_BATCH): Promise<number> {
  let done = 0;
  const tried: string[] = [];
  for (let i = 0; i < batch; i += 1) {
    const outcome = await inTransaction(pool, async (client) => {
      const claimed = await client.query<Claimed>(
        `${CLAIM} WHERE w.state = 'SIGNED' AND w.id <> ALL($1::uuid[]) AND w.network = ANY($2::text[]) ORDER BY w.broadcast_attempts, w.signed_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [tried, chain.networks],
      );
      const w = claimed.rows[0];
      if (!w || !w.rawTx || !w.txHash) return 'idle' as const;
      tried.push(w.id);
      const ref = { txHash: w.txHash, outputIndex: 0 };
      try {
        // The node is asked first (and may be down as well as the broadcast): both failures count the same.
        const known = (await chain.status(w.network, [ref])).get(transferKey(ref));
        if (known?.state === 'SEEN') log.info({ withdrawal: w.id, tx: w.txHash }, 'withdrawal already on the chain: reconciled by its hash, not sent again');
        else await chain.broadcast(w.network, w.rawTx);
      } catch (error) {
        if (!(error instanceof BroadcastRejectedError)) {
          const attempts = w.broadcastAttempts + 1;
          await client.query('UPDATE withdrawals SET broadcast_attempts = $2 WHERE id = $1', [w.id, attempts]);
          // From the tenth failure on it is an error: the user's money is held and someone should look.
          log[attempts >= ALERT_AFTER_ATTEMPTS ? 'error' : 'warn']({ err: error, withdrawal: w.id, attempts }, 'broadcast failed; it will be tried again');
          return 'retry' as const;
        }
        await failWithdrawal(client, w, 'SIGNED', error.message);
        log.warn({ withdrawal: w.id, reason: error.message }, 'withdrawal refused by the network');
        return 'done' as const;
      }
      await moveOrder(client, ORDER_TABLES.withdrawal, w.id, {
        from: 'SIGNED',
        to: 'BROADCAST',
        set: { broadcast_at: NOW, broadcast_attempts: w.broadcastAttempts + 1, confirmations_required: chain.requiredConfirmations(w.network) },
        history: { state: 'IN_PROGRESS', set: { hash: w.txHash, from_address: { ifNull: (await chain.hotWalletAddress(w.network)) ?? null } } },
      });
      await notifyAccountChanged(client, w.walletAccountId);
      return 'done' as const;
    });
    if (outcome === 'idle') break;
    if (outcome === 'done') done += 1;
  }
  return done;
}

/** BROADCAST → COMPLETED once the chain has the confirmations; a transaction that left the chain → FAILED. */
export async function confirmWithdrawals(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger): Promise<number> {
  const fields = ['id', 'network', 'txHash', 'confirmations'] as const;
  const open = await pool.query<Pick<typeof withdrawals.$inferSelect, (typeof fields)[number]> & { txHash: string }>(
    `SELECT ${selectColumns(withdrawals, 'w', fields)} FROM withdrawals w WHERE w.state = 'BROADCAST' AND w.network = ANY($2::text[]) ORDER BY w.broadcast_at LIMIT $1`,
    [CONFIRM_BATCH, chain.networks],
  );
  let completed = 0;
  for (const [network, rows] of Map.groupBy(open.rows, (row) => row.network)) {
    const statuses = await chain.status(network, rows.map((r) => ({ txHash: r.txHash, outputIndex: 0 })));
    for (const row of rows) {
      const status = statuses.get(transferKey({ txHash: row.txHash, outputIndex: 0 }));
      if (!status) continue;
      if (status.state === 'DROPPED') {
        // A real adapter reports DROPPED only once the network has evicted the transaction for good.
        const failed = await claimBroadcast(pool, row.id, (client, w) => failWithdrawal(client, w, 'BROADCAST', 'The transaction left the chain'));
        if (failed) log.warn({ withdrawal: row.id, tx: row.txHash }, 'withdrawal dropped from the chain');
      } else if (status.confirmations >= chain.requiredConfirmations(network)) {
        if (await claimBroadcast(pool, row.id, (client, w) => completeWithdrawal(client, w, status.confirmations))) completed += 1;
      } else if (status.confirmations !== row.confirmations) {
        await pool.query(`UPDATE withdrawals SET confirmations = $2 WHERE id = $1 AND state = 'BROADCAST'`, [row.id, status.confirmations]);
      }
    }
  }
  return completed;
}

/** The worker's one job for withdrawals: each step in turn. */
export async function processWithdrawals(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger): Promise<void> {
  await signWithdrawals(pool, chain, log);
  await broadcastWithdrawals(pool, chain, log);
  await confirmWithdrawals(pool, chain, log);
}

async function claimBroadcast(pool: pg.Pool, id: string, work: (client: pg.PoolClient, w: Claimed) => Promise<void>): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const w = (await client.query<Claimed>(`${CLAIM} WHERE w.id = $1 AND w.state = 'BROADCAST' FOR UPDATE SKIP LOCKED`, [id])).rows[0];
    if (!w) return false;
    await work(client, w);
    return true;
  });
}

/** Settles the hold: what the recipient receives to the network's world account, the fee to fee income. */
async function completeWithdrawal(db: Queryable, w: Claimed, confirmations: number): Promise<void> {
  const held = money(w.currency, BigInt(w.amount));
  const fee = BigInt(w.fee);
  const legs: SettleLeg[] = [{ account: systemAccountId(SYSTEM_ACCOUNTS.world(w.network)), units: held.units - fee }];
  if (fee > 0n) legs.push({ account: systemAccountId(SYSTEM_ACCOUNTS.feeIncome()), units: fee });
  await settleOrder(db, { flow: 'withdrawal', id: w.id }, { account: w.walletAccountId, money: held, to: legs });
  await moveOrder(db, ORDER_TABLES.withdrawal, w.id, {
    from: 'BROADCAST',
    to: 'COMPLETED',
    set: { confirmations, closed_at: NOW },
    history: { state: 'COMPLETED', set: { hash: { ifNull: w.txHash } } },
  });
  await notifyAccountChanged(db, w.walletAccountId);
}

/** Gives the held amount back and shows the withdrawal as failed. */
async function failWithdrawal(db: Queryable, w: Claimed, from: 'SIGNED' | 'BROADCAST', reason: string): Promise<void> {
  await releaseOrder(db, { flow: 'withdrawal', id: w.id }, { account: w.walletAccountId, money: money(w.currency, BigInt(w.amount)) });
  await moveOrder(db, ORDER_TABLES.withdrawal, w.id, { from, to: 'FAILED', set: { failure_reason: reason, closed_at: NOW }, history: { state: 'FAILED', set: { failure_reason: reason } } });
  await notifyAccountChanged(db, w.walletAccountId);
}
