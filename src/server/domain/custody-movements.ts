/**
 * Custodian movements: `npm run custody -- sweep-to-cold <currency> <address> <amount>` sends the custody's own
 * coins from its outputs to a cold address. The transaction is signed and recorded (custody_movements, SIGNED)
 * before it is sent; a repeated command (same idempotency key) is the same movement, sent again only if the chain
 * does not know it. Once confirmed it is booked: COLD_STORAGE → WORLD for the amount and the fee from its payer (the gas float or
 * NETWORK_FEES, ledger.ts networkFeePayer) to WORLD, so the custody's position (−WORLD) keeps matching what its outputs hold.
 * A completed one whose transaction a reorganisation took off the chain is in flight again, its booking taken back
 * (`recheckCompletedMovements`).
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { AmountError, parseAmount } from '../../lib/amount.ts';
import { findCoin, NETWORK_INFO } from '../../lib/currencies.ts';
import { ChainUnsupportedError, transferKey, type ChainAddressing, type CustodyHoldings, type WithdrawalChainPort } from '../adapters/chains/port.ts';
import { selectColumns } from '../db/columns.ts';
import { custodyMovements } from '../db/schema/custody.ts';
import { inTransaction } from '../db/transaction.ts';
import type { Logger } from '../log.ts';
import { DomainError } from './errors.ts';
import { feePayerOf, networkFeePayer, post, SYSTEM_ACCOUNTS, systemAccountId, transfer, type Posting } from './ledger.ts';

export type Movement = Pick<typeof custodyMovements.$inferSelect, (typeof FIELDS)[number]>;
export type MovementChain = WithdrawalChainPort & CustodyHoldings;

/** The operator's mistake: nothing was signed or sent. */
export class CustodyMovementError extends DomainError<'VALIDATION' | 'UNKNOWN_CURRENCY' | 'NOT_AVAILABLE' | 'INSUFFICIENT_FUNDS' | 'IDEMPOTENCY_CONFLICT'> {}

const FIELDS = ['id', 'idempotencyKey', 'network', 'currency', 'toAddress', 'amount', 'state', 'txHash', 'rawTx', 'confirmations', 'networkFee', 'createdAt', 'closedAt', 'reopened'] as const;
const SELECT = `SELECT ${selectColumns(custodyMovements, 'm', FIELDS)} FROM custody_movements m`;

export async function sweepToCold(
  pool: pg.Pool,
  deps: { chain: MovementChain; addresses: ChainAddressing },
  input: { currency: string; address: string; amount: string; key?: string | undefined },
): Promise<Movement> {
  const coin = findCoin(input.currency.toUpperCase());
  if (!coin || coin.token) throw new CustodyMovementError('UNKNOWN_CURRENCY', `${input.currency} is not a network coin this custody holds`);
  const network = coin.network;
  if (!deps.chain.networks.includes(network)) throw new CustodyMovementError('NOT_AVAILABLE', `${network} is off: no chain adapter runs it`);
  let held: bigint;
  try {
    held = (await deps.chain.holdings(network))[coin.currency] ?? 0n;
  } catch (error) {
    if (error instanceof ChainUnsupportedError) throw new CustodyMovementError('NOT_AVAILABLE', `${network} runs on a stand-in without outputs to sweep: sweep-to-cold needs a node`);
    throw error;
  }
  const address = input.address.trim();
  if (!deps.addresses.isValid(network, address)) throw new CustodyMovementError('VALIDATION', `${address} is not a valid ${network} address for this CHAIN_ENV`);
  let amount: bigint;
  try {
    amount = parseAmount(input.amount, coin.decimals);
  } catch (error) {
    if (error instanceof AmountError) throw new CustodyMovementError('VALIDATION', `${input.amount} is not an amount of ${coin.currency} (at most ${coin.decimals} decimals)`);
    throw error;
  }
  if (amount <= 0n) throw new CustodyMovementError('VALIDATION', 'the amount must be above zero');
  const key = input.key ?? `${coin.currency}:${address}:${amount}`;
  const movement = await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`custody-movement:${key}`]);
    const existing = (await client.query<Movement>(`${SELECT} WHERE m.idempotency_key = $1`, [key])).rows[0];
    if (existing) {
      if (existing.currency !== coin.currency || existing.toAddress !== address || BigInt(existing.amount) !== amount) {
        throw new CustodyMovementError('IDEMPOTENCY_CONFLICT', `the key ${key} names another movement (${existing.amount} ${existing.currency} to ${existing.toAddress})`);
      }
      return existing;
    }
    if (amount > held) throw new CustodyMovementError('INSUFFICIENT_FUNDS', `the custody's confirmed ${coin.currency} outputs hold ${held}, less than ${amount}`);
    const id = randomUUID();
    const signed = await deps.chain.signWithdrawal({ reference: `cold:${id}`, network, currency: coin.currency, toAddress: address, amount });
    const inserted = await client.query<Movement>(
      `INSERT INTO custody_movements (id, idempotency_key, network, currency, to_address, amount, state, tx_hash, raw_tx)
       VALUES ($1, $2, $3, $4, $5, $6, 'SIGNED', $7, $8) RETURNING ${selectColumns(custodyMovements, 'custody_movements', FIELDS)}`,
      [id, key, network, coin.currency, address, amount.toString(), signed.txHash, signed.rawTx],
    );
    return inserted.rows[0] as Movement;
  });
  if (movement.state !== 'SIGNED') return movement;
  return sendMovement(pool, deps.chain, movement);
}

/** SIGNED → BROADCAST: sent unless the chain already has it. */
async function sendMovement(pool: pg.Pool, chain: WithdrawalChainPort, movement: Movement): Promise<Movement> {
  const ref = { txHash: movement.txHash, outputIndex: 0 };
  const known = (await chain.status(movement.network, [ref])).get(transferKey(ref));
  if (known === undefined || known.state === 'DROPPED') await chain.broadcast(movement.network, movement.rawTx);
  const moved = await pool.query<Movement>(`UPDATE custody_movements m SET state = 'BROADCAST' WHERE id = $1 AND state = 'SIGNED' RETURNING ${selectColumns(custodyMovements, 'm', FIELDS)}`, [movement.id]);
  return moved.rows[0] ?? movement;
}

/**
 * BROADCAST → COMPLETED (booked) once confirmed, or FAILED when the chain dropped it; SIGNED ones are sent; COMPLETED
 * ones a reorganisation put in doubt are re-checked first (reopened when their transaction left the chain).
 */
export async function confirmCustodyMovements(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger): Promise<number> {
  await recheckCompletedMovements(pool, chain, log);
  const open = await pool.query<Movement>(`${SELECT} WHERE m.state IN ('SIGNED', 'BROADCAST') AND m.network = ANY($1::text[]) ORDER BY m.created_at LIMIT 100`, [chain.networks]);
  let done = 0;
  for (const movement of open.rows) {
    if (movement.state === 'SIGNED') {
      await sendMovement(pool, chain, movement).catch((error: unknown) => log.warn({ err: error, movement: movement.id }, 'cold sweep not sent; it will be tried again'));
      continue;
    }
    const ref = { txHash: movement.txHash, outputIndex: 0 };
    const status = (await chain.status(movement.network, [ref])).get(transferKey(ref));
    if (!status) continue;
    if (status.state === 'SEEN' && status.confirmations >= chain.requiredConfirmations(movement.network)) {
      await inTransaction(pool, async (client) => {
        const claimed = await client.query(
          `UPDATE custody_movements SET state = 'COMPLETED', confirmations = $2, network_fee = $3, block_height = $4, closed_at = now() WHERE id = $1 AND state = 'BROADCAST'`,
          [movement.id, status.confirmations, (status.fee ?? 0n).toString(), status.blockHeight],
        );
        if (claimed.rowCount !== 1) return;
        const world = systemAccountId(SYSTEM_ACCOUNTS.world(movement.network));
        const reference = `custody-movement:${movement.id}`;
        // Keys and kinds the audit (custody-audit.ts) checks; a movement reopened before books its round's own.
        const round = roundSuffix(movement.reopened);
        await transfer(client, { key: `cold-sweep:${movement.id}${round}`, kind: 'COLD_SWEEP', reference, from: systemAccountId(SYSTEM_ACCOUNTS.coldStorage(movement.network)), to: world, currency: movement.currency, amount: BigInt(movement.amount) });
        if (status.fee !== undefined && status.fee > 0n) {
          const feeCurrency = NETWORK_INFO[movement.network].coin;
          await transfer(client, { key: `cold-sweep:network-fee:${movement.id}${round}`, kind: 'NETWORK_FEE', reference, from: networkFeePayer(movement.network), to: world, currency: feeCurrency, amount: status.fee });
        }
        done += 1;
      });
    } else if (status.state !== 'SEEN') {
      await pool.query(`UPDATE custody_movements SET state = 'FAILED', closed_at = now() WHERE id = $1 AND state = 'BROADCAST'`, [movement.id]);
      log.error({ movement: movement.id, tx: movement.txHash }, 'cold sweep left the chain: nothing was booked; run it again with another key');
    } else if (status.confirmations !== movement.confirmations) {
      await pool.query(`UPDATE custody_movements SET confirmations = $2 WHERE id = $1 AND state = 'BROADCAST'`, [movement.id, status.confirmations]);
    }
  }
  return done;
}

/** A round's keys after the first (a movement reopened after a reorganisation): `#<n>`; the first has none. */
const roundSuffix = (round: number) => (round === 0 ? '' : `#${round}`);

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
    const ref = { txHash: movement.txHash, outputIndex: 0 };
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
      const fee = movement.networkFee === null ? 0n : BigInt(movement.networkFee);
      const coin = NETWORK_INFO[movement.network].coin;
      const postings: Posting[] = [
        { account: systemAccountId(SYSTEM_ACCOUNTS.coldStorage(movement.network)), currency: movement.currency, bucket: 'AVAILABLE', amount: BigInt(movement.amount) },
        { account: world, currency: movement.currency, bucket: 'AVAILABLE', amount: -BigInt(movement.amount) - (coin === movement.currency ? fee : 0n) },
      ];
      if (fee > 0n) {
        postings.push({ account: await feePayerOf(client, `cold-sweep:network-fee:${movement.id}${roundSuffix(movement.reopened)}`, movement.network), currency: coin, bucket: 'AVAILABLE', amount: fee });
        if (coin !== movement.currency) postings.push({ account: world, currency: coin, bucket: 'AVAILABLE', amount: -fee });
      }
      await post(client, { key: `cold-sweep:reopen:${movement.id}${roundSuffix(round)}`, kind: 'COLD_SWEEP_REOPEN', reference: `custody-movement:${movement.id}`, postings });
      await client.query(
        `UPDATE custody_movements SET state = 'BROADCAST', reopened = $2, network_fee = NULL, block_height = NULL, in_doubt_since = NULL, closed_at = NULL,
                confirmations = $3 WHERE id = $1`,
        [movement.id, round, status.state === 'SEEN' ? status.confirmations : 0],
      );
      return true;
    });
    if (reopened) log.warn({ movement: movement.id, network: movement.network, tx: movement.txHash, now: status.state }, 'a completed cold sweep’s transaction left the chain: in flight again, its booking taken back');
  }
}
