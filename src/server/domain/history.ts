/**
 * The transaction history (SPEC §3 Transaction, §7 asset/transactions): rows of wallet_transactions, which every
 * feature writes (deposits here; withdrawals, swaps, buy and sell later), shown with exact decimal amounts.
 */
import { formatUnits } from '../../lib/amount.ts';
import { decimalsOf, explorerLink, NETWORK_INFO, isNetwork } from '../../lib/currencies.ts';
import type { Catalogue } from './catalogue.ts';
import type { Queryable } from './ledger.ts';

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
};

export type TransactionDetails = TransactionItem & { confirmations: number | null; requiredConfirmations: number | null };

type Row = {
  id: string;
  currency: string;
  direction: TransactionItem['direction'];
  transaction_type: TransactionType;
  state: TransactionItem['state'];
  amount: string;
  fee: string;
  fee_currency: string | null;
  network: string | null;
  from_address: string | null;
  to_address: string | null;
  contact: string | null;
  sender_name: string | null;
  recipient_name: string | null;
  hash: string | null;
  account_from_type: TransactionItem['accountFromType'];
  account_to_type: TransactionItem['accountToType'];
  from_currency: string | null;
  to_currency: string | null;
  from_amount: string | null;
  to_amount: string | null;
  fiat_currency: string | null;
  fiat_amount: string | null;
  exchange_rate: string | null;
  failure_reason: string | null;
  created_at: Date;
  completed_at: Date | null;
};

const COLUMNS = `id, currency, direction, transaction_type, state, amount, fee, fee_currency, network, from_address, to_address, contact,
  sender_name, recipient_name, hash, account_from_type, account_to_type, from_currency, to_currency, from_amount, to_amount,
  fiat_currency, fiat_amount, exchange_rate, failure_reason, created_at, completed_at`;

export type HistoryQuery = { currency?: string | undefined; sort: 'ASC' | 'DESC'; pageSize: number; pageNumber: number };

/** One page of an account's history, newest first by default; a currency filter also matches swaps from or to it. */
export async function listTransactions(db: Queryable, walletAccountId: string, query: HistoryQuery, catalogue: Catalogue): Promise<TransactionItem[]> {
  const order = query.sort === 'ASC' ? 'ASC' : 'DESC';
  const result = await db.query<Row>(
    `SELECT ${COLUMNS} FROM wallet_transactions
      WHERE wallet_account_id = $1 AND ($2::text IS NULL OR currency = $2 OR from_currency = $2 OR to_currency = $2)
      ORDER BY created_at ${order}, id ${order} LIMIT $3 OFFSET $4`,
    [walletAccountId, query.currency ?? null, query.pageSize, (query.pageNumber - 1) * query.pageSize],
  );
  return result.rows.map((row) => toItem(row, catalogue));
}

/** One transaction of the account, or undefined (also when `type` is given and differs). */
export async function findTransaction(
  db: Queryable,
  walletAccountId: string,
  id: string,
  type: TransactionType | undefined,
  catalogue: Catalogue,
): Promise<TransactionDetails | undefined> {
  const result = await db.query<Row & { confirmations: number | null; confirmations_required: number | null }>(
    `SELECT ${COLUMNS.replaceAll(/\b(\w+)\b/g, 't.$1')}, coalesce(d.confirmations, w.confirmations) AS confirmations,
            coalesce(d.confirmations_required, w.confirmations_required) AS confirmations_required
       FROM wallet_transactions t
       LEFT JOIN chain_deposits d ON d.id = CASE WHEN t.reference LIKE 'deposit:%' THEN substring(t.reference from 9)::uuid END
       -- An outside withdrawal's depth on the chain once broadcast (a transfer between users has none).
       LEFT JOIN withdrawals w ON w.kind = 'EXTERNAL' AND w.state <> 'PENDING' AND w.state <> 'SIGNED'
                              AND w.id = CASE WHEN t.reference LIKE 'withdrawal:%' THEN substring(t.reference from 12)::uuid END
      WHERE t.id = $1 AND t.wallet_account_id = $2 AND ($3::text IS NULL OR t.transaction_type = $3)`,
    [id, walletAccountId, type ?? null],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  return { ...toItem(row, catalogue), confirmations: row.confirmations, requiredConfirmations: row.confirmations_required };
}

function toItem(row: Row, catalogue: Catalogue): TransactionItem {
  const coin = catalogue.coins.find((c) => c.currency === row.currency);
  const units = (value: string | null, currency: string | null) => {
    if (value === null) return null;
    const decimals = currency === null ? undefined : decimalsOf(currency);
    return decimals === undefined ? value : formatUnits(BigInt(value), decimals);
  };
  const feeCurrency = row.fee_currency ?? row.currency;
  const fee = units(row.fee, feeCurrency) ?? '0';
  return {
    id: row.id,
    currency: row.currency,
    direction: row.direction,
    transactionType: row.transaction_type,
    state: row.state,
    amount: units(row.amount, row.currency) ?? '0',
    fee,
    feeCurrency,
    from: row.from_address,
    to: row.to_address,
    contact: row.contact,
    hash: row.hash,
    createdDate: row.created_at.toISOString(),
    completedDate: row.completed_at?.toISOString() ?? null,
    accountFromType: row.account_from_type,
    accountToType: row.account_to_type,
    fromCurrency: row.from_currency,
    toCurrency: row.to_currency,
    fromAmount: units(row.from_amount, row.from_currency),
    toAmount: units(row.to_amount, row.to_currency),
    fiatCurrency: row.fiat_currency,
    fiatAmount: units(row.fiat_amount, row.fiat_currency),
    network: row.network,
    blockchain: row.network && isNetwork(row.network) ? NETWORK_INFO[row.network].blockchain : null,
    explorerUrl: (coin && explorerLink(coin.urlScan, row.hash)) ?? null,
    senderName: row.sender_name,
    recipientName: row.recipient_name,
    recipientAddress: row.to_address,
    serviceFee: fee,
    exchangeRate: row.exchange_rate,
    failureReason: row.failure_reason,
  };
}
