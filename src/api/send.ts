import { apiCall } from './client.ts';

/** SPEC §3 address check result; BLOCKED and NOT_USED refuse the address, INVALID fails its checksum. */
export type AddressCheck = {
  checkResult: 'VALID' | 'INVALID' | 'BLOCKED' | 'NOT_USED';
  belongsToSameUser: boolean;
  accountType: 'B2C' | 'B2B';
  /** Another user of this wallet: settles at once, without a fee. */
  internal: boolean;
  address: string;
  network: string;
  recipientName: string | null;
  /** Already in the sender's address book. */
  saved: boolean;
};

export type FeeQuote = { currency: string; feeCurrency: string; fee: string; amount: string; receiveAmount: string; internal: boolean };

export type Withdrawal = {
  id: string;
  account: string;
  currency: string;
  network: string;
  amount: string;
  fee: string;
  feeCurrency: string;
  receiveAmount: string;
  depositAddress: string;
  internal: boolean;
  state: 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';
  hash: string | null;
  explorerUrl: string | null;
  transactionId: string | null;
  accountToType: 'B2C' | 'B2B' | null;
  failureReason: string | null;
  createdDate: string;
};

/** SPEC §3 address book entry; `blockchain` is the network code (BITCOIN, TRON …). */
export type AddressBookEntry = { id: string; name: string; blockchain: string; address: string; createdDate: string };

/** SPEC §9: the address book is read as one page of 1000. */
export const ADDRESS_BOOK_PAGE_SIZE = 1000;

const at = (account: string) => `/${encodeURIComponent(account)}`;

export const checkAddress = (account: string, currency: string, address: string, signal?: AbortSignal) =>
  apiCall<AddressCheck>(`${at(account)}/withdrawal/check-address`, { method: 'POST', body: { account, currency, address }, signal });

/** SPEC §7: the preliminary fee is asked with the amount fixed at 100. */
export const getPreliminaryFee = (account: string, currency: string, depositAddress: string | undefined, signal?: AbortSignal) =>
  apiCall<FeeQuote>(`${at(account)}/withdrawal/preliminary/fee`, { method: 'POST', body: { account, currency, amount: '100', depositAddress }, signal });

/** SPEC §7 POST withdrawal; the pincode header goes only when non-empty (the client drops an empty one). */
export const createWithdrawal = (account: string, body: { currency: string; amount: string; depositAddress: string; idempotencyKey: string }, pincode?: string) =>
  apiCall<Withdrawal>(`${at(account)}/withdrawal`, { method: 'POST', body: { account, pinCode: null, ...body }, ...(pincode ? { pincode } : {}) });

export const getWithdrawal = (account: string, id: string) => apiCall<Withdrawal>(`${at(account)}/withdrawal/${encodeURIComponent(id)}`);
export const getOpenWithdrawals = (account: string) => apiCall<{ result: Withdrawal[] }>(`${at(account)}/withdrawal`);

export const listAddressBook = (account: string) =>
  apiCall<{ result: AddressBookEntry[] }>(`${at(account)}/address-book/all`, { method: 'POST', body: { pageNumber: 1, pageSize: ADDRESS_BOOK_PAGE_SIZE } });
export const getAddressBookEntry = (account: string, id: string) => apiCall<AddressBookEntry>(`${at(account)}/address-book/${encodeURIComponent(id)}`);
export const addAddressBookEntry = (account: string, body: { name: string; blockchain: string; address: string }) =>
  apiCall<AddressBookEntry>(`${at(account)}/address-book`, { method: 'POST', body: { account, ...body } });
export const deleteAddressBookEntry = (account: string, id: string) => apiCall<AddressBookEntry>(`${at(account)}/address-book/${encodeURIComponent(id)}`, { method: 'DELETE' });
