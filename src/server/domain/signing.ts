/**
 * What the signer signs (issue 31): only what the ledger shows as held and approved, read from the database by the
 * order's id, never from the request. The gateway and the worker hold no key; they ask the signer "sign withdrawal
 * <id>", "batch <id>", "replace <id>", "sweep <id>", "top up <sweep>:<n>", and it answers the signed transaction or
 * refuses with the reason (SigningRefusal), which it logs.
 *
 * - A withdrawal: EXTERNAL, PENDING (approved: it never waited for review, or an operator approved it), its hold on
 *   the ledger for its amount and currency and not released, and its approval seal intact: an HMAC over its id,
 *   network, currency, destination, amount and fee, made with a key the database does not hold (derived from the
 *   signer's token) when it became PENDING. One whose figures changed in the database after approval no longer
 *   matches its seal and is refused. The signed payment is amount less fee to the destination; the network's fee
 *   is the adapter's, within its ceiling (MAX_FEE_RATE).
 * - A batch: every member as above. A replacement by fee: BROADCAST, sealed, the stuck transaction read from its row.
 * - A sweep: PENDING, its deposit address the custody's own derivation of its index, its amount at most the credited
 *   deposits it collects; it goes to the hot wallet the signer derives itself. A gas top-up: to that same address
 *   of the custody, the next top-up of a PENDING sweep.
 * - A cold sweep (HOT_WALLET_MAX): a recorded COLD movement waiting to be signed, to the signer's own COLD_WALLET, not
 *   taking the custody below the signer's own ceiling. A consolidation (UTXO_CONSOLIDATE_BELOW): the network's next
 *   one, built by the signer's adapter from deposit outputs into the hot wallet's own address.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { subtractUnits, unitsOf, type Units } from '../../lib/money.ts';
import { unitsFromRow } from '../db/amounts.ts';
import { NETWORK_INFO, type ChainEnv, type Network } from '../../lib/currencies.ts';
import type { ChainAddressing, SweepSource, WithdrawalOrder } from '../adapters/chains/port.ts';
import type { WalletKeys } from '../adapters/keys/port.ts';
import { DomainError } from './errors.ts';
import type { Queryable } from './ledger.ts';
import { orderEntryKey } from './orders/entry-keys.ts';
import { consolidationKey, movementId } from './custody-movements.ts';
import { coldAddress, type ColdWallet } from './hot-cold.ts';

/** Why the signer would not sign: the order is unknown, not approved, or not what was approved. Nothing was signed. */
export class SigningRefusal extends DomainError<'UNKNOWN_ORDER' | 'NOT_APPROVED' | 'TAMPERED' | 'NOT_HELD' | 'BAD_REQUEST' | 'OVER_DAILY_CAP' | 'OVER_FEE_CEILING'> {}

/** The figures an approval covers. */
export type ApprovedFigures = { id: string; network: string; currency: string; toAddress: string; amount: string; fee: string };

/** Makes a withdrawal's approval seal; composition builds it from the signer's token (`approvalSealer`). */
export type ApprovalSeal = (figures: ApprovedFigures) => string;

const SEAL_CONTEXT = 'wallet/withdrawal-approval/v1';

/** The approval seal of `key` (the signer's token): HMAC-SHA256 over the figures, under a key of its own purpose. */
export function approvalSealer(token: string): ApprovalSeal {
  const key = createHmac('sha256', token).update(SEAL_CONTEXT).digest();
  return (f) => createHmac('sha256', key).update(JSON.stringify([f.id, f.network, f.currency, f.toAddress, f.amount, f.fee])).digest('hex');
}

type WithdrawalRow = ApprovedFigures & { walletAccountId: string; kind: string; state: string; batchId: string | null; seal: string | null; rawTx: string | null; txHash: string | null };

const WITHDRAWAL = `SELECT id, wallet_account_id AS "walletAccountId", kind, state, network, currency, to_address AS "toAddress", amount::text AS amount, fee::text AS fee,
  batch_id AS "batchId", approval_seal AS seal, raw_tx AS "rawTx", tx_hash AS "txHash" FROM withdrawals`;

/** Seals a withdrawal as it becomes PENDING (approved), in the transaction that moves it there. */
export async function sealApproval(db: Queryable, id: string, seal: ApprovalSeal | undefined): Promise<void> {
  if (!seal) return;
  const row = (await db.query<WithdrawalRow>(`${WITHDRAWAL} WHERE id = $1`, [id])).rows[0];
  if (!row) throw new Error(`withdrawal ${id} is not there to seal`);
  await db.query('UPDATE withdrawals SET approval_seal = $2 WHERE id = $1', [id, seal(row)]);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuid(id: unknown, what: string): string {
  if (typeof id !== 'string' || !UUID.test(id)) throw new SigningRefusal('BAD_REQUEST', `${what} ${JSON.stringify(id)} is not an id`);
  return id;
}

/** A withdrawal as approved and held, or the refusal. */
async function approvedWithdrawal(db: Queryable, id: string, states: readonly string[], seal: ApprovalSeal): Promise<WithdrawalRow> {
  const row = (await db.query<WithdrawalRow>(`${WITHDRAWAL} WHERE id = $1`, [uuid(id, 'withdrawal')])).rows[0];
  if (!row) throw new SigningRefusal('UNKNOWN_ORDER', `withdrawal ${id} does not exist`);
  if (row.kind !== 'EXTERNAL' || !states.includes(row.state)) throw new SigningRefusal('NOT_APPROVED', `withdrawal ${id} is ${row.kind} ${row.state}, not an approved outside one (${states.join(', ')})`);
  const expected = Buffer.from(seal(row), 'hex');
  const found = Buffer.from(row.seal ?? '', 'hex');
  if (found.length !== expected.length || !timingSafeEqual(found, expected)) {
    throw new SigningRefusal('TAMPERED', `withdrawal ${id} does not match its approval (amount, fee, destination or network changed since, or never approved)`);
  }
  const held = await db.query<{ amount: string | null; released: boolean }>(
    `SELECT (SELECT sum(p.amount)::text FROM ledger_entries e JOIN ledger_postings p ON p.entry_id = e.id
              WHERE e.idempotency_key = $1 AND p.bucket = 'ON_HOLD' AND p.currency = $3 AND p.ledger_account_id = $4) AS amount,
            EXISTS (SELECT 1 FROM ledger_entries WHERE idempotency_key = $2) AS released`,
    [orderEntryKey('withdrawal', row.id, 'hold'), orderEntryKey('withdrawal', row.id, 'release'), row.currency, row.walletAccountId],
  );
  const hold = held.rows[0];
  if (!hold?.amount || unitsFromRow(hold.amount, 'amount') !== unitsFromRow(row.amount, 'amount') || hold.released) {
    throw new SigningRefusal('NOT_HELD', `withdrawal ${id}: the ledger holds ${hold?.amount ?? 'nothing'} ${row.currency}${hold?.released ? ' (released)' : ''}, not its ${row.amount}`);
  }
  return row;
}

/**
 * A PENDING withdrawal was never paid: one with a settlement (set back to PENDING in the database) is not signed again.
 * Its first settlement's key is enough: a later round's (`…#n`, after a reopening) comes only after it, and no entry
 * is ever deleted. One key through the unique index: a `LIKE` on the prefix read every ledger entry (0.3–1 s of a
 * PostgreSQL core per withdrawal signed on bench:scale's 10,000,000).
 */
async function neverSettled(db: Queryable, id: string): Promise<void> {
  const settled = await db.query('SELECT 1 FROM ledger_entries WHERE idempotency_key = $1', [orderEntryKey('withdrawal', id, 'settle')]);
  if (settled.rowCount) throw new SigningRefusal('NOT_APPROVED', `withdrawal ${id} was already paid (it has a settlement)`);
}

const orderOf = (w: WithdrawalRow): WithdrawalOrder => ({ reference: w.id, network: w.network as Network, currency: w.currency, toAddress: w.toAddress, amount: subtractUnits(unitsFromRow(w.amount), unitsFromRow(w.fee, 'fee')) });

/** The order of a PENDING withdrawal the worker asks to sign. */
export async function withdrawalToSign(db: Queryable, id: string, seal: ApprovalSeal): Promise<WithdrawalOrder> {
  const w = await approvedWithdrawal(db, id, ['PENDING'], seal);
  if (w.batchId !== null) throw new SigningRefusal('NOT_APPROVED', `withdrawal ${id} is paid by batch ${w.batchId}`);
  await neverSettled(db, w.id);
  return orderOf(w);
}

/** The payments of an unsigned batch: each member PENDING, approved and held, in id order (as the worker pays them). */
export async function batchToSign(db: Queryable, id: string, seal: ApprovalSeal): Promise<{ network: Network; orders: WithdrawalOrder[] }> {
  const batch = (await db.query<{ network: Network; signed: boolean }>('SELECT network, signed_at IS NOT NULL AS signed FROM withdrawal_batches WHERE id = $1', [uuid(id, 'batch')])).rows[0];
  if (!batch) throw new SigningRefusal('UNKNOWN_ORDER', `batch ${id} does not exist`);
  if (batch.signed) throw new SigningRefusal('NOT_APPROVED', `batch ${id} is already signed`);
  const members = await db.query<{ id: string }>(`SELECT id FROM withdrawals WHERE batch_id = $1 AND state = 'PENDING' ORDER BY id`, [id]);
  if (members.rows.length === 0) throw new SigningRefusal('NOT_APPROVED', `batch ${id} has no pending withdrawal`);
  const orders: WithdrawalOrder[] = [];
  for (const member of members.rows) {
    const w = await approvedWithdrawal(db, member.id, ['PENDING'], seal);
    await neverSettled(db, w.id);
    if (w.network !== batch.network) throw new SigningRefusal('TAMPERED', `withdrawal ${w.id} is on ${w.network}, its batch ${id} on ${batch.network}`);
    orders.push(orderOf(w));
  }
  return { network: batch.network, orders };
}

/**
 * A BROADCAST withdrawal's order and the transaction that waits unmined, for a replacement by fee, with every payment
 * that transaction makes as sealed (a batch's members, each checked as the order is): the replacement pays those and
 * nothing else (StuckWithdrawal.payments).
 */
export async function withdrawalToReplace(db: Queryable, id: string, seal: ApprovalSeal): Promise<{ order: WithdrawalOrder; rawTx: string; txHash: string; payments: { address: string; amount: Units }[] }> {
  const w = await approvedWithdrawal(db, id, ['BROADCAST'], seal);
  if (!w.rawTx || !w.txHash) throw new SigningRefusal('NOT_APPROVED', `withdrawal ${id} has no transaction to replace`);
  const members = w.batchId === null ? [] : (await db.query<{ id: string }>(`SELECT id FROM withdrawals WHERE batch_id = $1 AND tx_hash = $2 AND id <> $3 ORDER BY id`, [w.batchId, w.txHash, w.id])).rows;
  const payments = [orderOf(w)];
  for (const member of members) payments.push(orderOf(await approvedWithdrawal(db, member.id, ['SIGNED', 'BROADCAST'], seal)));
  return { order: orderOf(w), rawTx: w.rawTx, txHash: w.txHash, payments: payments.map((o) => ({ address: o.toAddress, amount: o.amount })) };
}

type SweepRow = { id: string; network: Network; currency: string; address: string; index: number; amount: string; state: string; topUps: number; collected: string | null };

/** A sweep (`sweep:<id>`) or its n-th top-up (`sweep:<id>:top-up:<n>`), checked against the custody's own derivation. */
async function sweepOf(db: Queryable, reference: unknown, keys: WalletKeys, addresses: ChainAddressing): Promise<{ sweep: SweepRow; topUp: number | undefined }> {
  const match = typeof reference === 'string' ? /^sweep:([0-9a-f-]{36})(?::top-up:(\d{1,6}))?$/i.exec(reference) : null;
  if (!match?.[1]) throw new SigningRefusal('BAD_REQUEST', `${JSON.stringify(reference)} is not a sweep's reference`);
  const sweep = (
    await db.query<SweepRow>(
      `SELECT s.id, s.network, s.currency, s.address, s.derivation_index AS index, s.amount::text AS amount, s.state, s.top_ups AS "topUps",
              (SELECT sum(d.amount)::text FROM sweep_deposits x JOIN chain_deposits d ON d.id = x.deposit_id
                WHERE x.sweep_id = s.id AND d.state = 'CREDITED' AND d.currency = s.currency AND d.to_address = s.address) AS collected
         FROM sweeps s WHERE s.id = $1`,
      [uuid(match[1], 'sweep')],
    )
  ).rows[0];
  if (!sweep) throw new SigningRefusal('UNKNOWN_ORDER', `sweep ${match[1]} does not exist`);
  if (sweep.state !== 'PENDING') throw new SigningRefusal('NOT_APPROVED', `sweep ${sweep.id} is ${sweep.state}, not PENDING`);
  const own = await addresses.derive(keys, sweep.network, sweep.index);
  if (own !== sweep.address) throw new SigningRefusal('TAMPERED', `sweep ${sweep.id}: derivation ${sweep.index} on ${sweep.network} is ${own}, not ${sweep.address}`);
  return { sweep, topUp: match[2] === undefined ? undefined : Number(match[2]) };
}

/** The sweep the worker asks for: from the custody's own deposit address, at most what its credited deposits hold. */
export async function sweepToSign(db: Queryable, reference: unknown, keys: WalletKeys, addresses: ChainAddressing): Promise<SweepSource> {
  const { sweep, topUp } = await sweepOf(db, reference, keys, addresses);
  if (topUp !== undefined) throw new SigningRefusal('BAD_REQUEST', `${String(reference)} is a top-up, not a sweep`);
  if (!sweep.collected || unitsFromRow(sweep.amount) > unitsFromRow(sweep.collected, 'collected')) {
    throw new SigningRefusal('NOT_HELD', `sweep ${sweep.id} moves ${sweep.amount} ${sweep.currency}, its credited deposits hold ${sweep.collected ?? 'nothing'}`);
  }
  return { network: sweep.network, currency: sweep.currency, address: sweep.address, index: sweep.index, amount: unitsFromRow(sweep.amount), reference: `sweep:${sweep.id}` };
}

/** A gas top-up pays at most this many times the network's fee for moving the sweep's currency (`topUpToSign`). */
export const TOP_UP_FEE_MARGIN = 2n;

/**
 * A gas top-up: the hot wallet's coin to the sweep's own deposit address, the sweep's next one, of at most what the
 * sweep's transfer needs: `feeOf` is the adapter's estimate of the fee for moving the sweep's currency (in the
 * network's coin), and the top-up may be TOP_UP_FEE_MARGIN times that, no more (OVER_FEE_CEILING).
 */
export async function topUpToSign(
  db: Queryable,
  reference: unknown,
  amount: unknown,
  keys: WalletKeys,
  addresses: ChainAddressing,
  feeOf: (sweep: { network: Network; currency: string; address: string }) => Promise<Units>,
): Promise<{ network: Network; address: string; amount: Units; reference: string }> {
  const { sweep, topUp } = await sweepOf(db, reference, keys, addresses);
  if (topUp === undefined) throw new SigningRefusal('BAD_REQUEST', `${String(reference)} is a sweep, not a top-up`);
  if (topUp !== sweep.topUps + 1) throw new SigningRefusal('NOT_APPROVED', `sweep ${sweep.id} has had ${sweep.topUps} top-ups: the next is ${sweep.topUps + 1}, not ${topUp}`);
  if (typeof amount !== 'string' || !/^[1-9]\d{0,40}$/.test(amount)) throw new SigningRefusal('BAD_REQUEST', `${JSON.stringify(amount)} is not an amount`);
  const ceiling = (await feeOf({ network: sweep.network, currency: sweep.currency, address: sweep.address })) * TOP_UP_FEE_MARGIN;
  if (BigInt(amount) > ceiling) {
    throw new SigningRefusal('OVER_FEE_CEILING', `top-up ${topUp} of sweep ${sweep.id} asks ${amount} of ${sweep.network}'s coin; moving its ${sweep.currency} needs at most ${ceiling} (the fee estimate × ${TOP_UP_FEE_MARGIN})`);
  }
  return { network: sweep.network, address: sweep.address, amount: unitsOf(BigInt(amount)), reference: `sweep:${sweep.id}:top-up:${topUp}` };
}

/**
 * What the signer checks cold sweeps and consolidations against: its own configuration (HOT_WALLET_MAX, COLD_WALLET,
 * UTXO_CONSOLIDATE_BELOW under CHAIN_ENV), never the request's or the database's figures alone.
 */
export type HotColdRules = Readonly<{
  env: ChainEnv;
  ceiling: Readonly<Partial<Record<Network, bigint>>>;
  cold: Readonly<Partial<Record<Network, ColdWallet>>>;
  consolidateBelow: Readonly<Partial<Record<Network, bigint>>>;
}>;

type ColdMovementRow = { id: string; kind: string; network: Network; currency: string; toAddress: string; amount: string; state: string; sweeps: number };

/**
 * A cold sweep (`cold:<id>`) the worker recorded (custody_movements, COLD, SIGNING) and asks to sign: to the signer's
 * own COLD_WALLET of its network (the address, or a receiving address of the xpub at most as far as the network's cold
 * sweeps so far), of the network's coin, and not taking what the custody holds there (`held`, as the worker reads it)
 * below the signer's HOT_WALLET_MAX. Amount and fee are the adapter's, from the hot wallet as for a withdrawal.
 */
export async function coldSweepToSign(
  db: Queryable,
  id: unknown,
  rules: HotColdRules,
  held: (network: Network) => Promise<bigint>,
  signedBefore: (network: Network, reference: string) => Promise<boolean> = () => Promise.resolve(false),
): Promise<WithdrawalOrder> {
  const m = (
    await db.query<ColdMovementRow>(
      `SELECT m.id, m.kind, m.network, m.currency, m.to_address AS "toAddress", m.amount::text AS amount, m.state,
              (SELECT count(*)::int FROM custody_movements c WHERE c.network = m.network AND c.kind = 'COLD') AS sweeps
         FROM custody_movements m WHERE m.id = $1`,
      [uuid(id, 'custody movement')],
    )
  ).rows[0];
  if (!m) throw new SigningRefusal('UNKNOWN_ORDER', `custody movement ${String(id)} does not exist`);
  if (m.kind !== 'COLD' || m.state !== 'SIGNING') throw new SigningRefusal('NOT_APPROVED', `custody movement ${m.id} is ${m.kind} ${m.state}, not a cold sweep waiting to be signed`);
  const cold = rules.cold[m.network];
  const ceiling = rules.ceiling[m.network];
  if (!cold || ceiling === undefined) throw new SigningRefusal('NOT_APPROVED', `the signer has no HOT_WALLET_MAX and COLD_WALLET for ${m.network}: it signs no cold sweep there`);
  if (m.currency !== NETWORK_INFO[m.network].coin) throw new SigningRefusal('TAMPERED', `cold sweep ${m.id} moves ${m.currency}, not ${m.network}'s coin`);
  if (!isColdDestination(cold, m.network, m.toAddress, rules.env, m.sweeps)) {
    throw new SigningRefusal('TAMPERED', `cold sweep ${m.id} pays ${m.toAddress}, not the signer's COLD_WALLET for ${m.network}`);
  }
  const amount = unitsFromRow(m.amount);
  const reference = `cold:${m.id}`;
  if (amount <= 0n) throw new SigningRefusal('NOT_HELD', `cold sweep ${m.id} moves ${m.amount} ${m.currency}: nothing to sweep`);
  // Signed before (the signer or the worker died before the worker recorded it): the adapter hands back those bytes,
  // checked against the holdings of then. Refusing now would leave its inputs (or nonce) taken by a transaction that
  // is never sent.
  if (await signedBefore(m.network, reference)) return { reference, network: m.network, currency: m.currency, toAddress: m.toAddress, amount };
  const holds = await held(m.network);
  if (holds - amount < ceiling) {
    throw new SigningRefusal('NOT_HELD', `cold sweep ${m.id} moves ${m.amount} ${m.currency}: the custody holds ${holds}, it would fall below HOT_WALLET_MAX ${ceiling}`);
  }
  return { reference, network: m.network, currency: m.currency, toAddress: m.toAddress, amount };
}

/** Whether `address` is COLD_WALLET's: its address, or its xpub's receiving address 0…`upTo`. */
function isColdDestination(cold: ColdWallet, network: Network, address: string, env: ChainEnv, upTo: number): boolean {
  if ('address' in cold) return cold.address === address;
  for (let index = 0; index <= upTo; index += 1) {
    try {
      if (coldAddress(cold, network, index, env) === address) return true;
    } catch {
      return false;
    }
  }
  return false;
}

/**
 * A consolidation (`consolidation:<id>`) the worker asks for: the network's next one (its id is that of the
 * consolidations recorded so far, so none is open), on a network where the signer's own UTXO_CONSOLIDATE_BELOW is set,
 * at most at that fee rate. The adapter builds it from the custody's deposit outputs alone into a fresh address of the
 * hot wallet it derives itself, once per reference.
 */
export async function consolidationToSign(db: Queryable, reference: unknown, network: unknown, rules: HotColdRules): Promise<{ reference: string; network: Network; maxRate: bigint }> {
  const match = typeof reference === 'string' ? /^consolidation:([0-9a-f-]{36})$/i.exec(reference) : null;
  if (!match?.[1]) throw new SigningRefusal('BAD_REQUEST', `${JSON.stringify(reference)} is not a consolidation's reference`);
  const id = uuid(match[1], 'consolidation');
  if (typeof network !== 'string' || !(network in NETWORK_INFO)) throw new SigningRefusal('BAD_REQUEST', `${JSON.stringify(network)} is not a network`);
  const net = network as Network;
  const maxRate = rules.consolidateBelow[net];
  if (maxRate === undefined) throw new SigningRefusal('NOT_APPROVED', `the signer has no UTXO_CONSOLIDATE_BELOW for ${net}: it signs no consolidation there`);
  const count = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM custody_movements WHERE network = $1 AND kind = 'CONSOLIDATION'`, [net]);
  const next = movementId(consolidationKey(net, count.rows[0]?.n ?? 0));
  if (next !== id.toLowerCase()) throw new SigningRefusal('NOT_APPROVED', `${reference as string} is not ${net}'s next consolidation (${next})`);
  return { reference: `consolidation:${next}`, network: net, maxRate };
}
