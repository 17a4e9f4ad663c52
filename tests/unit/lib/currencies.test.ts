import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { COINS, COMMON_ASSETS, FIATS, NETWORK_INFO, NETWORKS, decimalsOf, explorerLink, findCoin, visibleCoins, type CoinMeta } from '../../../src/lib/currencies.ts';

describe('the catalogue', () => {
  it('has every coin field of SPEC §3 for the required currencies', () => {
    const required = ['BTC', 'ETH', 'USDT_ETH', 'USDC_ETH', 'TRX', 'USDT_TRX', 'LTC', 'DOGE', 'TON', 'BTC_LNG'];
    expect(COINS.map((c) => c.currency).sort()).toEqual(required.sort());
    for (const coin of COINS) {
      for (const field of ['name', 'logoName', 'token', 'network', 'blockchain', 'baseCurrency', 'round', 'urlScan', 'currency', 'crypto', 'active', 'implementations'] as const) {
        expect(coin[field], `${coin.currency}.${field}`).not.toBeUndefined();
      }
      expect(coin.urlScan).toContain('{tx}');
      expect(coin.implementations.length).toBeGreaterThan(0);
      expect(coin.implementations[0]?.network).toBe(coin.network);
      expect(existsSync(`public/coins/${coin.logoName}.svg`), coin.logoName).toBe(true);
    }
  });

  it("gives a token its network coin's logo as the secondary one, and a network coin none", () => {
    expect(findCoin('USDT_TRX')?.secondaryLogoName).toBe('trx');
    expect(findCoin('USDC_ETH')?.secondaryLogoName).toBe('eth');
    expect(findCoin('BTC')?.secondaryLogoName).toBeNull();
    for (const coin of COINS.filter((c) => c.token)) expect(findCoin(NETWORK_INFO[coin.network].coin)?.logoName).toBe(coin.secondaryLogoName);
  });

  it('covers the six networks, each with its own coin', () => {
    expect([...NETWORKS].sort()).toEqual(['BITCOIN', 'DOGECOIN', 'ETHEREUM', 'LITECOIN', 'TON', 'TRON']);
    for (const network of NETWORKS) expect(findCoin(NETWORK_INFO[network].coin)?.token).toBe(false);
  });

  it('hides BTC_LNG in production and skips coins without implementations', () => {
    expect(visibleCoins(COINS, false).map((c) => c.currency)).toContain('BTC_LNG');
    const production = visibleCoins(COINS, true).map((c) => c.currency);
    expect(production).not.toContain('BTC_LNG');
    expect(production).toContain('BTC');
    const bare: CoinMeta = { ...(findCoin('ETH') as CoinMeta), currency: 'NONE', implementations: [] };
    expect(visibleCoins([bare], false)).toEqual([]);
  });

  it('lists the fiat currencies with their symbols', () => {
    expect(Object.fromEntries(FIATS.map((f) => [f.currency, f.symbol]))).toEqual({ USD: '$', EUR: '€', KZT: '₸', UAH: '₴', AZN: '₼', CAD: 'C$', RUB: '₽' });
  });

  it('knows decimals, common assets and explorer links', () => {
    expect(decimalsOf('ETH')).toBe(18);
    expect(decimalsOf('USDT_TRX')).toBe(6);
    expect(decimalsOf('EUR')).toBe(2);
    expect(decimalsOf('XYZ')).toBeUndefined();
    for (const currency of COMMON_ASSETS) expect(findCoin(currency)).toBeDefined();
    expect(explorerLink('https://x/tx/{tx}', 'abc')).toBe('https://x/tx/abc');
    expect(explorerLink('https://x/tx/{tx}', null)).toBeUndefined();
  });
});
