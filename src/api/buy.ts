import type { BuyConfirmRequest, BuyConfirmView, BuyCurrencies, BuyOrderRequest, BuyOrderView, BuyQuote, BuyRequestParams, FiatAvailability, MethodsRequest, PaymentMethodItem } from '../lib/wire/buy.ts';
import { apiCall } from './client.ts';

export type { BuyCurrencies, BuyOrderRequest, BuyOrderView, BuyQuote, BuyRequestParams, FiatAvailability, MethodsRequest, PaymentMethodItem };

/** The coins a card buys here (/buy/get); a refusal says why buying is unavailable right now (the provider down...). */
export const getBuyCurrencies = () => apiCall<BuyCurrencies>('/b2c/currencies', { public: true });

/** SPEC §6: availability, methods and order are public; the confirmation carries the bearer token. */
export const getFiatAvailability = (depositAddress?: string) =>
  apiCall<FiatAvailability[]>('/b2c/fiat/availability', { query: { depositAddress }, public: true });
export const getPaymentMethods = (request: MethodsRequest, signal?: AbortSignal) =>
  apiCall<BuyQuote>('/b2c/fiat/method', { method: 'POST', body: request, public: true, signal });
export const createBuyOrder = (request: BuyOrderRequest) => apiCall<BuyOrderView>('/b2c/order', { method: 'POST', body: request, public: true });
export const confirmBuyOrder = (id: string, account: string, requestParams: BuyRequestParams) =>
  apiCall<BuyConfirmView>('/b2c/order/confirm', { method: 'POST', body: { id, account, requestParams } satisfies BuyConfirmRequest });
/** Gives an order up (back from the provider without paying); answers the order as it now is. */
export const cancelBuyOrder = (id: string, account: string) => apiCall<BuyOrderView>('/b2c/order/cancel', { method: 'POST', body: { id, account } });
