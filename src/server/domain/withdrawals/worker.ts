/**
 * The worker's side of withdrawals: PENDING → SIGNED (the signed transaction and its hash are recorded before
 * anything is sent) → BROADCAST → COMPLETED once the chain confirms it (the hold settles: amount less fee to the
 * network's world account, the fee to fee income; what the network charged is booked from its payer, the gas float or NETWORK_FEES, to WORLD), or
 * FAILED (refused or dropped: the hold is released; a transaction mined but failed still books its network fee).
 * A transaction still unmined after the network's `replaceAfterBlocks` is replaced (`replaceByFee`): the new one is
 * recorded before it is sent, the earlier hashes are kept, and whichever of them is mined completes the withdrawal. Each row is
 * claimed with FOR UPDATE SKIP LOCKED in its own transaction, so several workers share the work and a crashed one
 * gives its rows back with its connection; a withdrawal found SIGNED after a crash is first looked up on the chain by
 * its hash: if the chain has it, it is only marked broadcast, never sent again. A COMPLETED one whose transaction a
 * reorganisation took off the chain is BROADCAST again (reopen.ts) and follows the same rules from there.
 * Where the network batches (UTXO_BATCH_SECONDS), PENDING ones are first gathered into a batch and signed as one
 * transaction (formBatches, signBatches); each member then follows these rules with the shared transaction, a
 * replacement moves all of them, and the network fee is booked in parts, one per member.
 */
import type pg from 'pg';
import { BroadcastRejectedError, FeeBumpBlockedError, HotWalletShortError, transferKey, type HotWalletFees, type WithdrawalChainPort } from '../../adapters/chains/port.ts';
import { selectColumns } from '../../db/columns.ts';
import { withdrawals } from '../../db/schema/withdrawals.ts';
import { inTransaction } from '../../db/transaction.ts';
import { ALERT_AFTER_ATTEMPTS, type Logger } from '../../log.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { networkFeePayer, SYSTEM_ACCOUNTS, systemAccountId, type Queryable } from '../ledger.ts';
import { NETWORK_INFO, type Network } from '../../../lib/currencies.ts';
import { releaseOrder, settleOrder, transferForOrder } from '../orders/entries.ts';
import { recheckCompletedWithdrawals, settleLegs } from './reopen.ts';
import { money, subtractUnits, sumUnits, unitsOf, type Units } from '../../../lib/money.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';
import { NOW } from '../orders/sql-set.ts';

const SIGN_BATCH = 20;
const BROADCAST_BATCH = 20;
const CONFIRM_BATCH = 200;

const SIGN_BATCHES = 5;

const CLAIM_FIELDS = ['id', 'walletAccountId', 'currency', 'network', 'amount', 'fee', 'toAddress', 'rawTx', 'txHash', 'broadcastAttempts', 'replacedTxHashes', 'broadcastHeight', 'reopened', 'batchId', 'waitingForFundsSince'] as const;
type Claimed = Pick<typeof withdrawals.$inferSelect, (typeof CLAIM_FIELDS)[number]>;

/** What the recipient receives: the amount held less our fee (the schema's rule, `amount - fee`). */
const paidOut = (w: Pick<Claimed, 'amount' | 'fee'>): Units => subtractUnits(unitsFromRow(w.amount), unitsFromRow(w.fee, 'fee'));
const CLAIM = `SELECT ${selectColumns(withdrawals, 'w', CLAIM_FIELDS)} FROM withdrawals w`;

/** The networks whose withdrawals are paid in batches (UTXO_BATCH_SECONDS above 0 and an adapter that signs them), with the least output each batches. */
function batchingNetworks(chain: WithdrawalChainPort): { network: Network; minOutput: bigint }[] {
  if (!chain.signBatch) return [];
  return chain.networks.flatMap((network) => {
    const batching = chain.batching?.(network);
    return batching ? [{ network, minOutput: batching.minOutput }] : [];
  });
}

/**
 * PENDING → SIGNED: the hot wallet signs each withdrawal; the raw transaction and its hash are saved before any
 * broadcast. Withdrawals of a network that batches, and those already in a batch, are left to `signBatches`.
 */
export async function signWithdrawals(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger, batch = SIGN_BATCH): Promise<number> {
  const batching = batchingNetworks(chain);
  return inTransaction(pool, async (client) => {
    // Only networks that are on: one without an adapter keeps its withdrawals (and their holds) until it is back.
    const due = await client.query<Claimed>(
      `${CLAIM} WHERE w.state = 'PENDING' AND w.batch_id IS NULL AND w.network = ANY($2::text[])
         AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::numeric[]) b(network, min_output) WHERE b.network = w.network AND w.amount - w.fee >= b.min_output)
         AND (NOT $5::boolean OR w.approval_seal IS NOT NULL)
       ORDER BY w.created_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      // Where the signer signs only sealed ones, one from before the seal waits for an operator's re-approval (review.ts).
      [batch, chain.networks, batching.map((b) => b.network), batching.map((b) => b.minOutput.toString()), chain.signsSealedOnly === true],
    );
    let signedCount = 0;
    const funds = hotFunds(chain);
    for (const w of due.rows) {
      const amount = paidOut(w);
      // One waiting for the hot wallet is signed again only once the hot wallet holds what it pays.
      if (w.waitingForFundsSince !== null && ((await funds(w.network, w.currency)) ?? amount) < amount) continue;
      let signed: Awaited<ReturnType<WithdrawalChainPort['signWithdrawal']>>;
      try {
        signed = await chain.signWithdrawal({ reference: w.id, network: w.network, currency: w.currency, toAddress: w.toAddress, amount });
      } catch (error) {
        if (error instanceof HotWalletShortError) {
          await waitForFunds(client, [w], log, error);
          continue;
        }
        // One the signer refuses stays PENDING with its hold; the rest of the batch is signed and kept.
        log.warn({ err: error, withdrawal: w.id }, 'signing failed; it will be tried again');
        continue;
      }
      await moveOrder(client, ORDER_TABLES.withdrawal, w.id, { from: 'PENDING', to: 'SIGNED', set: { raw_tx: signed.rawTx, tx_hash: signed.txHash, from_address: signed.fromAddress, signed_at: NOW, waiting_for_funds_since: null } });
      if (w.waitingForFundsSince !== null) await notifyAccountChanged(client, w.walletAccountId);
      signedCount += 1;
    }
    return signedCount;
  });
}

/**
 * Gathers the PENDING withdrawals of each network that batches into a batch once the oldest has waited the network's
 * `seconds` or `maxOutputs` of them wait: one transaction creates the batch row and points up to `maxOutputs` of
 * them (claimed FOR UPDATE SKIP LOCKED, oldest first) at it. A crash before it commits leaves them as they were.
 */
export async function formBatches(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger): Promise<number> {
  let formed = 0;
  for (const { network } of batchingNetworks(chain)) {
    const batching = chain.batching?.(network);
    if (!batching) continue;
    // Several batches a round when more are due than one pays.
    for (let round = 0; round < SIGN_BATCHES; round += 1) {
      if ((await formBatch(pool, network, { ...batching, sealedOnly: chain.signsSealedOnly === true }, log)) === 0) break;
      formed += 1;
    }
  }
  return formed;
}

/** One batch of `network`'s due withdrawals; how many it claimed (0: none due). */
async function formBatch(pool: pg.Pool, network: Network, batching: { seconds: number; maxOutputs: number; minOutput: bigint; sealedOnly: boolean }, log: Logger): Promise<number> {
  return inTransaction(pool, async (client) => {
    // `sealedOnly`: one unsealed member would have the signer refuse the whole batch; it waits for re-approval instead.
    const due = await client.query<{ id: string; ripe: boolean }>(
      `SELECT w.id, w.created_at <= now() - make_interval(secs => $3) AS ripe FROM withdrawals w
        WHERE w.state = 'PENDING' AND w.batch_id IS NULL AND w.network = $1 AND w.amount - w.fee >= $4::numeric
          AND (NOT $5::boolean OR w.approval_seal IS NOT NULL)
        ORDER BY w.created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [network, batching.maxOutputs, batching.seconds, batching.minOutput.toString(), batching.sealedOnly],
    );
    if (due.rows.length === 0 || (!due.rows[0]?.ripe && due.rows.length < batching.maxOutputs)) return 0;
    const ids = due.rows.map((r) => r.id);
    const created = await client.query<{ id: string }>('INSERT INTO withdrawal_batches (network, size) VALUES ($1, $2) RETURNING id', [network, ids.length]);
    await client.query(`UPDATE withdrawals SET batch_id = $2 WHERE id = ANY($1::uuid[]) AND state = 'PENDING'`, [ids, created.rows[0]?.id]);
    log.info({ network, batch: created.rows[0]?.id, withdrawals: ids.length }, 'withdrawals gathered into one transaction');
    return ids.length;
  });
}

/**
 * PENDING → SIGNED for the members of each unsigned batch: the batch row is claimed (FOR UPDATE SKIP LOCKED), the
 * adapter signs one transaction for the batch's id paying each member (amount less its fee) in id order, and every
 * member records its raw transaction and hash in the same transaction that marks the batch signed. The adapter keeps
 * what it signed by the batch's id, so signing again after a crash gives the same transaction back.
 */
export async function signBatches(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger, batches = SIGN_BATCHES): Promise<number> {
  if (!chain.signBatch) return 0;
  if (chain.signsSealedOnly) {
    // A batch gathered before the seal existed: its unsealed members leave it (and wait for an operator's re-approval,
    // review.ts), committed before the signer reads the batch, so it signs the rest instead of refusing them all.
    const left = await pool.query<{ id: string; batch: string }>(
      `UPDATE withdrawals w SET batch_id = NULL FROM withdrawal_batches b
        WHERE b.id = w.batch_id AND b.signed_at IS NULL AND b.network = ANY($1::text[]) AND w.state = 'PENDING' AND w.approval_seal IS NULL
        RETURNING w.id, b.id AS batch`,
      [chain.networks],
    );
    for (const row of left.rows) log.warn({ batch: row.batch, withdrawal: row.id }, 'an unsealed withdrawal (from before the approval seal) left its batch: an operator re-approves it (npm run operator -- unsealed)');
  }
  const tried: string[] = [];
  let signedCount = 0;
  for (let i = 0; i < batches; i += 1) {
    const outcome = await inTransaction(pool, async (client) => {
      const batch = (
        await client.query<{ id: string; network: Network }>(
          `SELECT id, network FROM withdrawal_batches WHERE signed_at IS NULL AND network = ANY($1::text[]) AND id <> ALL($2::uuid[]) ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
          [chain.networks, tried],
        )
      ).rows[0];
      if (!batch) return 'idle' as const;
      tried.push(batch.id);
      const members = (await client.query<Claimed>(`${CLAIM} WHERE w.batch_id = $1 AND w.state = 'PENDING' ORDER BY w.id FOR UPDATE`, [batch.id])).rows;
      if (members.length === 0) {
        await client.query('UPDATE withdrawal_batches SET signed_at = now() WHERE id = $1', [batch.id]);
        return 'skip' as const;
      }
      const orders = members.map((w) => ({ toAddress: w.toAddress, amount: paidOut(w) }));
      const total = sumUnits(orders.map((o) => o.amount));
      const first = members[0];
      if (first && members.every((w) => w.waitingForFundsSince !== null) && ((await hotFunds(chain)(batch.network, first.currency)) ?? total) < total) return 'skip' as const;
      let signed: Awaited<ReturnType<WithdrawalChainPort['signWithdrawal']>>;
      try {
        signed = await chain.signBatch!({ reference: batch.id, network: batch.network, orders });
      } catch (error) {
        // Not enough confirmed outputs yet (its members wait for the hot wallet), or the node away: the batch and its holds wait for the next round.
        if (error instanceof HotWalletShortError) await waitForFunds(client, members, log, error);
        else log.warn({ err: error, batch: batch.id, withdrawals: members.length }, 'signing a batch failed; it will be tried again');
        return 'skip' as const;
      }
      for (const w of members) {
        await moveOrder(client, ORDER_TABLES.withdrawal, w.id, { from: 'PENDING', to: 'SIGNED', set: { raw_tx: signed.rawTx, tx_hash: signed.txHash, from_address: signed.fromAddress, signed_at: NOW, waiting_for_funds_since: null } });
        if (w.waitingForFundsSince !== null) await notifyAccountChanged(client, w.walletAccountId);
      }
      await client.query('UPDATE withdrawal_batches SET signed_at = now(), tx_hash = $2 WHERE id = $1', [batch.id, signed.txHash]);
      return 'done' as const;
    });
    if (outcome === 'idle') break;
    if (outcome === 'done') signedCount += 1;
  }
  return signedCount;
}

/**
 * What the hot wallet can pay now per network and currency, asked once per round; undefined where the adapter cannot
 * tell (or the node did not answer): signing is then tried as before.
 */
function hotFunds(chain: WithdrawalChainPort): (network: Network, currency: string) => Promise<bigint | undefined> {
  const known = new Map<string, Promise<bigint | undefined>>();
  return (network, currency) => {
    const key = `${network}:${currency}`;
    let found = known.get(key);
    if (!found) {
      found = (chain.hotWalletFunds?.(network, currency) ?? Promise.resolve(undefined)).catch(() => undefined);
      known.set(key, found);
    }
    return found;
  };
}

/**
 * Withdrawals the hot wallet cannot pay now: they stay PENDING with their holds, shown "Pending" with that reason
 * (waiting_for_funds_since), and are not signed again until the hot wallet holds enough (`hotFunds`). Said once per
 * withdrawal, as an error: the hot wallet needs refilling from cold storage (README, Hot and cold).
 */
async function waitForFunds(client: pg.PoolClient, rows: readonly Claimed[], log: Logger, error: HotWalletShortError): Promise<void> {
  for (const w of rows.filter((row) => row.waitingForFundsSince === null)) {
    await client.query('UPDATE withdrawals SET waiting_for_funds_since = now() WHERE id = $1 AND waiting_for_funds_since IS NULL', [w.id]);
    await notifyAccountChanged(client, w.walletAccountId);
    log.error({ withdrawal: w.id, network: w.network, currency: w.currency, amount: w.amount, reason: error.message }, 'withdrawal waits for the hot wallet: it cannot pay it now; refill it from cold storage');
  }
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
        if (known !== undefined && known.state !== 'DROPPED') log.info({ withdrawal: w.id, tx: w.txHash }, 'withdrawal already on the chain: reconciled by its hash, not sent again');
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
        set: {
          broadcast_at: NOW,
          broadcast_attempts: w.broadcastAttempts + 1,
          confirmations_required: chain.requiredConfirmations(w.network),
          broadcast_height: await heightIfReplacing(chain, w.network),
        },
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

/**
 * BROADCAST → COMPLETED once the chain has the confirmations of one of the withdrawal's transactions (the current
 * one or one it replaced by fee); FAILED when all of them left the chain, or one was mined and failed. One still
 * unmined after the network's `replaceAfterBlocks` is replaced by fee.
 */
export async function confirmWithdrawals(pool: pg.Pool, chain: WithdrawalChainPort & Partial<HotWalletFees>, log: Logger): Promise<number> {
  const fields = ['id', 'network', 'currency', 'toAddress', 'amount', 'fee', 'txHash', 'rawTx', 'confirmations', 'replacedTxHashes', 'broadcastHeight'] as const;
  const open = await pool.query<Pick<typeof withdrawals.$inferSelect, (typeof fields)[number]> & { txHash: string; rawTx: string }>(
    `SELECT ${selectColumns(withdrawals, 'w', fields)} FROM withdrawals w WHERE w.state = 'BROADCAST' AND w.network = ANY($2::text[]) ORDER BY w.broadcast_at LIMIT $1`,
    [CONFIRM_BATCH, chain.networks],
  );
  let completed = 0;
  for (const [network, rows] of Map.groupBy(open.rows, (row) => row.network)) {
    const hashesOf = (row: (typeof rows)[number]) => [row.txHash, ...row.replacedTxHashes];
    const statuses = await chain.status(network, rows.flatMap((r) => hashesOf(r).map((txHash) => ({ txHash, outputIndex: 0 }))));
    const afterBlocks = chain.replaceAfterBlocks?.(network);
    let tip: number | undefined;
    // A batch's members share one transaction: it is replaced (or bumped) once per round, for all of them.
    const bumped = new Set<string>();
    for (const row of rows) {
      const each = hashesOf(row).flatMap((txHash) => {
        const status = statuses.get(transferKey({ txHash, outputIndex: 0 }));
        return status ? [{ txHash, status }] : [];
      });
      if (each.length === 0) continue;
      const mined = each.find((e) => e.status.state === 'FAILED' || (e.status.state === 'SEEN' && e.status.blockHeight !== null));
      if (mined?.status.state === 'FAILED') {
        const reason = `The transaction failed on the chain: ${mined.status.reason}`;
        const fee = mined.status.fee;
        const failed = await claimBroadcast(pool, row.id, async (client, w) => {
          await failWithdrawal(client, w, 'BROADCAST', reason);
          await bookNetworkFee(client, w, fee);
        });
        if (failed) log.warn({ withdrawal: row.id, tx: mined.txHash }, 'withdrawal failed on the chain');
      } else if (mined?.status.state === 'SEEN') {
        const status = mined.status;
        if (status.confirmations >= chain.requiredConfirmations(network)) {
          if (await claimBroadcast(pool, row.id, (client, w) => completeWithdrawal(client, w, status, mined.txHash))) completed += 1;
        } else if (status.confirmations !== row.confirmations) {
          await pool.query(`UPDATE withdrawals SET confirmations = $2 WHERE id = $1 AND state = 'BROADCAST'`, [row.id, status.confirmations]);
        }
      } else if (each.every((e) => e.status.state === 'DROPPED') && each.length === hashesOf(row).length) {
        // A real adapter reports DROPPED only once the network has evicted the transaction for good.
        const failed = await claimBroadcast(pool, row.id, (client, w) => failWithdrawal(client, w, 'BROADCAST', 'The transaction left the chain'), row.txHash);
        if (failed) log.warn({ withdrawal: row.id, tx: row.txHash }, 'withdrawal dropped from the chain');
      } else if (each[0]?.status.state === 'DROPPED') {
        // The current transaction (a replacement whose broadcast did not get through) is unknown while an earlier one waits: send it again.
        await chain.broadcast(network, row.rawTx).catch((error: unknown) => log.warn({ err: error, withdrawal: row.id }, 'the replacement was not taken; the earlier transaction still waits'));
      } else if (afterBlocks !== undefined && row.broadcastHeight !== null && chain.tipHeight) {
        tip ??= await chain.tipHeight(network);
        if (tip - row.broadcastHeight >= afterBlocks && !bumped.has(row.txHash)) {
          bumped.add(row.txHash);
          await replaceStuck(pool, chain, row.id, row.txHash, tip, log);
        }
      }
    }
  }
  return completed;
}

/** The chain's height when a withdrawal goes out on a network that replaces unmined ones; else null. */
async function heightIfReplacing(chain: WithdrawalChainPort & Partial<HotWalletFees>, network: Network): Promise<number | null> {
  if (chain.replaceAfterBlocks?.(network) === undefined || !chain.tipHeight) return null;
  return chain.tipHeight(network);
}

/**
 * Replaces one stuck withdrawal's transaction by fee: the new one is recorded (its hash current, the old one kept in
 * `replaced_tx_hashes`, the history showing the new hash) before it is sent; the send itself may fail and is
 * retried by the next round (the current hash is then unknown to the chain while the earlier one waits).
 */
async function replaceStuck(pool: pg.Pool, chain: WithdrawalChainPort & Partial<HotWalletFees>, id: string, txHash: string, tip: number, log: Logger): Promise<void> {
  if (!chain.replaceByFee || !chain.estimateFee) return;
  let replacement: { rawTx: string; txHash: string; network: Network } | undefined;
  try {
    await claimBroadcast(pool, id, async (client, w) => {
      if (!w.rawTx || !w.txHash) return;
      // A batch is replaced for all its members at once, only while none of them is being worked on elsewhere (a
      // completion, another worker's replacement): it is never waited for, so two workers never deadlock on it.
      if (w.batchId && !(await lockedAll(client, w.batchId))) return;
      const order = { reference: w.id, network: w.network, currency: w.currency, toAddress: w.toAddress, amount: paidOut(w) };
      const fee = await chain.estimateFee!(order);
      const signed = await chain.replaceByFee!({ order, signed: { rawTx: w.rawTx, txHash: w.txHash, fromAddress: '' }, fee }, fee);
      // The same transaction (the node refused a replacement and it was bumped by CPFP, or no bump is due): its hash and bytes stay; the next try waits the blocks again.
      // Every withdrawal the stuck transaction pays (a batch's members; else this one alone) follows it.
      if (signed.txHash === w.txHash) {
        return void (await client.query(`UPDATE withdrawals SET broadcast_height = $3 WHERE network = $1 AND tx_hash = $2 AND state = 'BROADCAST'`, [w.network, w.txHash, tip]));
      }
      // A member not yet marked sent (SIGNED) follows too: it is then sent, or found on the chain, as the replacement.
      const moved = await client.query<{ wallet_transaction_id: string | null }>(
        `UPDATE withdrawals SET replaced_tx_hashes = replaced_tx_hashes || tx_hash, tx_hash = $3, raw_tx = $4, broadcast_height = CASE WHEN state = 'BROADCAST' THEN $5::bigint END
          WHERE network = $1 AND tx_hash = $2 AND state IN ('SIGNED', 'BROADCAST') RETURNING wallet_transaction_id`,
        [w.network, w.txHash, signed.txHash, signed.rawTx, tip],
      );
      await client.query('UPDATE wallet_transactions SET hash = $2, updated_at = now() WHERE id = ANY($1::uuid[])', [moved.rows.map((r) => r.wallet_transaction_id).filter((t) => t !== null), signed.txHash]);
      replacement = { rawTx: signed.rawTx, txHash: signed.txHash, network: w.network };
    }, txHash);
  } catch (error) {
    // Above MAX_FEE_RATE: the adapter says so once per withdrawal, and it is an operator's call.
    if (error instanceof FeeBumpBlockedError) log.error({ err: error, withdrawal: id }, 'stuck withdrawal needs a fee above MAX_FEE_RATE; not bumped');
    else log.warn({ err: error, withdrawal: id }, 'replacing a stuck withdrawal by fee failed; it will be tried again');
    return;
  }
  if (!replacement) return;
  log.info({ withdrawal: id, tx: replacement.txHash }, 'stuck withdrawal replaced by fee');
  await chain.broadcast(replacement.network, replacement.rawTx).catch((error: unknown) => log.warn({ err: error, withdrawal: id }, 'the replacement was not sent; it will be sent again'));
}

/**
 * Whether any step below has a row to look at on these networks: an open withdrawal, an unsigned batch, a completed
 * one in doubt. One read through the steps' partial indexes, where the steps themselves make up to fifteen
 * statements in up to five transactions: an idle wallet's worker asks it every poll on every network, in every process.
 */
export async function withdrawalsHaveWork(db: Queryable, networks: readonly Network[]): Promise<boolean> {
  const result = await db.query<{ work: boolean }>({
    name: 'withdrawals_have_work',
    text: `SELECT EXISTS (SELECT 1 FROM withdrawals WHERE state IN ('PENDING', 'SIGNED', 'BROADCAST') AND network = ANY($1::text[]))
               OR EXISTS (SELECT 1 FROM withdrawal_batches WHERE signed_at IS NULL AND network = ANY($1::text[]))
               OR EXISTS (SELECT 1 FROM withdrawals WHERE in_doubt_since IS NOT NULL AND state = 'COMPLETED' AND network = ANY($1::text[])) AS work`,
    values: [networks],
  });
  return result.rows[0]?.work === true;
}

/**
 * The worker's one job for withdrawals: each step in turn, completed ones a reorganisation put in doubt first; none
 * when no row waits for any of them (a row that comes meanwhile waits for the next poll, as it would after the steps).
 */
export async function processWithdrawals(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger): Promise<void> {
  if (!(await withdrawalsHaveWork(pool, chain.networks))) return;
  await recheckCompletedWithdrawals(pool, chain, log);
  await formBatches(pool, chain, log);
  await signBatches(pool, chain, log);
  await signWithdrawals(pool, chain, log);
  await broadcastWithdrawals(pool, chain, log);
  await confirmWithdrawals(pool, chain, log);
}

/**
 * Claims a BROADCAST withdrawal for `work`. `currentTx`: only while its current transaction is still that one — a
 * verdict on the hashes read earlier (all DROPPED) must not land on a withdrawal another pass has replaced meanwhile,
 * whose new transaction may yet be mined.
 */
async function claimBroadcast(pool: pg.Pool, id: string, work: (client: pg.PoolClient, w: Claimed) => Promise<void>, currentTx?: string): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const w = (
      await client.query<Claimed>(`${CLAIM} WHERE w.id = $1 AND w.state = 'BROADCAST' AND ($2::text IS NULL OR w.tx_hash = $2) FOR UPDATE SKIP LOCKED`, [id, currentTx ?? null])
    ).rows[0];
    if (!w) return false;
    await work(client, w);
    return true;
  });
}

/**
 * Settles the hold: what the recipient receives to the network's world account, the fee to fee income; the network's
 * fee booked; the block kept, so a reorganisation from there puts the completion in doubt (reopen.ts). A withdrawal
 * reopened before settles by its round's own entry.
 */
async function completeWithdrawal(db: Queryable, w: Claimed, status: { confirmations: number; blockHeight: number | null; fee?: Units | undefined }, minedHash: string): Promise<void> {
  const held = money(w.currency, unitsFromRow(w.amount));
  await settleOrder(db, { flow: 'withdrawal', id: w.id }, { account: w.walletAccountId, money: held, to: settleLegs(w), round: w.reopened });
  await moveOrder(db, ORDER_TABLES.withdrawal, w.id, {
    from: 'BROADCAST',
    to: 'COMPLETED',
    // A reorganisation's mark (deposits.ts unwindReorg) is kept: this status may have been read before it, so it is checked once more.
    set: { confirmations: status.confirmations, closed_at: NOW, tx_hash: minedHash, block_height: status.blockHeight },
    history: { state: 'COMPLETED', set: { hash: minedHash } },
  });
  await bookNetworkFee(db, w, status.fee);
  await notifyAccountChanged(db, w.walletAccountId);
}

/**
 * What the network charged for the withdrawal's mined transaction, in the network's own coin: from the network's gas
 * float (ETHEREUM, TRON, TON) or NETWORK_FEES (ledger.ts, networkFeePayer) to WORLD,
 * so the world account keeps mirroring what the chain holds for the custody. Once per withdrawal.
 */
async function bookNetworkFee(db: Queryable, w: Claimed, whole: bigint | undefined): Promise<void> {
  if (whole === undefined || whole <= 0n) return;
  const fee = await networkFeeShare(db, w, unitsOf(whole));
  if (fee <= 0n) return;
  await transferForOrder(db, { flow: 'withdrawal', id: w.id }, 'networkFee', {
    from: networkFeePayer(w.network),
    to: systemAccountId(SYSTEM_ACCOUNTS.world(w.network)),
    money: { currency: NETWORK_INFO[w.network].coin, units: fee },
    round: w.reopened,
  });
  await db.query('UPDATE withdrawals SET network_fee = $2 WHERE id = $1', [w.id, fee.toString()]);
}

/** Locks every member of a batch in flight unless another transaction holds one: false then, and nothing to do. */
async function lockedAll(client: pg.PoolClient, batchId: string): Promise<boolean> {
  const locked = await client.query(`SELECT id FROM withdrawals WHERE batch_id = $1 AND state IN ('SIGNED', 'BROADCAST') FOR UPDATE SKIP LOCKED`, [batchId]);
  const all = await client.query<{ count: number }>(`SELECT count(*)::int AS count FROM withdrawals WHERE batch_id = $1 AND state IN ('SIGNED', 'BROADCAST')`, [batchId]);
  return (locked.rowCount ?? 0) >= (all.rows[0]?.count ?? 0);
}

/**
 * A batch member's part of its transaction's fee: the fee split evenly over the batch's members, the remainder to the
 * first by id, so the parts add up to the fee exactly; each part is booked (and taken back on a reopen) with its
 * withdrawal like a single withdrawal's whole fee. The whole fee for a withdrawal paid alone.
 */
async function networkFeeShare(db: Queryable, w: Claimed, fee: Units): Promise<Units> {
  if (!w.batchId) return fee;
  const members = await db.query<{ id: string }>('SELECT id FROM withdrawals WHERE batch_id = $1 ORDER BY id', [w.batchId]);
  const count = BigInt(members.rows.length);
  if (count === 0n) return fee;
  return unitsOf(fee / count + (members.rows[0]?.id === w.id ? fee % count : 0n));
}

/** Gives the held amount back and shows the withdrawal as failed. */
async function failWithdrawal(db: Queryable, w: Claimed, from: 'SIGNED' | 'BROADCAST', reason: string): Promise<void> {
  await releaseOrder(db, { flow: 'withdrawal', id: w.id }, { account: w.walletAccountId, money: money(w.currency, unitsFromRow(w.amount)) });
  await moveOrder(db, ORDER_TABLES.withdrawal, w.id, { from, to: 'FAILED', set: { failure_reason: reason, closed_at: NOW }, history: { state: 'FAILED', set: { failure_reason: reason } } });
  await notifyAccountChanged(db, w.walletAccountId);
}
