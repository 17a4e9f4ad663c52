/**
 * The double-entry ledger (ARCHITECTURE.md, "Money and the ledger"): its accounts, balances, types and refusal.
 * Every movement is one journal entry whose postings sum to zero per currency; the writes (`post`, `transfer`,
 * `hold`, `release`, `settle`) are in ledger-writes.ts, which only domain/orders/ imports, so every entry is a step
 * of a flow under a key built in orders/entry-keys.ts. Amounts are bigint atomic units here, branded `Units` (src/lib/money.ts), and numeric in PostgreSQL.
 */
import type pg from 'pg';
import type { Units } from '../../lib/money.ts';
import { unitsFromRow } from '../db/amounts.ts';
import { createHash } from 'node:crypto';
import { DomainError } from './errors.ts';

export type Bucket = 'AVAILABLE' | 'ON_HOLD';
/** One leg of an entry: signed units of `currency` (a run-time code, so the generic Units), from unitsOf or a row. */
export type Posting = { account: string; currency: string; bucket: Bucket; amount: Units };
export type EntryInput = { key: string; kind: string; reference?: string | undefined; postings: readonly Posting[] };
export type PostedEntry = { entryId: number; replayed: boolean };

/** A pool or a client inside a transaction: a movement joins whatever transaction its caller has open. */
export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export type LedgerProblem = 'INSUFFICIENT_FUNDS' | 'UNBALANCED' | 'UNKNOWN_ACCOUNT' | 'KEY_REUSED';

/**
 * The ledger's refusal. A domain error like any other, so one that escapes to the gateway has its status
 * (domain/errors.ts: spending what is not there is a conflict, the rest are our own faults, answered INTERNAL).
 */
export class LedgerError extends DomainError<`LEDGER_${LedgerProblem}`> {
  readonly problem: LedgerProblem;
  constructor(problem: LedgerProblem, message: string, options?: { cause?: unknown }) {
    super(`LEDGER_${problem}`, message, options);
    this.problem = problem;
  }
}

/** The custodian's own ledger accounts. Only those standing for someone outside may go negative. */
export const SYSTEM_ACCOUNTS = {
  /** Money outside the custody on a network: deposits come from it, withdrawals go to it. */
  world: (network: string) => ({ code: `WORLD:${network}`, kind: 'WORLD', allowNegative: true }),
  hotWallet: (network: string) => ({ code: `HOT_WALLET:${network}`, kind: 'HOT_WALLET', allowNegative: false }),
  feeIncome: () => ({ code: 'FEE_INCOME', kind: 'FEE_INCOME', allowNegative: false }),
  networkFees: (network: string) => ({ code: `NETWORK_FEES:${network}`, kind: 'NETWORK_FEES', allowNegative: true }),
  /** The custodian's coins moved to cold storage (`npm run custody -- sweep-to-cold`): negative by what left the hot outputs. */
  coldStorage: (network: string) => ({ code: `COLD_STORAGE:${network}`, kind: 'COLD_STORAGE', allowNegative: true }),
  /**
   * The hot wallet's gas float on an account-based network (GAS_FLOAT_NETWORKS, domain/gas-float.ts): the network's
   * coin the custodian put there to pay fees, funded from the world by a recorded top-up, every fee the custodian pays
   * on the network booked against it. Negative means more was spent than recorded: a top-up nobody booked.
   */
  gasFloat: (network: string) => ({ code: `GAS_FLOAT:${network}`, kind: 'GAS_FLOAT', allowNegative: true }),
  /**
   * The swap desk's inventory per currency (domain/market/desk.ts). It may hold a short only as far as the operator's
   * limit allows, which the desk checks under the row's lock; the code keeps its first name, the id derives from it.
   */
  swapDesk: () => ({ code: 'SWAP_LIQUIDITY', kind: 'SWAP_LIQUIDITY', allowNegative: true }),
  cardSettlement: () => ({ code: 'CARD_SETTLEMENT', kind: 'CARD_SETTLEMENT', allowNegative: true }),
  payoutSettlement: () => ({ code: 'PAYOUT_SETTLEMENT', kind: 'PAYOUT_SETTLEMENT', allowNegative: true }),
  /** The custodian's side of the operators' credits and debits (domain/operator/adjustments.ts): negative by what it gave. */
  operatorAdjustments: () => ({ code: 'OPERATOR_ADJUSTMENTS', kind: 'OPERATOR_ADJUSTMENTS', allowNegative: true }),
} as const;

export type SystemAccount = { code: string; kind: string; allowNegative: boolean };

/**
 * The networks whose hot wallet keeps a float of the network's coin for gas (token withdrawals, sweeps and the gas
 * top-ups of deposit addresses are paid from it). On the others (UTXO) a fee comes out of the spent outputs.
 */
export const GAS_FLOAT_NETWORKS: readonly string[] = ['ETHEREUM', 'TRON', 'TON'];

/**
 * Who pays what a network charges the custodian for its own transactions (withdrawals, sweeps, top-ups, cold
 * sweeps): the gas float where the network has one, NETWORK_FEES:<network> otherwise. Either way the entry goes to
 * WORLD:<network>, so −WORLD keeps mirroring what the chain holds.
 */
export function networkFeePayer(network: string): string {
  return systemAccountId(GAS_FLOAT_NETWORKS.includes(network) ? SYSTEM_ACCOUNTS.gasFloat(network) : SYSTEM_ACCOUNTS.networkFees(network));
}

/**
 * Who paid a network fee an entry booked (its posting below zero besides WORLD's): a booking taken back is given back
 * to that account, which for a fee booked before the gas float existed is NETWORK_FEES, not today's payer.
 */
export async function feePayerOf(db: Queryable, key: string, network: string): Promise<string> {
  const paid = await db.query<{ account: string }>(
    `SELECT p.ledger_account_id AS account FROM ledger_entries e JOIN ledger_postings p ON p.entry_id = e.id
      WHERE e.idempotency_key = $1 AND p.amount < 0 AND p.ledger_account_id <> $2 LIMIT 1`,
    [key, systemAccountId(SYSTEM_ACCOUNTS.world(network))],
  );
  return paid.rows[0]?.account ?? networkFeePayer(network);
}

/** A system account's id is derived from its code, so every process and database agrees on it without a lookup. */
export function systemAccountId(account: SystemAccount | string): string {
  const code = typeof account === 'string' ? account : account.code;
  const hex = createHash('sha256').update(`ledger-account:${code}`).digest('hex');
  // Shaped as a version-8 (custom) UUID.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Every system account the product uses, per network where it has one; created at start, idempotently. */
export function systemAccounts(networks: readonly string[]): SystemAccount[] {
  return [
    ...networks.flatMap((n) => [SYSTEM_ACCOUNTS.world(n), SYSTEM_ACCOUNTS.hotWallet(n), SYSTEM_ACCOUNTS.networkFees(n), SYSTEM_ACCOUNTS.coldStorage(n)]),
    ...networks.filter((n) => GAS_FLOAT_NETWORKS.includes(n)).map((n) => SYSTEM_ACCOUNTS.gasFloat(n)),
    SYSTEM_ACCOUNTS.feeIncome(),
    SYSTEM_ACCOUNTS.swapDesk(),
    SYSTEM_ACCOUNTS.cardSettlement(),
    SYSTEM_ACCOUNTS.payoutSettlement(),
    SYSTEM_ACCOUNTS.operatorAdjustments(),
  ];
}

export async function ensureSystemAccounts(db: Queryable, accounts: readonly SystemAccount[]): Promise<void> {
  await db.query(
    `INSERT INTO ledger_accounts (id, kind, code, allow_negative)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::boolean[])
     ON CONFLICT DO NOTHING`,
    [accounts.map((a) => systemAccountId(a)), accounts.map((a) => a.kind), accounts.map((a) => a.code), accounts.map((a) => a.allowNegative)],
  );
}

/** A wallet account's ledger account has the wallet account's own id. */
export async function ensureUserLedgerAccount(db: Queryable, walletAccountId: string): Promise<string> {
  await db.query(
    `INSERT INTO ledger_accounts (id, kind, code, wallet_account_id, allow_negative) VALUES ($1::uuid, 'USER', 'USER:' || $1::text, $1::uuid, false)
     ON CONFLICT DO NOTHING`,
    [walletAccountId],
  );
  return walletAccountId;
}

export type Balance = { currency: string; available: Units; onHold: Units };

/** Balances of one ledger account (for a user: their wallet account id). */
export async function balancesOf(db: Queryable, account: string): Promise<Balance[]> {
  const result = await db.query<{ currency: string; available: string; on_hold: string }>(
    'SELECT currency, available, on_hold FROM ledger_balances WHERE ledger_account_id = $1',
    [account],
  );
  return result.rows.map((r) => ({ currency: r.currency, available: unitsFromRow(r.available, 'available'), onHold: unitsFromRow(r.on_hold, 'on_hold') }));
}
