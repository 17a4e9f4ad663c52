import type { AddressCaution, AddressCautionView, AddressCheck, CheckAddressRequest, FeeRequest, FeeView, WithdrawalRequest, WithdrawalView } from '../lib/wire/withdrawals.ts';
import { apiCall } from './client.ts';

export type { AddressCaution, AddressCheck, FeeView, WithdrawalView };

/** SPEC §3 address book entry; `blockchain` is the network code (BITCOIN, TRON …). */
export type AddressBookEntry = { id: string; name: string; blockchain: string; address: string; createdDate: string };

/** SPEC §9: the address book is read as one page of 1000. */
export const ADDRESS_BOOK_PAGE_SIZE = 1000;

const at = (account: string) => `/${encodeURIComponent(account)}`;

export const checkAddress = (account: string, currency: string, address: string, signal?: AbortSignal) =>
  apiCall<AddressCheck>(`${at(account)}/withdrawal/check-address`, { method: 'POST', body: { account, currency, address } satisfies CheckAddressRequest, signal });

/** SPEC §7: the preliminary fee is asked with the amount fixed at 100. */
export const getPreliminaryFee = (account: string, currency: string, depositAddress: string | undefined, signal?: AbortSignal) =>
  apiCall<FeeView>(`${at(account)}/withdrawal/preliminary/fee`, { method: 'POST', body: { account, currency, amount: '100', depositAddress } satisfies FeeRequest, signal });

/** SPEC §7 POST withdrawal; the pincode header goes only when non-empty (the client drops an empty one); `feeQuoteId` from the fee shown. */
export const createWithdrawal = (account: string, body: { currency: string; amount: string; depositAddress: string; idempotencyKey: string; feeQuoteId?: string }, pincode?: string) =>
  apiCall<WithdrawalView>(`${at(account)}/withdrawal`, { method: 'POST', body: { account, pinCode: null, ...body } satisfies WithdrawalRequest, ...(pincode ? { pincode } : {}) });

export const getWithdrawal = (account: string, id: string) => apiCall<WithdrawalView>(`${at(account)}/withdrawal/${encodeURIComponent(id)}`);
export const getOpenWithdrawals = (account: string) => apiCall<{ result: WithdrawalView[] }>(`${at(account)}/withdrawal`);

export const listAddressBook = (account: string) =>
  apiCall<{ result: AddressBookEntry[] }>(`${at(account)}/address-book/all`, { method: 'POST', body: { pageNumber: 1, pageSize: ADDRESS_BOOK_PAGE_SIZE } });
export const getAddressBookEntry = (account: string, id: string) => apiCall<AddressBookEntry>(`${at(account)}/address-book/${encodeURIComponent(id)}`);
export const addAddressBookEntry = (account: string, body: { name: string; blockchain: string; address: string }) =>
  apiCall<AddressBookEntry>(`${at(account)}/address-book`, { method: 'POST', body: { account, ...body } });
export const deleteAddressBookEntry = (account: string, id: string) => apiCall<AddressBookEntry>(`${at(account)}/address-book/${encodeURIComponent(id)}`, { method: 'DELETE' });
/** Whether an address typed on `blockchain` looks like one of the account's own, or only ever sent it dust (issue 36 item 3). */
export const getAddressCaution = (account: string, blockchain: string, address: string, signal?: AbortSignal) =>
  apiCall<AddressCautionView>(`${at(account)}/address-book/caution`, { method: 'POST', body: { account, blockchain, address }, signal });
