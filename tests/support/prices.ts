import { parseDecimal } from '../../src/lib/amount.ts';
import { PRICE_DECIMALS, type PriceTable, type RatesPort } from '../../src/server/adapters/rates/port.ts';

/**
 * A price source with fixed USD prices per base asset (decimal strings), for tests where prices are an input: an
 * asset left out has no current price, as when the market gives none. `set` changes them for the next read.
 */
export function fixedRates(usd: Readonly<Record<string, string>>): RatesPort & { set(next: Readonly<Record<string, string>>): void } {
  let current = usd;
  return {
    set(next) {
      current = next;
    },
    async prices(): Promise<PriceTable> {
      const scaled = Object.fromEntries(Object.entries(current).map(([asset, price]) => [asset, parseDecimal(price, PRICE_DECIMALS)]));
      return { usd: scaled, fiatPerUsd: { USD: 10n ** BigInt(PRICE_DECIMALS) }, at: new Date(), basis: {}, lastKnown: { usd: {}, fiatPerUsd: {} } };
    },
  };
}
