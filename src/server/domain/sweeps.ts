/**
 * Sweeps: on account-based networks (the adapter's `collection.sweeps(network)`: Ethereum, TRON, TON) the credited
 * deposits are collected from the users' deposit addresses into the hot wallet, which pays every withdrawal.
 * Network-agnostic: what a sweep costs and how it is built is the adapter's; the domain decides what to sweep, keeps
 * each sweep's state (`sweeps`, `sweep_deposits`), and books what the network charged the custodian.
 *
 * - Plan: credited deposits no sweep has taken yet (and not in doubt after a reorganisation), per (address, currency),
 *   become one PENDING sweep, unless that address already has an open sweep of the currency (the next one takes them).
 * - Run: one sweep per address at a time. The adapter sends (SENT), or says the address needs gas first (NEEDS_GAS:
 *   the hot wallet tops it up, TOPPING_UP until that transfer is mined, then PENDING again), or finds nothing worth
 *   moving (SKIPPED). Everything signed is signed once per reference (`sweep:<id>`, `sweep:<id>:top-up:<n>`), so a
 *   worker that dies anywhere sends the same transaction again, never a second one.
 * - Confirm: once the sweep has its confirmations it is CONFIRMED (FAILED if it reverted: its deposits go back to be
 *   swept again). One not on the chain (a reorganisation took it, or the node lost it) is sent again with the same
 *   bytes; but when a deposit it collects left the chain (REVERSED, REVERSAL_DUE) it can never be mined: FAILED with
 *   an ERROR, its other deposits free for another sweep. A CONFIRMED one a reorganisation put in doubt is re-checked
 *   first: still confirmed, nothing changes; else SENT again with its fee's booking taken back (`reopened` rounds).
 *   Each top-up's fee and the sweep's are booked as they are mined, from the network's gas float to WORLD in the
 *   network's own coin (gas-float.ts). The swept amount itself, like a top-up's, moves between two addresses of the
 *   custody: no ledger entry.
 */
import type pg from 'pg';
import { unitsFromRow, unitsFromRowOrZero } from '../db/amounts.ts';
import { negateUnits, unitsOf, type Units } from '../../lib/money.ts';
import { NETWORK_INFO, type Network } from '../../lib/currencies.ts';
import { transferKey, type ChainPort, type CollectionPort, type TransferStatus } from '../adapters/chains/port.ts';
import { selectColumns } from '../db/columns.ts';
import { sweeps } from '../db/schema/sweeps.ts';
import { inTransaction } from '../db/transaction.ts';
import type { Logger } from '../log.ts';
import { feePayerOf, networkFeePayer, SYSTEM_ACCOUNTS, systemAccountId, type Queryable } from './ledger.ts';
import { transferEntry } from './orders/entries.ts';
import { sweepEntry, type EntryRef } from './orders/entry-keys.ts';
import { NOW } from './orders/sql-set.ts';
import { moveOrder, ORDER_TABLES } from './orders/state.ts';

export type SweepChain = Pick<ChainPort, 'networks' | 'status' | 'requiredConfirmations'> & { collection: CollectionPort };

const BATCH = 20;
const FIELDS = ['id', 'network', 'currency', 'address', 'derivationIndex', 'amount', 'state', 'txHash', 'topUps', 'topUpTxHash', 'fee', 'reopened'] as const;
type Sweep = Pick<typeof sweeps.$inferSelect, (typeof FIELDS)[number]>;
const SELECT = `SELECT ${selectColumns(sweeps, 's', FIELDS)} FROM sweeps s`;

/** Why a sweep failed whose deposits left the chain before it was mined (a reorganisation): it never can be now. */
export const SWEPT_DEPOSITS_LEFT = 'DEPOSITS_LEFT_THE_CHAIN: the deposits this sweep collected left the chain before it was mined';


/** The worker's job: plan, run and confirm the sweeps of every network whose adapter sweeps. */
export async function collectDeposits(pool: pg.Pool, chain: SweepChain, log: Logger): Promise<void> {
  for (const network of chain.networks.filter((n) => chain.collection.sweeps(n))) {
    await recheckConfirmedSweeps(pool, chain, network, log);
    await planSweeps(pool, network);
    await runSweeps(pool, chain, network, log);
    await confirmSweeps(pool, chain, network, log);
  }
}

/** Turns credited, unswept deposits into PENDING sweeps, one per (address, currency); returns how many it made. */
export async function planSweeps(pool: pg.Pool, network: Network): Promise<number> {
  return inTransaction(pool, async (client) => {
    // One planner per network at a time: two would put one deposit in two sweeps' plans (the key refuses the second).
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`sweeps:${network}`]);
    const due = await client.query<{ currency: string; address: string; index: number; amount: string; ids: string[] }>(
      `SELECT d.currency, d.to_address AS address, a.derivation_index AS index, sum(d.amount)::text AS amount, array_agg(d.id) AS ids
         FROM chain_deposits d JOIN deposit_addresses a ON a.network = d.network AND a.address = d.to_address
        WHERE d.network = $1 AND d.state = 'CREDITED' AND d.in_doubt_since IS NULL
          AND NOT EXISTS (SELECT 1 FROM sweep_deposits x WHERE x.deposit_id = d.id)
          AND NOT EXISTS (SELECT 1 FROM sweeps s WHERE s.network = d.network AND s.address = d.to_address AND s.currency = d.currency
                                                 AND s.state IN ('PENDING', 'TOPPING_UP', 'SENT'))
        GROUP BY d.currency, d.to_address, a.derivation_index`,
      [network],
    );
    for (const group of due.rows) {
      const made = await client.query<{ id: string }>(
        'INSERT INTO sweeps (network, currency, address, derivation_index, amount) VALUES ($1, $2, $3, $4, $5) RETURNING id',
        [network, group.currency, group.address, group.index, group.amount],
      );
      await client.query('INSERT INTO sweep_deposits (deposit_id, sweep_id) SELECT unnest($1::uuid[]), $2', [group.ids, made.rows[0]?.id]);
    }
    return due.rows.length;
  });
}

/** Asks the adapter to sweep each PENDING sweep whose address has no other sweep under way; returns how many it sent. */
export async function runSweeps(pool: pg.Pool, chain: SweepChain, network: Network, log: Logger, batch = BATCH): Promise<number> {
  let sent = 0;
  const tried: string[] = [];
  for (let i = 0; i < batch; i++) {
    const outcome = await inTransaction(pool, async (client) => {
      const claimed = await client.query<Sweep>(
        `${SELECT} WHERE s.network = $1 AND s.state = 'PENDING' AND s.id <> ALL($2::uuid[])
            AND NOT EXISTS (SELECT 1 FROM sweeps o WHERE o.network = s.network AND o.address = s.address AND o.state IN ('TOPPING_UP', 'SENT'))
          ORDER BY s.created_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [network, tried],
      );
      const sweep = claimed.rows[0];
      if (!sweep) return 'idle';
      tried.push(sweep.id);
      try {
        const result = await chain.collection.sweep({ network, currency: sweep.currency, address: sweep.address, index: sweep.derivationIndex, amount: unitsFromRow(sweep.amount), reference: `sweep:${sweep.id}` });
        if (result.state === 'SENT') {
          await moveOrder(client, ORDER_TABLES.sweep, sweep.id, { from: 'PENDING', to: 'SENT', set: { tx_hash: result.signed.txHash } });
          return 'sent';
        }
        if (result.state === 'NOT_NEEDED') {
          await moveOrder(client, ORDER_TABLES.sweep, sweep.id, { from: 'PENDING', to: 'SKIPPED', set: { reason: result.reason, closed_at: NOW } });
          return 'skipped';
        }
        const n = sweep.topUps + 1;
        const topUp = await chain.collection.topUpGas({ network, address: sweep.address, amount: result.gas.amount, reference: `sweep:${sweep.id}:top-up:${n}` });
        await moveOrder(client, ORDER_TABLES.sweep, sweep.id, { from: 'PENDING', to: 'TOPPING_UP', set: { top_ups: n, top_up_tx_hash: topUp.txHash } });
        return 'topping-up';
      } catch (error) {
        log.warn({ err: error, sweep: sweep.id, network }, 'sweep failed; it will be tried again');
        return 'retry';
      }
    });
    if (outcome === 'idle') break;
    if (outcome === 'sent') sent++;
  }
  return sent;
}

/**
 * Top-ups mined: their fee is booked and the sweep is PENDING again (dropped ones too, to top up anew). Sweeps with
 * their confirmations: CONFIRMED with their fee booked; reverted: FAILED, fee booked, deposits free for another
 * sweep; dropped: PENDING (the adapter sends the same signed transaction again). Returns how many were confirmed.
 */
export async function confirmSweeps(pool: pg.Pool, chain: SweepChain, network: Network, log: Logger): Promise<number> {
  const open = await pool.query<Sweep>(`${SELECT} WHERE s.network = $1 AND s.state IN ('TOPPING_UP', 'SENT') ORDER BY s.created_at LIMIT 200`, [network]);
  const hashOf = (s: Sweep) => (s.state === 'SENT' ? s.txHash : s.topUpTxHash) ?? '';
  const statuses = open.rows.length === 0 ? new Map<string, TransferStatus>() : await chain.status(network, open.rows.map((s) => ({ txHash: hashOf(s), outputIndex: 0 })));
  const required = chain.requiredConfirmations(network);
  let confirmed = 0;
  for (const row of open.rows) {
    const status = statuses.get(transferKey({ txHash: hashOf(row), outputIndex: 0 }));
    if (!status) continue;
    await inTransaction(pool, async (client) => {
      // Claimed again in its state: another worker may have moved it meanwhile.
      const sweep = (await client.query<Sweep>(`${SELECT} WHERE s.id = $1 AND s.state = $2 FOR UPDATE SKIP LOCKED`, [row.id, row.state])).rows[0];
      if (!sweep) return;
      if (sweep.state === 'TOPPING_UP') {
        if (status.state === 'SEEN' && status.confirmations < 1) return;
        const fee = unitsOf(status.state === 'DROPPED' ? 0n : (status.fee ?? 0n));
        await bookFee(client, network, sweepEntry('topUpFee', sweep.id, sweep.topUps), fee);
        await moveOrder(client, ORDER_TABLES.sweep, sweep.id, { from: 'TOPPING_UP', to: 'PENDING', set: { top_up_fees: { add: fee } } });
      } else if ((status.state === 'SEEN' && status.blockHeight === null) || status.state === 'DROPPED') {
        // Not on the chain: sent again (the adapter's status sends it while it can still be mined), unless the
        // deposits it collects left the chain, so that it never can be.
        const gone = await client.query<{ id: string; tx_hash: string }>(
          `SELECT d.id, d.tx_hash FROM sweep_deposits x JOIN chain_deposits d ON d.id = x.deposit_id WHERE x.sweep_id = $1 AND d.state IN ('REVERSED', 'REVERSAL_DUE')`,
          [sweep.id],
        );
        if (gone.rows.length > 0) {
          await moveOrder(client, ORDER_TABLES.sweep, sweep.id, { from: 'SENT', to: 'FAILED', set: { reason: SWEPT_DEPOSITS_LEFT, closed_at: NOW } });
          // Its deposits still credited are free for another sweep; a reversed one revived and credited again is too.
          await client.query('DELETE FROM sweep_deposits WHERE sweep_id = $1', [sweep.id]);
          log.error({ sweep: sweep.id, network, tx: sweep.txHash, deposits: gone.rows.map((d) => d.id), depositTxs: gone.rows.map((d) => d.tx_hash) }, 'sweep left the chain with the deposits it collected: failed, its other deposits will be swept again');
        } else if (status.state === 'DROPPED') {
          await moveOrder(client, ORDER_TABLES.sweep, sweep.id, { from: 'SENT', to: 'PENDING' });
          log.warn({ sweep: sweep.id, network, tx: sweep.txHash }, 'sweep left the chain; it will be sent again');
        } else if (sweep.topUps > 0 && sweep.topUpTxHash) {
          await checkTopUp(client, chain, sweep, log);
        }
      } else if (status.state === 'SEEN') {
        if (status.confirmations < required) return;
        await bookFee(client, network, sweepEntry('fee', sweep.id, sweep.reopened), unitsOf(status.fee ?? 0n));
        // A reorganisation's mark is kept (its status may predate it): the confirmed sweep is checked once more.
        await moveOrder(client, ORDER_TABLES.sweep, sweep.id, { from: 'SENT', to: 'CONFIRMED', set: { fee: status.fee ?? 0n, block_height: status.blockHeight, closed_at: NOW } });
        confirmed++;
      } else if (status.state === 'FAILED') {
        await bookFee(client, network, sweepEntry('fee', sweep.id, sweep.reopened), unitsOf(status.fee ?? 0n));
        await moveOrder(client, ORDER_TABLES.sweep, sweep.id, { from: 'SENT', to: 'FAILED', set: { fee: status.fee ?? 0n, reason: status.reason, closed_at: NOW } });
        await client.query('DELETE FROM sweep_deposits WHERE sweep_id = $1', [sweep.id]);
        log.error({ sweep: sweep.id, network, tx: sweep.txHash, reason: status.reason }, 'sweep failed on the chain; its deposits will be swept again');
      }
    });
  }
  return confirmed;
}

/**
 * CONFIRMED sweeps a reorganisation put in doubt (deposits.ts `unwindReorg`): still confirmed, the doubt is lifted;
 * otherwise SENT again with its fee's booking taken back (`sweep:fee-reopen:<id>#<n>`), and `confirmSweeps` decides as
 * for any sweep off the chain: sent again, or failed when its deposits left the chain.
 */
async function recheckConfirmedSweeps(pool: pg.Pool, chain: SweepChain, network: Network, log: Logger): Promise<void> {
  const doubtful = await pool.query<Sweep & { version: string }>(`SELECT ${selectColumns(sweeps, 's', FIELDS)}, s.xmin::text AS version FROM sweeps s WHERE s.network = $1 AND s.state = 'CONFIRMED' AND s.in_doubt_since IS NOT NULL AND s.tx_hash IS NOT NULL LIMIT 200`, [network]);
  if (doubtful.rows.length === 0) return;
  const statuses = await chain.status(network, doubtful.rows.map((s) => ({ txHash: s.txHash ?? '', outputIndex: 0 })));
  for (const row of doubtful.rows) {
    const status = statuses.get(transferKey({ txHash: row.txHash ?? '', outputIndex: 0 }));
    if (!status) continue;
    if (status.state === 'SEEN' && status.blockHeight !== null && status.confirmations >= chain.requiredConfirmations(network)) {
      await pool.query(`UPDATE sweeps SET in_doubt_since = NULL, block_height = $2 WHERE id = $1 AND state = 'CONFIRMED' AND xmin = $3::text::xid`, [row.id, status.blockHeight, row.version]);
      continue;
    }
    const reopened = await inTransaction(pool, async (client) => {
      const claimed = await client.query(`SELECT 1 FROM sweeps WHERE id = $1 AND state = 'CONFIRMED' AND xmin = $2::text::xid FOR UPDATE SKIP LOCKED`, [row.id, row.version]);
      if (claimed.rowCount === 0) return false;
      const round = row.reopened + 1;
      const fee = unitsFromRowOrZero(row.fee, 'fee');
      if (fee > 0n) {
        await transferEntry(client, sweepEntry('feeReopen', row.id, round), {
          from: systemAccountId(SYSTEM_ACCOUNTS.world(network)),
          to: await feePayerOf(client, sweepEntry('fee', row.id, row.reopened).key, network),
          money: { currency: NETWORK_INFO[network].coin, units: fee },
        });
      }
      await moveOrder(client, ORDER_TABLES.sweep, row.id, {
        from: 'CONFIRMED',
        to: 'SENT',
        set: { reopened: round, fee: null, block_height: null, in_doubt_since: null, closed_at: null },
      });
      return true;
    });
    if (reopened) log.warn({ sweep: row.id, network, tx: row.txHash, now: status.state }, 'a confirmed sweep’s transaction left the chain: in flight again, its fee’s booking taken back');
  }
}

/** Why a sweep waits for good: the gas its top-up brought left the chain and the top-up cannot be mined again. */
export const TOP_UP_LEFT = 'GAS_TOP_UP_LEFT_THE_CHAIN: the gas top-up this sweep needs left the chain for good';

/**
 * A token sweep waiting off the chain may wait for the gas its top-up brought, which a reorganisation can take too.
 * The top-up is asked about (the adapter sends our own transaction again while its nonce is free); one back off the
 * chain has its fee's booking taken back and waits again as a top-up of its own (TOPPING_UP, its fee booked anew
 * under the next number once mined, then the sweep's same bytes follow). One gone for good (its nonce taken) is an
 * operator's: one ERROR, the sweep's `reason` says it.
 */
async function checkTopUp(client: pg.PoolClient, chain: SweepChain, sweep: Sweep, log: Logger): Promise<void> {
  const ref = { txHash: sweep.topUpTxHash ?? '', outputIndex: 0 };
  const topUp = (await chain.status(sweep.network, [ref])).get(transferKey(ref));
  if (!topUp || (topUp.state === 'SEEN' && topUp.blockHeight !== null) || topUp.state === 'FAILED') return;
  if (topUp.state === 'DROPPED') {
    // Its nonce went to another transaction of the hot wallet: the sweep's signed bytes need gas nobody sends. Said once.
    const marked = await client.query(`UPDATE sweeps SET reason = $2 WHERE id = $1 AND reason IS NULL`, [sweep.id, TOP_UP_LEFT]);
    if (marked.rowCount === 1) log.error({ sweep: sweep.id, network: sweep.network, topUp: sweep.topUpTxHash, tx: sweep.txHash }, 'the gas top-up of a sweep left the chain for good: the sweep cannot be mined until its address gets the gas');
    return;
  }
  // The account that paid it (the gas float, or NETWORK_FEES for a fee booked before there was one) gets it back.
  const booking = sweepEntry('topUpFee', sweep.id, sweep.topUps);
  const payer = await feePayerOf(client, booking.key, sweep.network);
  const booked = await client.query<{ amount: string }>(
    `SELECT p.amount::text FROM ledger_entries e JOIN ledger_postings p ON p.entry_id = e.id
      WHERE e.idempotency_key = $1 AND p.ledger_account_id = $2`,
    [booking.key, payer],
  );
  const fee = negateUnits(unitsFromRowOrZero(booked.rows[0]?.amount, 'amount'));
  // Keyed under the top-ups' prefix, so the audit's sum of top-up fees nets it out.
  if (fee > 0n) {
    await transferEntry(client, sweepEntry('topUpFeeReopen', sweep.id, sweep.topUps), {
      from: systemAccountId(SYSTEM_ACCOUNTS.world(sweep.network)),
      to: payer,
      money: { currency: NETWORK_INFO[sweep.network].coin, units: fee },
    });
  }
  await moveOrder(client, ORDER_TABLES.sweep, sweep.id, { from: 'SENT', to: 'TOPPING_UP', set: { top_ups: { add: 1 }, top_up_fees: { add: -fee } } });
  log.warn({ sweep: sweep.id, network: sweep.network, topUp: sweep.topUpTxHash }, 'the gas top-up of a sweep left the chain and waits again: the sweep follows once it is mined');
}

/** What the network charged the custodian for one of its own transactions: gas float → WORLD, in the network's coin. */
async function bookFee(db: Queryable, network: Network, entry: EntryRef, fee: Units): Promise<void> {
  if (fee <= 0n) return;
  await transferEntry(db, entry, {
    from: networkFeePayer(network),
    to: systemAccountId(SYSTEM_ACCOUNTS.world(network)),
    money: { currency: NETWORK_INFO[network].coin, units: fee },
  });
}
