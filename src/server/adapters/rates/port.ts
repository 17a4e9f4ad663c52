/**
 * The port to a price source. Prices are exact: bigint with PRICE_SCALE decimals (no float touches a rate).
 * `reference.ts` is the shipped default; a real feed implements the same shape.
 */
export const PRICE_DECIMALS = 8;
export const PRICE_SCALE = 10n ** BigInt(PRICE_DECIMALS);

export type PriceTable = {
  /** USD price of one unit of each base asset (BTC, ETH, USDT...), scaled by PRICE_SCALE. */
  usd: Readonly<Record<string, bigint>>;
  /** Units of each fiat currency per one USD, scaled by PRICE_SCALE. */
  fiatPerUsd: Readonly<Record<string, bigint>>;
  at: Date;
};

export type RatesPort = {
  prices(): Promise<PriceTable>;
};
