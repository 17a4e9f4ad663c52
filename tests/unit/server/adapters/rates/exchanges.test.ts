/**
 * Exchange prices and the hedge through real ccxt clients, pointed at the local exchange stand-in (no exchange is
 * ever contacted): exact mids per source, a source down, a stale ticker, an outlier passed through as given, and
 * signed binance market orders.
 */
import { describe, it, expect } from 'vitest';
import { createExchangePrices, createHedgeExchange, numberToDecimal, rewriteApiUrls, type SourcePrice } from '../../../../../src/server/adapters/rates/exchanges.ts';
import { parseDecimal } from '../../../../../src/lib/amount.ts';
import { startExchangeStandIn, type ExchangeStandIn } from '../../../../support/exchange-standin.ts';

const ASSETS = ['BTC', 'ETH', 'LTC', 'DOGE', 'TON', 'TRX', 'USDT', 'USDC'];
const scaled = (decimal: string) => parseDecimal(decimal, 8);

/** The fixtures' (bid + ask) / 2 per source and asset (coinbase: its last price), with the market's quote. */
const EXPECTED: Record<string, Record<string, [mid: string, quote: string]>> = {
  binance: { BTC: ['64981.235', 'USDT'], ETH: ['3187.455', 'USDT'], LTC: ['74.915', 'USDT'], DOGE: ['0.150125', 'USDT'], TON: ['5.4825', 'USDT'], TRX: ['0.12015', 'USDT'], USDC: ['0.99985', 'USDT'] },
  kraken: {
    BTC: ['64975.15', 'USDT'],
    ETH: ['3186.715', 'USDT'],
    LTC: ['74.885', 'USDT'],
    DOGE: ['0.15012355', 'USDT'],
    TON: ['5.48', 'USD'],
    TRX: ['0.120055', 'USD'],
    USDT: ['0.99995', 'USD'],
    USDC: ['0.99985', 'USDT'],
  },
  okx: { BTC: ['64985.55', 'USDT'], ETH: ['3187.915', 'USDT'], LTC: ['74.935', 'USDT'], DOGE: ['0.150115', 'USDT'], TON: ['5.4845', 'USDT'], TRX: ['0.120115', 'USDT'], USDC: ['0.99975', 'USDT'] },
  bybit: { BTC: ['64979.95', 'USDT'], ETH: ['3187.125', 'USDT'], LTC: ['74.905', 'USDT'], DOGE: ['0.150095', 'USDT'], TON: ['5.4815', 'USDT'], TRX: ['0.120095', 'USDT'], USDC: ['0.99995', 'USDT'] },
  coinbase: { BTC: ['64970.01', 'USDT'], ETH: ['3186.2', 'USDT'], LTC: ['74.87', 'USD'], DOGE: ['0.15007', 'USD'], USDT: ['0.99991', 'USD'] },
};

const byKey = (prices: SourcePrice[]) => new Map(prices.map((p) => [`${p.source}:${p.asset}`, p]));

/** Runs `body` with a fresh stand-in and closes it (and whatever the body opened) however the body ends. */
async function withStandIn(body: (standIn: ExchangeStandIn, cleanup: Array<() => Promise<void>>) => Promise<void>, options?: Parameters<typeof startExchangeStandIn>[0]) {
  const standIn = await startExchangeStandIn(options);
  const cleanup: Array<() => Promise<void>> = [];
  try {
    await body(standIn, cleanup);
  } finally {
    for (const close of cleanup.reverse()) await close();
    await standIn.close();
  }
}

describe('exchange prices through ccxt', () => {
  // Loading five exchanges' ccxt classes and markets takes ~4 s alone: past the 5 s default on a loaded CI machine.
  it('reads every asset from all five exchanges, exact mids, markets loaded once and tickers in one request', async () => {
    await withStandIn(async (standIn, cleanup) => {
      const exchanges = createExchangePrices({ sources: Object.keys(EXPECTED), assets: ASSETS, urls: standIn.urls, timeoutMs: 5000 });
      cleanup.push(() => exchanges.close());
      const before = Date.now();
      const { prices, errors } = await exchanges.poll();

      expect(errors).toEqual([]);
      const got = byKey(prices);
      const expected = Object.entries(EXPECTED).flatMap(([source, assets]) => Object.entries(assets).map(([asset, [mid, quote]]) => ({ source, asset, mid: scaled(mid), quote })));
      expect(prices.map(({ source, asset, mid, quote }) => ({ source, asset, mid, quote }))).toEqual(expect.arrayContaining(expected));
      expect(prices).toHaveLength(expected.length);
      // Unlisted pairs are simply absent: binance, okx and bybit have no USDT/USD; coinbase no TON, TRX or USDC market here.
      expect(got.has('binance:USDT') || got.has('coinbase:TON')).toBe(false);
      // Fresh: binance and okx send the ticker's time (the stand-in's now), the others are stamped when received.
      for (const price of prices) expect(price.at.getTime()).toBeGreaterThanOrEqual(before - 1000);

      expect(standIn.unhandled).toEqual([]);
      // binance: exchangeInfo once, then one ticker request for all seven markets.
      expect(standIn.log.filter((l) => l.source === 'binance').map((l) => l.path.split('?')[0])).toEqual(['/api/v3/exchangeInfo', '/api/v3/ticker/24hr']);
      const counts = { binance: standIn.requests('binance'), okx: standIn.requests('okx'), coinbase: standIn.requests('coinbase') };
      await exchanges.poll();
      expect({ binance: standIn.requests('binance'), okx: standIn.requests('okx'), coinbase: standIn.requests('coinbase') }).toEqual({
        binance: counts.binance + 1,
        okx: counts.okx + 1,
        coinbase: counts.coinbase + 1,
      });
    });
  }, 30_000);

  it('keeps answering when a source is down; the down one is named in errors and comes back when up', async () => {
    await withStandIn(async (standIn, cleanup) => {
      const exchanges = createExchangePrices({ sources: ['binance', 'kraken', 'okx', 'bybit'], assets: ['BTC', 'ETH'], urls: standIn.urls, timeoutMs: 2000 });
      cleanup.push(() => exchanges.close());
      standIn.setDown('kraken', 'unavailable');
      standIn.setDown('binance', 'reset');

      const first = await exchanges.poll();
      expect(first.prices.map((p) => `${p.source}:${p.asset}`).sort()).toEqual(['bybit:BTC', 'bybit:ETH', 'okx:BTC', 'okx:ETH']);
      expect(first.errors.map((e) => e.source).sort()).toEqual(['binance', 'kraken']);
      expect(first.errors.find((e) => e.source === 'kraken')?.error).toMatch(/503|ExchangeNotAvailable/);

      // Up again: the markets that failed to load are loaded now.
      standIn.setDown('binance', false);
      const second = await exchanges.poll();
      expect(byKey(second.prices).get('binance:BTC')?.mid).toBe(scaled('64981.235'));
      expect(second.errors.map((e) => e.source)).toEqual(['kraken']);
    });
  });

  it('reports a stale ticker with the time the exchange gave it', async () => {
    await withStandIn(async (standIn, cleanup) => {
      const exchanges = createExchangePrices({ sources: ['binance', 'okx', 'bybit'], assets: ['BTC'], urls: standIn.urls });
      cleanup.push(() => exchanges.close());
      const old = new Date(Date.now() - 10 * 60_000);
      standIn.setStale('binance', old);
      standIn.setStale('okx', old);

      const { prices, errors } = await exchanges.poll();
      expect(errors).toEqual([]);
      const got = byKey(prices);
      expect(got.get('binance:BTC')?.at).toEqual(old);
      expect(got.get('okx:BTC')?.at).toEqual(old);
      // bybit's tickers carry no time of their own: stamped on receipt.
      expect(got.get('bybit:BTC')?.at.getTime()).toBeGreaterThan(old.getTime() + 60_000);
    });
  });

  it('passes an outlier through as given (filtering is not this adapter’s job) and rounds a mid half-up', async () => {
    await withStandIn(async (standIn, cleanup) => {
      const exchanges = createExchangePrices({ sources: ['binance', 'okx', 'bybit'], assets: ['BTC', 'DOGE'], urls: standIn.urls });
      cleanup.push(() => exchanges.close());
      // 20 % above binance's own fixture mid (64981.235 × 1.2).
      standIn.setPrice('binance', 'BTC', { bid: '77977.48', ask: '77977.484' });
      // (0.15012001 + 0.15012002) / 2 = 0.150120015: one digit past the scale, rounded half-up.
      standIn.setPrice('okx', 'DOGE', { bid: '0.15012001', ask: '0.15012002' });

      const { prices, errors } = await exchanges.poll();
      expect(errors).toEqual([]);
      const got = byKey(prices);
      expect(got.get('binance:BTC')?.mid).toBe(scaled('77977.482'));
      expect(got.get('okx:BTC')?.mid).toBe(scaled('64985.55'));
      expect(got.get('bybit:BTC')?.mid).toBe(scaled('64979.95'));
      expect(got.get('okx:DOGE')?.mid).toBe(15012002n);
    });
  });

  it('rewrites every API origin and keeps the paths', () => {
    const api = { public: 'https://api.binance.com/api/v3', nested: { rest: 'https://{hostname}', list: ['https://fapi.binance.com/fapi/v1'] }, n: 1 };
    expect(rewriteApiUrls(api, 'http://127.0.0.1:9/binance/')).toEqual({
      public: 'http://127.0.0.1:9/binance/api/v3',
      nested: { rest: 'http://127.0.0.1:9/binance', list: ['http://127.0.0.1:9/binance/fapi/v1'] },
      n: 1,
    });
    expect([numberToDecimal(1e-7), numberToDecimal(64981.235), numberToDecimal(1.5e21), numberToDecimal(0.1 + 0.2)]).toEqual([
      '0.0000001',
      '64981.235',
      '1500000000000000000000',
      '0.30000000000000004',
    ]);
  });
});

describe('hedge market orders through ccxt', () => {
  const keys = { apiKey: 'stand-in-key', secret: 'stand-in-secret' };

  it('is accepted with the right key and secret, refused with a wrong secret', async () => {
    await withStandIn(
      async (standIn, cleanup) => {
        const hedge = createHedgeExchange({ exchange: 'binance', ...keys, url: standIn.urls.binance });
        cleanup.push(() => hedge.close());
        const order = await hedge.marketOrder({ asset: 'BTC', side: 'buy', amount: '0.01', clientOrderId: 'hedge-0001' });

        expect(standIn.orders).toEqual([
          { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.01', newClientOrderId: 'hedge-0001', newOrderRespType: 'FULL', orderId: expect.any(Number) },
        ]);
        expect(order).toEqual({ orderId: String(standIn.orders[0]?.orderId), price: '64981.24', filled: '0.01', fee: '0.00001', feeCurrency: 'BTC' });

        const wrong = createHedgeExchange({ exchange: 'binance', apiKey: keys.apiKey, secret: 'not-the-secret', url: standIn.urls.binance });
        cleanup.push(() => wrong.close());
        await expect(wrong.marketOrder({ asset: 'BTC', side: 'sell', amount: '0.01', clientOrderId: 'hedge-0002' })).rejects.toThrow(/-1022|Signature/);
        expect(standIn.refused).toEqual([{ code: -1022, msg: 'Signature for this request is not valid.' }]);
        expect(standIn.orders).toHaveLength(1);
        // Only exchangeInfo (spot) and the orders: no time sync, no signed currency or margin calls.
        expect(standIn.unhandled).toEqual([]);
        expect(new Set(standIn.log.map((l) => `${l.method} ${l.path.split('?')[0]}`))).toEqual(new Set(['GET /api/v3/exchangeInfo', 'POST /api/v3/order']));
      },
      { binance: keys },
    );
  });

  it('refuses an amount a double cannot carry exactly before sending anything', async () => {
    await withStandIn(
      async (standIn, cleanup) => {
        const hedge = createHedgeExchange({ exchange: 'binance', ...keys, url: standIn.urls.binance });
        cleanup.push(() => hedge.close());
        await expect(hedge.marketOrder({ asset: 'BTC', side: 'buy', amount: '0.10000000000000000001', clientOrderId: 'x' })).rejects.toThrow(RangeError);
        expect(standIn.requests('binance')).toBe(0);
      },
      { binance: keys },
    );
  });
});
