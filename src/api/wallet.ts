import type { CoinMeta } from '../lib/currencies.ts';
import type { AssetItem, HistoryBalance } from '../lib/wire/assets.ts';
import type { PendingReason } from '../lib/wire/withdrawals.ts';
import { apiCall } from './client.ts';

export type { AssetItem };

/** A fiat entry of the coin catalogue; the symbol is optional so an older gateway still works. */
export type FiatCoin = { currency: string; name: string; symbol?: string; crypto?: false; active?: boolean };

/** GET /b2c-wallet/meta-info/coin. */
export type CoinCatalogue = { fiat: FiatCoin[]; crypto: CoinMeta[] };

/** ratesMap[currency][fiat] = price of one unit, a decimal string. */
export type RatesMap = Record<string, Record<string, string>>;

export type TransactionState = 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';
export type TransactionType = 'DEPOSIT' | 'WITHDRAWAL' | 'EXCHANGE' | 'C2F' | 'F2C' | 'FIAT_DEPOSIT';

/** SPEC §3 transaction as the gateway sends it; amounts are decimal strings. */
export type Transaction = {
  id: string;
  currency: string;
  direction: 'DEPOSIT' | 'WITHDRAWAL';
  transactionType: TransactionType;
  state: TransactionState;
  amount: string;
  fee?: string | null;
  feeCurrency?: string | null;
  from?: string | null;
  to?: string | null;
  contact?: string | null;
  hash?: string | null;
  /** ISO 8601. */
  createdDate: string;
  completedDate?: string | null;
  accountFromType?: 'B2C' | 'B2B' | null;
  accountToType?: 'B2C' | 'B2B' | null;
  fromCurrency?: string | null;
  toCurrency?: string | null;
  fromAmount?: string | null;
  toAmount?: string | null;
  fiatCurrency?: string | null;
  fiatAmount?: string | null;
  /** The network code (BITCOIN ...) and its readable name. */
  network?: string | null;
  blockchain?: string | null;
  explorerUrl?: string | null;
  senderName?: string | null;
  recipientName?: string | null;
  recipientAddress?: string | null;
  serviceFee?: string | null;
  exchangeRate?: string | null;
  failureReason?: string | null;
  /** A withdrawal waiting for an operator's review: IN_PROGRESS, shown "Under review". */
  underReview?: boolean;
  /** Why an IN_PROGRESS withdrawal is not sent yet (WAITING_FOR_FUNDS, UNDER_REVIEW), shown beside "Pending"; else null. */
  pendingReason?: PendingReason | null;
  /** Details only: a chain deposit's depth and the depth at which it is credited. */
  confirmations?: number | null;
  requiredConfirmations?: number | null;
};

const at = (account: string) => `/${encodeURIComponent(account)}`;

export const getCoinCatalogue = () => apiCall<CoinCatalogue>('/b2c-wallet/meta-info/coin');
export const getAssets = (account: string) => apiCall<AssetItem[]>(`${at(account)}/asset`);
export const addAccountCurrency = (account: string, currency: string) =>
  apiCall<void>(`${at(account)}/account/currency`, { method: 'POST', body: { currency } });
export const addAccountCurrencies = (account: string, currencies: readonly string[]) =>
  apiCall<void>(`${at(account)}/account/currency/list`, { method: 'POST', body: { currencies: [...currencies] } });
export const archiveAccountCurrency = (account: string, currency: string) =>
  apiCall<void>(`${at(account)}/account/currency/${encodeURIComponent(currency)}`, { method: 'DELETE' });

/** SPEC §6: rates are public. */
export const getRatesMap = (currencies: readonly string[], fiatCurrencies: readonly string[]) =>
  apiCall<{ ratesMap: RatesMap; asOf?: Record<string, string> }>('/rate', { method: 'POST', body: { currencies: [...currencies], fiatCurrencies: [...fiatCurrencies] }, public: true });

/** SPEC §7: the newest 100 of one currency. */
export const HISTORY_PAGE_SIZE = 100;

export const getTransactions = (account: string, currency: string) =>
  apiCall<{ result: Transaction[]; balance?: HistoryBalance }>(`${at(account)}/asset/transactions`, {
    method: 'POST',
    body: { account, currency, sort: 'DESC', properties: ['createdDate'], pageSize: HISTORY_PAGE_SIZE, pageNumber: 1 },
  });
export const getTransaction = (account: string, id: string, type: string) =>
  apiCall<Transaction>(`${at(account)}/asset/transaction/${encodeURIComponent(id)}`, { query: { type } });

/** A 5-minute link to the account's history as CSV (all assets or one, `from`…`to` as UTC days YYYY-MM-DD). */
export const historyExportLink = (account: string, body: { currency?: string; from: string; to: string }) =>
  apiCall<{ url: string }>(`/${account}/asset/transactions/export`, { method: 'POST', body });
