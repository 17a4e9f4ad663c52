import { apiCall } from './client.ts';

/** SPEC §7 Swap calls. Amounts are decimal strings. */
export type SwapPair = { sourceCurrency: string; destinationCurrency: string };
/** SPEC §3 swap limits, in units of the source currency. */
export type SwapLimit = { minLimit: string; maxLimit: string; currency: string };
/** SPEC §3 swap quote: the rate is fixed for `expiresInSeconds` (300 s when new). */
export type SwapQuote = {
  quoteId: string;
  sourceCurrency: string;
  destinationCurrency: string;
  sourceAmount: string;
  destinationAmount: string;
  fee: string;
  feeCurrency: string;
  rate: string;
  expiresAt: string;
  expiresInSeconds: number;
};
/** SPEC §3 swap order. */
export type SwapOrder = {
  id: string;
  sourceCurrency: string;
  destinationCurrency: string;
  sourceAmount: string;
  destinationAmount: string;
  fee: string;
  feeCurrency: string;
  rate: string;
  state: 'PENDING' | 'COMPLETED' | 'EXPIRED' | 'CANCELLED';
  createdDate: string;
  expiresAt: string;
  expiresInSeconds: number;
  transactionId: string | null;
};

export type PreCalculateRequest = { sourceCurrency: string; destinationCurrency: string } & ({ sourceAmount: string } | { destinationAmount: string });

const at = (account: string) => `/${encodeURIComponent(account)}`;

export const getCurrencyPairs = (account: string) => apiCall<SwapPair[]>(`${at(account)}/currency-pair`);
export const getSwapLimit = (account: string, sourceCurrency: string, destinationCurrency: string) =>
  apiCall<SwapLimit>(`${at(account)}/limit/${encodeURIComponent(sourceCurrency)}/${encodeURIComponent(destinationCurrency)}`);
export const preCalculateSwap = (account: string, request: PreCalculateRequest, signal?: AbortSignal) =>
  apiCall<SwapQuote>(`${at(account)}/exchange/pre-calculate`, { method: 'POST', body: request, signal });
export const createSwapOrder = (account: string, request: { quoteId: string; sourceAmount: string; idempotencyKey: string }) =>
  apiCall<SwapOrder>(`${at(account)}/exchange`, { method: 'POST', body: request });
/** SPEC §5: the pincode header goes only when non-empty (the client drops an empty one). */
export const confirmSwapOrder = (account: string, id: string, pincode?: string) =>
  apiCall<SwapOrder>(`${at(account)}/exchange/confirm/${encodeURIComponent(id)}`, { method: 'POST', pincode });
export const cancelSwapOrder = (account: string, id: string) => apiCall<SwapOrder>(`${at(account)}/exchange/cancel/${encodeURIComponent(id)}`, { method: 'POST' });
