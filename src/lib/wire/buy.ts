/** SPEC §3 fiat availability item. */
export type FiatAvailability = { fiatCurrency: string; geoId: string };

/** SPEC §3 payment method, as a rate quote lists it; amounts are decimal strings. */
export type PaymentMethodItem = {
  paymentMethodCode: string;
  paymentMethodName: string;
  fiatAmount: string;
  fiatCurrency: string;
  cryptoAmount: string;
  minLimit: string;
  maxLimit: string;
  itemId: string;
  /** Fiat per one coin at this method, the fee included. */
  rate: string;
};

/** POST /api/b2c/fiat/method: one of the two amounts. */
export type MethodsRequest = { currency: string; geoId: string; account: string; cryptoAmount?: string; fiatAmount?: string };

/** SPEC §3 rate quote (buy). */
export type BuyQuote = { methods: PaymentMethodItem[]; fixedRateId: string; currency: string; fiatCurrency: string; expiresInSeconds: number; expiresAt: string };

/** SPEC §3 buy order request (POST /api/b2c/order). */
export type BuyOrderRequest = { rateId: string; itemId: string; description: string; returnUrl: string; idempotencyKey: string; account: string; fiatAmount: string };

export type BuyOrderState = 'NEW' | 'PENDING' | 'COMPLETED' | 'FAILED' | 'EXPIRED';
export type BuyOrderView = {
  id: string;
  state: BuyOrderState;
  currency: string;
  cryptoAmount: string;
  fiatCurrency: string;
  fiatAmount: string;
  rate: string;
  paymentMethodCode: string;
  redirectUrl: string | null;
  transactionId: string | null;
  failureReason: string | null;
  createdDate: string;
  expiresAt: string;
  completedDate: string | null;
};

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

/** POST /api/b2c/order/confirm. */
export type BuyConfirmRequest = { id: string; account: string; requestParams: BuyRequestParams };
export type BuyConfirmView = { redirectUrl: string };
