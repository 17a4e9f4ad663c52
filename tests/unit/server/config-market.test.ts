import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/server/config.ts';

const PRODUCTION = { APP_ENV: 'production', WALLET_SEED: 'x' };

describe('where prices come from', () => {
  it('is the reference walk outside production and nothing in production without RATES_SOURCES', () => {
    expect(loadConfig({}).market).toMatchObject({ source: 'reference', exchanges: [] });
    expect(loadConfig(PRODUCTION).market).toMatchObject({ source: 'off', exchanges: [] });
  });

  it('refuses the walk in production, and a mix of the walk and exchanges anywhere', () => {
    expect(() => loadConfig({ ...PRODUCTION, RATES_SOURCES: 'reference' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...PRODUCTION, RATES_SOURCES: 'reference' })).toThrow(/^RATES_SOURCES=reference .*cannot run in production/);
    expect(() => loadConfig({ RATES_SOURCES: 'reference,binance' })).toThrow(/either reference .* or a list of exchanges/);
  });

  it('takes exchanges by their ccxt ids, with URLs per source, and the freshness rules in milliseconds', () => {
    const market = loadConfig({
      ...PRODUCTION,
      RATES_SOURCES: 'Binance, kraken,okx,binance',
      RATES_SOURCE_URLS: '{"binance":"http://127.0.0.1:9/binance"}',
      RATES_MAX_AGE_SECONDS: '30',
      RATES_MAX_DEVIATION_BPS: '150',
      RATES_MIN_SOURCES: '3',
      RATES_FIAT_MAX_AGE_DAYS: '2',
    }).market;
    expect(market).toMatchObject({ source: 'exchanges', exchanges: ['binance', 'kraken', 'okx'], exchangeUrls: { binance: 'http://127.0.0.1:9/binance' }, maxAgeMs: 30_000, maxDeviationBps: 150, minSources: 3, fiatMaxAgeMs: 2 * 86_400_000 });
  });

  it('refuses a minimum no list of sources could meet, a malformed URL map and a bad exchange id', () => {
    expect(() => loadConfig({ RATES_SOURCES: 'binance' })).toThrow(/RATES_MIN_SOURCES is 2 but RATES_SOURCES names 1/);
    expect(() => loadConfig({ RATES_SOURCES: 'binance,kraken', RATES_SOURCE_URLS: 'binance=http://x' })).toThrow(/RATES_SOURCE_URLS is invalid/);
    expect(() => loadConfig({ RATES_SOURCES: 'bin ance,kraken' })).toThrow(/RATES_SOURCES is invalid/);
  });

  it('reads inventory limits per currency, negative ones included, and refuses what is not a decimal', () => {
    expect(loadConfig({ SWAP_INVENTORY_LIMITS: '{"ETH":"0.5","BTC":"-1"}' }).market.inventoryLimits).toEqual({ ETH: '0.5', BTC: '-1' });
    expect(() => loadConfig({ SWAP_INVENTORY_LIMITS: '{"ETH":"lots"}' })).toThrow(/SWAP_INVENTORY_LIMITS is invalid/);
  });

  it('hedges only with an exchange and both keys, and never prints the keys', () => {
    expect(loadConfig({}).market.hedge).toBeUndefined();
    expect(loadConfig({ HEDGE_EXCHANGE: 'binance', HEDGE_API_KEY: 'k', HEDGE_API_SECRET: 's', HEDGE_THRESHOLD_USD: '2500' }).market.hedge).toMatchObject({ exchange: 'binance', thresholdUsd: '2500' });
    expect(() => loadConfig({ HEDGE_EXCHANGE: 'binance', HEDGE_API_KEY: 'k' })).toThrow(/go together/);
    expect(() => loadConfig({ HEDGE_API_SECRET: 'x'.repeat(501) })).toThrow(/HEDGE_API_SECRET is invalid \(got "\*\*\*"\)/);
  });
});
