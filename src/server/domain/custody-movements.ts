/**
 * Custodian movements: `npm run custody -- sweep-to-cold <currency> <address> <amount>` sends the custody's own
 * coins from its outputs to a cold address. The transaction is signed and recorded (custody_movements, SIGNED)
 * before it is sent; a repeated command (same idempotency key) is the same movement, sent again only if the chain
 * does not know it. Once confirmed it is booked: COLD_STORAGE → WORLD for the amount and the fee from its payer (the gas float or
 * NETWORK_FEES, ledger.ts networkFeePayer) to WORLD, so the custody's position (−WORLD) keeps matching what its outputs hold.
 * A completed one whose transaction a reorganisation took off the chain is in flight again, its booking taken back
 * (`recheckCompletedMovements`).
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { AmountError, parseAmount } from '../../lib/amount.ts';
import { findCoin, NETWORK_INFO, type Network } from '../../lib/currencies.ts';
import { ChainUnsupportedError, HotWalletShortError, transferKey, type ChainAddressing, type CustodyHoldings, type SignedWithdrawal, type WithdrawalChainPort } from '../adapters/chains/port.ts';
import { addUnits, negateUnits, unitsOf, type Units } from '../../lib/money.ts';
import { unitsFromRow, unitsFromRowOrZero } from '../db/amounts.ts';
import { selectColumns } from '../db/columns.ts';
import { custodyMovements } from '../db/schema/custody.ts';
import { inTransaction } from '../db/transaction.ts';
import type { Logger } from '../log.ts';
import { DomainError } from './errors.ts';
import { feePayerOf, networkFeePayer, SYSTEM_ACCOUNTS, systemAccountId, type Posting } from './ledger.ts';
import { postEntry, transferEntry } from './orders/entries.ts';
import { coldSweepEntry } from './orders/entry-keys.ts';
import { NOW } from './orders/sql-set.ts';
import { moveOrder, moveOrderReturning, ORDER_TABLES } from './orders/state.ts';

export type Movement = Pick<typeof custodyMovements.$inferSelect, (typeof FIELDS)[number]>;
export type MovementChain = WithdrawalChainPort & CustodyHoldings;

/** The operator's mistake: nothing was signed or sent. */
export class CustodyMovementError extends DomainError<'VALIDATION' | 'UNKNOWN_CURRENCY' | 'NOT_AVAILABLE' | 'INSUFFICIENT_FUNDS' | 'IDEMPOTENCY_CONFLICT'> {}

const FIELDS = ['id', 'idempotencyKey', 'kind', 'network', 'currency', 'toAddress', 'amount', 'state', 'txHash', 'rawTx', 'confirmations', 'networkFee', 'createdAt', 'closedAt', 'reopened'] as const;
const SELECT = `SELECT ${selectColumns(custodyMovements, 'm', FIELDS)} FROM custody_movements m`;
/** The moved row as moveOrderReturning hands it back (the table's alias there is `o`). */
const RETURNING = selectColumns(custodyMovements, 'o', FIELDS);

export async function sweepToCold(
  pool: pg.Pool,
  deps: { chain: MovementChain; addresses: ChainAddressing },
  input: { currency: string; address: string; amount: string; key?: string | undefined },
): Promise<Movement> {
  const coin = findCoin(input.currency.toUpperCase());
  if (!coin || coin.token) throw new CustodyMovementError('UNKNOWN_CURRENCY', `${input.currency} is not a network coin this custody holds`);
  let amount: Units;
  try {
    amount = unitsOf(parseAmount(input.amount, coin.decimals));
  } catch (error) {
    if (error instanceof AmountError) throw new CustodyMovementError('VALIDATION', `${input.amount} is not an amount of ${coin.currency} (at most ${coin.decimals} decimals)`);
    throw error;
  }
  return orderColdSweep(pool, deps, { network: coin.network, address: input.address, amount, key: input.key });
}

/**
 * A cold sweep of `amount` of the network's coin to `address`, idempotent by `key` (default: coin, address and
 * amount): recorded SIGNING with its amount before the adapter signs it by the movement's id (derived from the key),
 * so a crash at any point leaves either nothing or a row the worker finishes (`confirmCustodyMovements`) with the
 * same transaction. One the hot wallet cannot pay is FAILED, nothing signed.
 */
export async function orderColdSweep(
  pool: pg.Pool,
  deps: { chain: MovementChain; addresses: ChainAddressing },
  input: { network: Network; address: string; amount: Units; key?: string | undefined },
): Promise<Movement> {
  const network = input.network;
  const currency = NETWORK_INFO[network].coin;
  if (!deps.chain.networks.includes(network)) throw new CustodyMovementError('NOT_AVAILABLE', `${network} is off: no chain adapter runs it`);
  let held: bigint;
  try {
    held = (await deps.chain.holdings(network))[currency] ?? 0n;
  } catch (error) {
    if (error instanceof ChainUnsupportedError) throw new CustodyMovementError('NOT_AVAILABLE', `${network} runs on a stand-in without outputs to sweep: sweep-to-cold needs a node`);
    throw error;
  }
  const address = input.address.trim();
  if (!deps.addresses.isValid(network, address)) throw new CustodyMovementError('VALIDATION', `${address} is not a valid ${network} address for this CHAIN_ENV`);
  const amount = input.amount;
  if (amount <= 0n) throw new CustodyMovementError('VALIDATION', 'the amount must be above zero');
  const key = input.key ?? `${currency}:${address}:${amount}`;
  const movement = await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`custody-movement:${key}`]);
    const existing = (await client.query<Movement>(`${SELECT} WHERE m.idempotency_key = $1`, [key])).rows[0];
    if (existing) {
      if (existing.currency !== currency || existing.toAddress !== address || unitsFromRow(existing.amount) !== amount) {
        throw new CustodyMovementError('IDEMPOTENCY_CONFLICT', `the key ${key} names another movement (${existing.amount} ${existing.currency} to ${existing.toAddress})`);
      }
      return existing;
    }
    if (amount > held) throw new CustodyMovementError('INSUFFICIENT_FUNDS', `the custody's confirmed ${currency} outputs hold ${held}, less than ${amount}`);
    const inserted = await client.query<Movement>(
      `INSERT INTO custody_movements (id, idempotency_key, kind, network, currency, to_address, amount, state)
       VALUES ($1, $2, 'COLD', $3, $4, $5, $6, 'SIGNING') RETURNING ${selectColumns(custodyMovements, 'custody_movements', FIELDS)}`,
      [movementId(key), key, network, currency, address, amount.toString()],
    );
    return inserted.rows[0] as Movement;
  });
  const signed = movement.state === 'SIGNING' ? await signMovement(pool, deps.chain, movement) : movement;
  if (signed.state === 'FAILED' && movement.state === 'SIGNING') throw new CustodyMovementError('INSUFFICIENT_FUNDS', `the hot wallet cannot pay ${amount} ${currency} and its fee now: nothing was signed`);
  if (signed.state !== 'SIGNED') return signed;
  return sendMovement(pool, deps.chain, signed);
}

/** A movement's id from its idempotency key: the same key always names the same movement, and the adapter signs by it. */
export function movementId(key: string): string {
  const hex = createHash('sha256').update(`custody-movement:${key}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** SIGNING → SIGNED (the adapter signs it by its id, the same transaction every time); FAILED when the hot wallet cannot pay it. */
async function signMovement(pool: pg.Pool, chain: WithdrawalChainPort, movement: Movement): Promise<Movement> {
  let signed: SignedWithdrawal;
  try {
    signed = await chain.signWithdrawal({ reference: `cold:${movement.id}`, network: movement.network, currency: movement.currency, toAddress: movement.toAddress, amount: unitsFromRow(movement.amount) });
  } catch (error) {
    if (!(error instanceof HotWalletShortError)) throw error;
    const failed = await moveOrderReturning<Movement>(pool, ORDER_TABLES.custodyMovement, movement.id, { from: 'SIGNING', to: 'FAILED', set: { closed_at: NOW }, ifMoved: 'skip' }, RETURNING);
    return failed ?? movement;
  }
  const moved = await moveOrderReturning<Movement>(pool, ORDER_TABLES.custodyMovement, movement.id, { from: 'SIGNING', to: 'SIGNED', set: { tx_hash: signed.txHash, raw_tx: signed.rawTx }, ifMoved: 'skip' }, RETURNING);
  return moved ?? movement;
}

/**
 * UTXO_CONSOLIDATE_BELOW: the network's deposit outputs into the hot wallet's own address while the fee rate is at
 * most `maxRate`, one consolidation at a time. Its reference (`consolidation:<id>`) is fixed by how many came before,
 * and the adapter hands back what it signed for it, so a crash before the row is recorded signs nothing new. Booked
 * once confirmed: only its network fee leaves the custody. Undefined when nothing was due.
 */
export async function consolidateDeposits(pool: pg.Pool, chain: MovementChain, network: Network, maxRate: bigint): Promise<Movement | undefined> {
  if (!chain.consolidate) return undefined;
  const open = await pool.query(`SELECT 1 FROM custody_movements WHERE network = $1 AND kind = 'CONSOLIDATION' AND state IN ('SIGNING', 'SIGNED', 'BROADCAST')`, [network]);
  if ((open.rowCount ?? 0) > 0) return undefined;
  const count = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM custody_movements WHERE network = $1 AND kind = 'CONSOLIDATION'`, [network]);
  const key = consolidationKey(network, count.rows[0]?.n ?? 0);
  const id = movementId(key);
  const signed = await chain.consolidate({ reference: `consolidation:${id}`, network, maxRate });
  if (!signed) return undefined;
  const inserted = await pool.query<Movement>(
    `INSERT INTO custody_movements (id, idempotency_key, kind, network, currency, to_address, amount, state, tx_hash, raw_tx)
     VALUES ($1, $2, 'CONSOLIDATION', $3, $4, $5, $6, 'SIGNED', $7, $8) ON CONFLICT (idempotency_key) DO NOTHING
     RETURNING ${selectColumns(custodyMovements, 'custody_movements', FIELDS)}`,
    [id, key, network, NETWORK_INFO[network].coin, signed.toAddress, signed.amount.toString(), signed.txHash, signed.rawTx],
  );
  const movement = inserted.rows[0];
  return movement && sendMovement(pool, chain, movement);
}

/** The idempotency key of the network's `n`-th consolidation (its id is `movementId` of it; the signer checks it). */
export const consolidationKey = (network: Network, n: number) => `consolidation:${network}:${n}`;

/** SIGNED → BROADCAST: sent unless the chain already has it. */
async function sendMovement(pool: pg.Pool, chain: WithdrawalChainPort, movement: Movement): Promise<Movement> {
  const { txHash, rawTx } = sent(movement);
  const ref = { txHash, outputIndex: 0 };
  const known = (await chain.status(movement.network, [ref])).get(transferKey(ref));
  if (known === undefined || known.state === 'DROPPED') await chain.broadcast(movement.network, rawTx);
  const moved = await moveOrderReturning<Movement>(pool, ORDER_TABLES.custodyMovement, movement.id, { from: 'SIGNED', to: 'BROADCAST', ifMoved: 'skip' }, RETURNING);
  return moved ?? movement;
}

/** A signed movement's transaction (the table's check holds both from SIGNED on). */
function sent(movement: Movement): { txHash: string; rawTx: string } {
  if (movement.txHash === null || movement.rawTx === null) throw new Error(`custody movement ${movement.id} is ${movement.state} without its transaction`);
  return { txHash: movement.txHash, rawTx: movement.rawTx };
}

/**
 * BROADCAST → COMPLETED (booked) once confirmed, or FAILED when the chain dropped it; SIGNED ones are sent; COMPLETED
 * ones a reorganisation put in doubt are re-checked first (reopened when their transaction left the chain).
 */
export async function confirmCustodyMovements(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger): Promise<number> {
  await recheckCompletedMovements(pool, chain, log);
  const open = await pool.query<Movement>(`${SELECT} WHERE m.state IN ('SIGNING', 'SIGNED', 'BROADCAST') AND m.network = ANY($1::text[]) ORDER BY m.created_at LIMIT 100`, [chain.networks]);
  let done = 0;
  for (const movement of open.rows) {
    if (movement.state === 'SIGNING' || movement.state === 'SIGNED') {
      try {
        const signed = movement.state === 'SIGNING' ? await signMovement(pool, chain, movement) : movement;
        if (signed.state === 'FAILED') log.error({ movement: movement.id, amount: movement.amount, currency: movement.currency }, 'cold sweep not signed: the hot wallet cannot pay it; nothing was sent');
        if (signed.state === 'SIGNED') await sendMovement(pool, chain, signed);
      } catch (error) {
        log.warn({ err: error, movement: movement.id }, 'cold sweep not sent; it will be tried again');
      }
      continue;
    }
    const ref = { txHash: sent(movement).txHash, outputIndex: 0 };
    const status = (await chain.status(movement.network, [ref])).get(transferKey(ref));
    if (!status) continue;
    if (status.state === 'SEEN' && status.confirmations >= chain.requiredConfirmations(movement.network)) {
      await inTransaction(pool, async (client) => {
        const claimed = await moveOrder(client, ORDER_TABLES.custodyMovement, movement.id, {
          from: 'BROADCAST',
          to: 'COMPLETED',
          set: { confirmations: status.confirmations, network_fee: status.fee ?? 0n, block_height: status.blockHeight, closed_at: NOW },
          ifMoved: 'skip',
        });
        if (!claimed) return;
        const world = systemAccountId(SYSTEM_ACCOUNTS.world(movement.network));
        // Keys and kinds the audit (custody-audit.ts) checks; a movement reopened before books its round's own. A
        // consolidation stays in the custody: only its fee left it.
        const round = movement.reopened;
        if (movement.kind === 'COLD') {
          const from = systemAccountId(SYSTEM_ACCOUNTS.coldStorage(movement.network));
          await transferEntry(client, coldSweepEntry('sweep', movement.id, round), { from, to: world, money: { currency: movement.currency, units: unitsFromRow(movement.amount) } });
        }
        if (status.fee !== undefined && status.fee > 0n) {
          const fee = { currency: NETWORK_INFO[movement.network].coin, units: unitsOf(status.fee) };
          await transferEntry(client, coldSweepEntry('networkFee', movement.id, round), { from: networkFeePayer(movement.network), to: world, money: fee });
        }
        done += 1;
      });
    } else if (status.state !== 'SEEN') {
      await moveOrder(pool, ORDER_TABLES.custodyMovement, movement.id, { from: 'BROADCAST', to: 'FAILED', set: { closed_at: NOW }, ifMoved: 'skip' });
      log.error({ movement: movement.id, kind: movement.kind, tx: movement.txHash }, 'cold sweep left the chain: nothing was booked; run it again with another key');
    } else if (status.confirmations !== movement.confirmations) {
      await pool.query(`UPDATE custody_movements SET confirmations = $2 WHERE id = $1 AND state = 'BROADCAST'`, [movement.id, status.confirmations]);
    }
  }
  return done;
}

/**
 * COMPLETED movements a reorganisation put in doubt (deposits.ts `unwindReorg`): still confirmed, the doubt is lifted;
 * otherwise BROADCAST again with its booking (amount and network fee) taken back in one entry
 * (`cold-sweep:reopen:<id>#<n>`), and the rules above apply again: completed once mined, FAILED only when dropped.
 */
async function recheckCompletedMovements(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger): Promise<void> {
  const doubtful = await pool.query<Movement & { version: string }>(
    `SELECT ${selectColumns(custodyMovements, 'm', FIELDS)}, m.xmin::text AS version FROM custody_movements m
      WHERE m.state = 'COMPLETED' AND m.in_doubt_since IS NOT NULL AND m.network = ANY($1::text[]) LIMIT 100`,
    [chain.networks],
  );
  for (const movement of doubtful.rows) {
    const ref = { txHash: sent(movement).txHash, outputIndex: 0 };
    const status = (await chain.status(movement.network, [ref])).get(transferKey(ref));
    if (!status) continue;
    if (status.state === 'SEEN' && status.blockHeight !== null && status.confirmations >= chain.requiredConfirmations(movement.network)) {
      await pool.query(`UPDATE custody_movements SET in_doubt_since = NULL, block_height = $2 WHERE id = $1 AND state = 'COMPLETED' AND xmin = $3::text::xid`, [movement.id, status.blockHeight, movement.version]);
      continue;
    }
    const reopened = await inTransaction(pool, async (client) => {
      const claimed = await client.query(`SELECT 1 FROM custody_movements WHERE id = $1 AND state = 'COMPLETED' AND xmin = $2::text::xid FOR UPDATE SKIP LOCKED`, [movement.id, movement.version]);
      if (claimed.rowCount === 0) return false;
      const round = movement.reopened + 1;
      const world = systemAccountId(SYSTEM_ACCOUNTS.world(movement.network));
      const fee = unitsFromRowOrZero(movement.networkFee, 'network_fee');
      const coin = NETWORK_INFO[movement.network].coin;
      // A consolidation's booking was its fee alone.
      const moved = movement.kind === 'COLD' ? unitsFromRow(movement.amount) : unitsOf(0n);
      const postings: Posting[] = [
        ...(moved > 0n ? [{ account: systemAccountId(SYSTEM_ACCOUNTS.coldStorage(movement.network)), currency: movement.currency, bucket: 'AVAILABLE' as const, amount: moved }] : []),
        { account: world, currency: movement.currency, bucket: 'AVAILABLE', amount: negateUnits(addUnits(moved, coin === movement.currency ? fee : unitsOf(0n))) },
      ];
      if (fee > 0n) {
        postings.push({ account: await feePayerOf(client, coldSweepEntry('networkFee', movement.id, movement.reopened).key, movement.network), currency: coin, bucket: 'AVAILABLE', amount: fee });
        if (coin !== movement.currency) postings.push({ account: world, currency: coin, bucket: 'AVAILABLE', amount: negateUnits(fee) });
      }
      if (moved > 0n || fee > 0n) await postEntry(client, coldSweepEntry('reopen', movement.id, round), postings);
      await moveOrder(client, ORDER_TABLES.custodyMovement, movement.id, {
        from: 'COMPLETED',
        to: 'BROADCAST',
        set: { reopened: round, network_fee: null, block_height: null, in_doubt_since: null, closed_at: null, confirmations: status.state === 'SEEN' ? status.confirmations : 0 },
      });
      return true;
    });
    if (reopened) log.warn({ movement: movement.id, network: movement.network, tx: movement.txHash, now: status.state }, 'a completed cold sweep’s transaction left the chain: in flight again, its booking taken back');
  }
}
