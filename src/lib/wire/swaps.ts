/** SPEC §7 Swap calls; amounts are decimal strings. */
export type SwapPair = { sourceCurrency: string; destinationCurrency: string };

/** SPEC §3 swap limits as sent, in units of the source currency (the domain's own SwapLimit holds bigints). */
export type SwapLimitView = { minLimit: string; maxLimit: string; currency: string };

/** POST /api/{account}/exchange/pre-calculate: one of the two amounts. */
export type QuoteRequest = { sourceCurrency: string; destinationCurrency: string } & ({ sourceAmount: string } | { destinationAmount: string });

/** What a quote and its order both say: the two sides, the fee and the rate, and until when they hold. */
type SwapTerms = {
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

/** SPEC §3 swap quote: the rate is fixed for `expiresInSeconds` (300 s when new). */
export type QuoteView = SwapTerms & { quoteId: string };

/** POST /api/{account}/exchange. */
export type SwapOrderRequest = { quoteId: string; sourceAmount: string; idempotencyKey: string };

/** SPEC §3 swap order (the domain calls it OrderView). */
export type SwapOrderView = SwapTerms & {
  id: string;
  state: 'PENDING' | 'COMPLETED' | 'EXPIRED' | 'CANCELLED';
  createdDate: string;
  transactionId: string | null;
};
