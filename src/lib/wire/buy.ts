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
  /** An on-ramp's quote: the crypto amount is its estimate, fixed only when the buyer pays on its page. */
  estimate?: boolean;
  /** The on-ramp's fees inside `fiatAmount`, in the fiat: its own, the network's and the wallet's. */
  fees?: { provider: string; network: string; partner: string };
};

/** GET /api/b2c/currencies: the coins a card buys here, and who sells them. */
export type BuyCurrencies = { provider: string; currencies: string[] };

/** POST /api/b2c/fiat/method: one of the two amounts; the fiat chosen on /buy/pay (an on-ramp's geoId is a country with several). */
export type MethodsRequest = { currency: string; geoId: string; account: string; fiatCurrency?: string; cryptoAmount?: string; fiatAmount?: string };

/** SPEC §3 rate quote (buy). */
export type BuyQuote = { methods: PaymentMethodItem[]; fixedRateId: string; currency: string; fiatCurrency: string; expiresInSeconds: number; expiresAt: string };

/** SPEC §3 buy order request (POST /api/b2c/order). */
export type BuyOrderRequest = { rateId: string; itemId: string; description: string; returnUrl: string; idempotencyKey: string; account: string; fiatAmount: string };

export type BuyOrderState = 'NEW' | 'PENDING' | 'COMPLETED' | 'FAILED' | 'EXPIRED';
export type BuyOrderView = {
  id: string;
  state: BuyOrderState;
  /** LEDGER: credited by the wallet when paid; CHAIN: the provider sends the coins on chain, the deposit credits them. */
  delivery: 'LEDGER' | 'CHAIN';
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
