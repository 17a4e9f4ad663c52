import type { CardInfo, SavedCard, SellByCardRequest, SellBySavedCardRequest, SellLimits, SellOrderView, SellQuote } from '../lib/wire/sell.ts';
import { apiCall } from './client.ts';

export type { CardInfo, SavedCard, SellLimits, SellOrderView, SellQuote };

const at = (account: string) => `/c2f/${encodeURIComponent(account)}`;

export const lookupCard = (bin: string, signal?: AbortSignal) => apiCall<CardInfo>(`/c2f/bin/${encodeURIComponent(bin)}`, { signal });
export const getSavedCards = (account: string, fiat: string) => apiCall<SavedCard[]>(`${at(account)}/cards/${encodeURIComponent(fiat)}`);
export const getSellLimits = (account: string, fiat: string) => apiCall<SellLimits>(`${at(account)}/limit/${encodeURIComponent(fiat)}`);
export const getSellRate = (account: string, fiat: string, currency: string) =>
  apiCall<SellQuote>(`${at(account)}/rate/${encodeURIComponent(fiat)}/${encodeURIComponent(currency)}`, { method: 'POST' });
/** The pincode header goes only when one was entered (SPEC §5); the gateway asks for it when the passcode is on. */
export const sellByCard = (account: string, body: SellByCardRequest, pincode?: string) =>
  apiCall<SellOrderView>(`${at(account)}/order/byCard`, { method: 'POST', body, ...(pincode ? { pincode } : {}) });
export const sellBySavedCard = (account: string, body: SellBySavedCardRequest, pincode?: string) =>
  apiCall<SellOrderView>(`${at(account)}/order/bySavedCard`, { method: 'POST', body, ...(pincode ? { pincode } : {}) });
/** Not in SPEC §7 (path not shown there): the order's progress, for the success screen. */
export const getSellOrder = (account: string, id: string) => apiCall<SellOrderView>(`${at(account)}/order/${encodeURIComponent(id)}`);
