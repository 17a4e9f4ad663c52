import { apiCall } from './client.ts';

/** SPEC §3 card info lookup. */
export type CardInfo = { code: string; system: string };
/** SPEC §3 saved card. */
export type SavedCard = { cardId: string; mascCard: string; bankCode: string; bankSystem?: string };
/** SPEC §3 sell limits (fiat) and sell rate (fiat per coin). */
export type SellLimits = { minLimit: string; maxLimit: string; limitCurrency: string };
export type SellRate = { rate: string; rateId: string; expiresAt?: string };

export type SellOrder = {
  id: string;
  state: 'PROCESSING' | 'COMPLETED' | 'FAILED';
  currency: string;
  amount: string;
  fiatCurrency: string;
  fiatAmount: string;
  rate: string;
  mascCard: string;
  bankCode: string;
  cardId: string | null;
  transactionId: string | null;
  failureReason: string | null;
  createdDate: string;
};

type OrderBase = { currency: string; fiatCurrency: string; fixedRateId: string; fiatAmount: string; idempotencyKey: string };

const at = (account: string) => `/c2f/${encodeURIComponent(account)}`;

export const lookupCard = (bin: string, signal?: AbortSignal) => apiCall<CardInfo>(`/c2f/bin/${encodeURIComponent(bin)}`, { signal });
export const getSavedCards = (account: string, fiat: string) => apiCall<SavedCard[]>(`${at(account)}/cards/${encodeURIComponent(fiat)}`);
export const getSellLimits = (account: string, fiat: string) => apiCall<SellLimits>(`${at(account)}/limit/${encodeURIComponent(fiat)}`);
export const getSellRate = (account: string, fiat: string, currency: string) =>
  apiCall<SellRate>(`${at(account)}/rate/${encodeURIComponent(fiat)}/${encodeURIComponent(currency)}`, { method: 'POST' });
/** The pincode header goes only when one was entered (SPEC §5); the gateway asks for it when the passcode is on. */
export const sellByCard = (account: string, body: OrderBase & { card: string; bankCode: string; bankSystem: string; saveCard: boolean }, pincode?: string) =>
  apiCall<SellOrder>(`${at(account)}/order/byCard`, { method: 'POST', body, ...(pincode ? { pincode } : {}) });
export const sellBySavedCard = (account: string, body: OrderBase & { cardId: string }, pincode?: string) =>
  apiCall<SellOrder>(`${at(account)}/order/bySavedCard`, { method: 'POST', body, ...(pincode ? { pincode } : {}) });
/** Not in SPEC §7 (path not shown there): the order's progress, for the success screen. */
export const getSellOrder = (account: string, id: string) => apiCall<SellOrder>(`${at(account)}/order/${encodeURIComponent(id)}`);
