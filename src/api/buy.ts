import { apiCall } from './client.ts';

/** SPEC §3 fiat availability item. */
export type FiatAvailability = { fiatCurrency: string; geoId: string };

/** SPEC §3 payment method, as a rate quote lists it; amounts are decimal strings. */
export type PaymentMethod = {
  paymentMethodCode: string;
  paymentMethodName: string;
  fiatAmount: string;
  fiatCurrency: string;
  cryptoAmount: string;
  minLimit: string;
  maxLimit: string;
  itemId: string;
  /** Fiat per one coin, the fee included (optional: an older gateway may not send it). */
  rate?: string;
};

/** SPEC §3 rate quote response (buy). */
export type BuyQuote = { methods: PaymentMethod[]; fixedRateId: string; expiresInSeconds?: number };

export type MethodsRequest = { currency: string; geoId: string; account: string; cryptoAmount?: string; fiatAmount?: string };

/** SPEC §3 buy order request. */
export type BuyOrderRequest = { rateId: string; itemId: string; description: string; returnUrl: string; idempotencyKey: string; account: string; fiatAmount: string };

/** SPEC §3 order confirm's request parameters. */
export type BuyRequestParams = {
  email: string;
  browserLanguage: string;
  screenHeight: number;
  screenWidth: number;
  timeZone: string;
  userAgent: string;
  javascriptEnabled: boolean;
  ip: string;
};

/** SPEC §6: availability, methods and order are public; the confirmation carries the bearer token. */
export const getFiatAvailability = (depositAddress?: string) =>
  apiCall<FiatAvailability[]>('/b2c/fiat/availability', { query: { depositAddress }, public: true });
export const getPaymentMethods = (request: MethodsRequest, signal?: AbortSignal) =>
  apiCall<BuyQuote>('/b2c/fiat/method', { method: 'POST', body: request, public: true, signal });
export const createBuyOrder = (request: BuyOrderRequest) => apiCall<{ id: string }>('/b2c/order', { method: 'POST', body: request, public: true });
export const confirmBuyOrder = (id: string, account: string, requestParams: BuyRequestParams) =>
  apiCall<{ redirectUrl: string }>('/b2c/order/confirm', { method: 'POST', body: { id, account, requestParams } });
