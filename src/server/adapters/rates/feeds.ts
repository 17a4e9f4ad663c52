/**
 * The two real market feeds as the domain polls them (port.ts MarketFeed): crypto from exchanges through ccxt
 * (exchanges.ts), fiat from the central banks' published reference rates (central-banks.ts).
 */
import { fetchCentralBankRates } from './central-banks.ts';
import { createExchangePrices } from './exchanges.ts';
import type { MarketFeed } from './port.ts';

export function exchangeFeed(options: { sources: readonly string[]; assets: readonly string[]; urls: Readonly<Record<string, string>>; timeoutMs?: number }): MarketFeed {
  const exchanges = createExchangePrices({ sources: options.sources, assets: options.assets, urls: options.urls, timeoutMs: options.timeoutMs ?? 10_000 });
  return {
    name: 'exchanges',
    async poll() {
      const { prices, errors } = await exchanges.poll();
      return { prices: prices.map((p) => ({ kind: 'CRYPTO' as const, asset: p.asset, source: p.source, price: p.mid, market: `${p.asset}/${p.quote}`, at: p.at })), errors };
    },
    close: () => exchanges.close(),
  };
}

export function centralBankFeed(options: { urls: Readonly<Record<string, string>>; fiats: readonly string[]; timeoutMs?: number }): MarketFeed {
  return {
    name: 'central banks',
    async poll() {
      const { rates, errors } = await fetchCentralBankRates({ baseUrls: options.urls, only: options.fiats, timeoutMs: options.timeoutMs ?? 15_000 });
      return {
        // A rate holds from the start of its official day.
        prices: rates.map((r) => ({ kind: 'FIAT' as const, asset: r.fiat, source: r.source, price: r.perUsd, market: r.date, at: new Date(`${r.date}T00:00:00Z`) })),
        errors: errors.map((e) => ({ source: `${e.source} (${e.fiat})`, error: e.error })),
      };
    },
  };
}
