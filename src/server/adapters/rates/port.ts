/**
 * The port to a price source. Prices are exact: bigint with PRICE_SCALE decimals (no float touches a rate).
 * A table holds only what may be quoted now; what was priced before but is not current any more is in `lastKnown`,
 * to be shown with its age and never quoted.
 */
export const PRICE_DECIMALS = 8;
export const PRICE_SCALE = 10n ** BigInt(PRICE_DECIMALS);

/** One source's word on a price: who said it, the value (scaled by PRICE_SCALE) and when it held. */
export type SourceQuote = { source: string; price: bigint; at: Date };

/** Where a current price came from: the sources it is the median of. */
export type PriceBasis = { price: bigint; sources: readonly SourceQuote[] };

/** A price no longer current, kept for display: its value and the time of its newest source. */
export type StalePrice = { price: bigint; at: Date };

export type PriceTable = {
  /** USD price of one unit of each base asset (BTC, ETH, USDT...) that has a current price, scaled by PRICE_SCALE. */
  usd: Readonly<Record<string, bigint>>;
  /** Units of each fiat currency per one USD, where a current rate exists, scaled by PRICE_SCALE. */
  fiatPerUsd: Readonly<Record<string, bigint>>;
  /** When this table was read. */
  at: Date;
  /** For every entry of `usd` and `fiatPerUsd` (keyed by asset or fiat code): the sources behind it. */
  basis: Readonly<Record<string, PriceBasis>>;
  /** Assets and fiats priced before but not now (too few fresh sources): shown with their age, never quoted. */
  lastKnown: Readonly<{ usd: Readonly<Record<string, StalePrice>>; fiatPerUsd: Readonly<Record<string, StalePrice>> }>;
};

export type RatesPort = {
  prices(): Promise<PriceTable>;
};

/** One source's reading as a feed hands it over: a crypto asset's USD price or a fiat's units per USD. */
export type ObservedPrice = { kind: 'CRYPTO' | 'FIAT'; asset: string; source: string; price: bigint; market: string; at: Date };

/** A market feed (exchanges, central banks): one poll reads every source; a source that failed is named, never fatal. */
export type MarketFeed = {
  name: string;
  poll(): Promise<{ prices: ObservedPrice[]; errors: Array<{ source: string; error: string }> }>;
  close?(): Promise<void>;
};

/** The desk's exchange account (HEDGE_EXCHANGE): market orders against its USDT (else USD) market. */
export type HedgePort = {
  /**
   * `amount` is a decimal of the base asset; `clientOrderId` is the order's idempotency key at the exchange. Rejects
   * with an error whose `refused` is true when the exchange answered no (nothing was traded); any other rejection
   * (a timeout, a lost connection) may have placed the order.
   */
  marketOrder(input: { asset: string; side: 'buy' | 'sell'; amount: string; clientOrderId: string }): Promise<{ orderId: string; price: string; filled: string; fee: string; feeCurrency: string }>;
  close(): Promise<void>;
};
