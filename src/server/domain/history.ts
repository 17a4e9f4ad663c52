/**
 * The transaction history (SPEC §3 Transaction, §7 asset/transactions): rows of wallet_transactions, which every
 * feature writes (deposits here; withdrawals, swaps, buy and sell later), shown with exact decimal amounts.
 */
import { formatMoney, money, unitsOf, type Units } from '../../lib/money.ts';
import { explorerLink, NETWORK_INFO, isNetwork } from '../../lib/currencies.ts';
import type { Catalogue } from './catalogue.ts';
import { pendingReasonOf, withdrawalFailureCode, type PendingReason, type WithdrawalState } from './withdrawals/view.ts';
import type pg from 'pg';
import { balancesOf, type Queryable } from './ledger.ts';
import { unitsFromRow } from '../db/amounts.ts';
import { inTransaction } from '../db/transaction.ts';
import type { HistoryBalance } from '../../lib/wire/assets.ts';
import type { chainDeposits, walletTransactions } from '../db/schema.ts';

export const TRANSACTION_TYPES = ['DEPOSIT', 'WITHDRAWAL', 'EXCHANGE', 'C2F', 'F2C', 'FIAT_DEPOSIT'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

export type TransactionItem = {
  id: string;
  currency: string;
  direction: 'DEPOSIT' | 'WITHDRAWAL';
  transactionType: TransactionType;
  state: 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';
  amount: string;
  fee: string;
  feeCurrency: string;
  from: string | null;
  to: string | null;
  contact: string | null;
  hash: string | null;
  /** ISO 8601. */
  createdDate: string;
  completedDate: string | null;
  accountFromType: 'B2C' | 'B2B' | null;
  accountToType: 'B2C' | 'B2B' | null;
  fromCurrency: string | null;
  toCurrency: string | null;
  fromAmount: string | null;
  toAmount: string | null;
  fiatCurrency: string | null;
  fiatAmount: string | null;
  network: string | null;
  blockchain: string | null;
  explorerUrl: string | null;
  senderName: string | null;
  recipientName: string | null;
  recipientAddress: string | null;
  serviceFee: string;
  exchangeRate: string | null;
  failureReason: string | null;
  /** A withdrawal waiting for an operator's review (withdrawals/review.ts): shown pending, labelled "Under review". */
  underReview: boolean;
  /**
   * Why an IN_PROGRESS withdrawal is not sent yet, a code the client translates (withdrawals/view.ts
   * `pendingReasonOf`): WAITING_FOR_FUNDS (the hot wallet cannot pay it now; it goes out once refilled) or
   * UNDER_REVIEW; null for everything else.
   */
  pendingReason: PendingReason | null;
};

export type TransactionDetails = TransactionItem & { confirmations: number | null; requiredConfirmations: number | null };

type Transaction = typeof walletTransactions.$inferSelect;

// The columns a history item shows, read under their schema names (`from_address AS "fromAddress"`).
const FIELDS = [
  'id', 'currency', 'direction', 'transactionType', 'state', 'amount', 'fee', 'feeCurrency', 'network', 'fromAddress', 'toAddress', 'contact',
  'senderName', 'recipientName', 'hash', 'accountFromType', 'accountToType', 'fromCurrency', 'toCurrency', 'fromAmount', 'toAmount',
  'fiatCurrency', 'fiatAmount', 'exchangeRate', 'failureReason', 'createdAt', 'completedAt',
] as const satisfies ReadonlyArray<keyof Transaction>;

type Row = Pick<Transaction, (typeof FIELDS)[number]> & { withdrawalState: WithdrawalState | null; waitingForFunds: boolean | null };
type Depth = { [K in 'confirmations' | 'confirmationsRequired']: (typeof chainDeposits.$inferSelect)[K] | null };

const columns = (table: string) =>
  [
    ...FIELDS.map((field) => `${table}.${field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)} AS "${field}"`),
    `pending.state AS "withdrawalState"`,
    `pending.waiting_for_funds_since IS NOT NULL AS "waitingForFunds"`,
  ].join(', ');

/**
 * The withdrawal order behind the sender's item of one still in progress (one key lookup per such item, none for the
 * others), whose state and wait for the hot wallet give the reason it is pending (toItem).
 */
const pendingOrder = (table: string) => `LEFT JOIN LATERAL (
      SELECT r.state, r.waiting_for_funds_since FROM withdrawals r
       WHERE ${table}.state = 'IN_PROGRESS' AND ${table}.transaction_type = 'WITHDRAWAL'
         AND r.id = CASE WHEN ${table}.reference LIKE 'withdrawal:%' THEN substring(${table}.reference from 12)::uuid END) pending ON true`;

export type HistoryQuery = { currency?: string | undefined; sort: 'ASC' | 'DESC'; pageSize: number; pageNumber: number };

/** One page of an account's history, newest first by default; a currency filter also matches swaps from or to it. */
export async function listTransactions(db: Queryable, walletAccountId: string, query: HistoryQuery, catalogue: Catalogue): Promise<TransactionItem[]> {
  const order = query.sort === 'ASC' ? 'ASC' : 'DESC';
  const result = await db.query<Row>(
    `SELECT ${columns('t')} FROM wallet_transactions t ${pendingOrder('t')}
      WHERE t.wallet_account_id = $1 AND ($2::text IS NULL OR t.currency = $2 OR t.from_currency = $2 OR t.to_currency = $2)
      ORDER BY t.created_at ${order}, t.id ${order} LIMIT $3 OFFSET $4`,
    [walletAccountId, query.currency ?? null, query.pageSize, (query.pageNumber - 1) * query.pageSize],
  );
  return result.rows.map((row) => toItem(row, catalogue));
}

/**
 * A page of one currency's history and that currency's balance read from one snapshot (issue 33 item 1): an item the
 * history shows completed is always in the balance beside it, so a screen refreshed by this one read never shows
 * "+98.37 USDC" over a balance of 0. Without a currency filter, the page alone.
 */
export async function historyWithBalance(pool: pg.Pool, walletAccountId: string, query: HistoryQuery, catalogue: Catalogue): Promise<{ result: TransactionItem[]; balance?: HistoryBalance }> {
  const currency = query.currency;
  if (currency === undefined) return { result: await listTransactions(pool, walletAccountId, query, catalogue) };
  return inTransaction(
    pool,
    async (db) => {
      const result = await listTransactions(db, walletAccountId, query, catalogue);
      const held = (await balancesOf(db, walletAccountId)).find((b) => b.currency === currency);
      const units = (value: Units | undefined) => formatMoney(money(currency, value ?? unitsOf(0n)));
      return { result, balance: { currency, totalAvailable: units(held?.available), onHold: units(held?.onHold) } };
    },
    { begin: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' },
  );
}

/** One transaction of the account, or undefined (also when `type` is given and differs). */
export async function findTransaction(
  db: Queryable,
  walletAccountId: string,
  id: string,
  type: TransactionType | undefined,
  catalogue: Catalogue,
): Promise<TransactionDetails | undefined> {
  const result = await db.query<Row & Depth>(
    `SELECT ${columns('t')}, coalesce(d.confirmations, w.confirmations) AS confirmations,
            coalesce(d.confirmations_required, w.confirmations_required) AS "confirmationsRequired"
       FROM wallet_transactions t ${pendingOrder('t')}
       LEFT JOIN chain_deposits d ON d.id = CASE WHEN t.reference LIKE 'deposit:%' THEN substring(t.reference from 9)::uuid END
       -- An outside withdrawal's depth on the chain once broadcast (a transfer between users has none).
       LEFT JOIN withdrawals w ON w.kind = 'EXTERNAL' AND w.state <> 'PENDING' AND w.state <> 'SIGNED'
                              AND w.id = CASE WHEN t.reference LIKE 'withdrawal:%' THEN substring(t.reference from 12)::uuid END
      WHERE t.id = $1 AND t.wallet_account_id = $2 AND ($3::text IS NULL OR t.transaction_type = $3)`,
    [id, walletAccountId, type ?? null],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  return { ...toItem(row, catalogue), confirmations: row.confirmations, requiredConfirmations: row.confirmationsRequired };
}

function toItem(row: Row, catalogue: Catalogue): TransactionItem {
  const coin = catalogue.coins.find((c) => c.currency === row.currency);
  // An unknown currency throws (formatMoney): units are never shown under guessed decimals.
  const units = (value: string | null, currency: string | null) => {
    if (value === null) return null;
    if (currency === null) throw new Error(`history item ${row.id} has an amount without a currency`);
    return formatMoney(money(currency, unitsFromRow(value, 'amount')));
  };
  const feeCurrency = row.feeCurrency ?? row.currency;
  const fee = units(row.fee, feeCurrency) ?? '0';
  return {
    id: row.id,
    currency: row.currency,
    direction: row.direction,
    transactionType: row.transactionType,
    state: row.state,
    amount: units(row.amount, row.currency) ?? '0',
    fee,
    feeCurrency,
    from: row.fromAddress,
    to: row.toAddress,
    contact: row.contact,
    hash: row.hash,
    createdDate: row.createdAt.toISOString(),
    completedDate: row.completedAt?.toISOString() ?? null,
    accountFromType: row.accountFromType,
    accountToType: row.accountToType,
    fromCurrency: row.fromCurrency,
    toCurrency: row.toCurrency,
    fromAmount: units(row.fromAmount, row.fromCurrency),
    toAmount: units(row.toAmount, row.toCurrency),
    fiatCurrency: row.fiatCurrency,
    fiatAmount: units(row.fiatAmount, row.fiatCurrency),
    network: row.network,
    blockchain: row.network && isNetwork(row.network) ? NETWORK_INFO[row.network].blockchain : null,
    explorerUrl: (coin && explorerLink(coin.urlScan, row.hash)) ?? null,
    senderName: row.senderName,
    recipientName: row.recipientName,
    recipientAddress: row.toAddress,
    serviceFee: fee,
    exchangeRate: row.exchangeRate,
    // A withdrawal's reason travels as a code the client translates (the node's English never reaches the user).
    failureReason: row.transactionType === 'WITHDRAWAL' ? withdrawalFailureCode(row.failureReason) : row.failureReason,
    underReview: row.withdrawalState === 'UNDER_REVIEW',
    pendingReason: row.withdrawalState === null ? null : pendingReasonOf({ state: row.withdrawalState, waitingForFunds: row.waitingForFunds === true }),
  };
}
