import type { QuoteRequest, QuoteView, SwapLimitView, SwapOrderRequest, SwapOrderView, SwapPair } from '../lib/wire/swaps.ts';
import { apiCall } from './client.ts';

export type { QuoteRequest, QuoteView, SwapLimitView, SwapOrderView, SwapPair };

const at = (account: string) => `/${encodeURIComponent(account)}`;

export const getCurrencyPairs = (account: string) => apiCall<SwapPair[]>(`${at(account)}/currency-pair`);
export const getSwapLimit = (account: string, sourceCurrency: string, destinationCurrency: string) =>
  apiCall<SwapLimitView>(`${at(account)}/limit/${encodeURIComponent(sourceCurrency)}/${encodeURIComponent(destinationCurrency)}`);
export const preCalculateSwap = (account: string, request: QuoteRequest, signal?: AbortSignal) =>
  apiCall<QuoteView>(`${at(account)}/exchange/pre-calculate`, { method: 'POST', body: request, signal });
export const createSwapOrder = (account: string, request: SwapOrderRequest) =>
  apiCall<SwapOrderView>(`${at(account)}/exchange`, { method: 'POST', body: request });
/** SPEC §5: the pincode header goes only when non-empty (the client drops an empty one). */
export const confirmSwapOrder = (account: string, id: string, pincode?: string) =>
  apiCall<SwapOrderView>(`${at(account)}/exchange/confirm/${encodeURIComponent(id)}`, { method: 'POST', pincode });
export const cancelSwapOrder = (account: string, id: string) => apiCall<SwapOrderView>(`${at(account)}/exchange/cancel/${encodeURIComponent(id)}`, { method: 'POST' });
