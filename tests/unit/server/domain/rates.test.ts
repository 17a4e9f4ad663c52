import { describe, expect, it } from 'vitest';
import { findCoin, type CoinMeta } from '../../../../src/lib/currencies.ts';
import { parseDecimal } from '../../../../src/lib/amount.ts';
import { REFERENCE_USD, walk } from '../../../../src/server/adapters/rates/reference.ts';
import { PRICE_DECIMALS, type PriceTable } from '../../../../src/server/adapters/rates/port.ts';
import { invertedRatesMap, ratesMap } from '../../../../src/server/domain/rates.ts';

const price = (value: string) => parseDecimal(value, PRICE_DECIMALS);
const coin = (currency: string) => findCoin(currency) as CoinMeta;

describe('reference rates', () => {
  it('walks within ±10% of the reference (±0.5% for stablecoins), however the dice fall', () => {
    let up: Record<string, bigint> = {};
    let down: Record<string, bigint> = {};
    for (let i = 0; i < 2000; i++) {
      up = walk(up, (_min, max) => max - 1);
      down = walk(down, (min) => min);
    }
    const ref = (asset: string) => price(REFERENCE_USD[asset] ?? '0');
    expect(up.BTC).toBe((ref('BTC') * 11_000n) / 10_000n);
    expect(down.BTC).toBe((ref('BTC') * 9_000n) / 10_000n);
    expect(up.USDT).toBe((ref('USDT') * 10_050n) / 10_000n);
    expect(down.USDC).toBe((ref('USDC') * 9_950n) / 10_000n);
  });

  it('moves by small steps', () => {
    const start = walk({}, () => 0);
    const next = walk(start, (_min, max) => max - 1);
    expect(next.ETH).toBe(((start.ETH ?? 0n) * 10_030n) / 10_000n);
  });

  it('turns a price table into ratesMap, and its inverse, as exact decimals', () => {
    const table: PriceTable = { usd: { BTC: price('65000'), USDT: price('1'), ETH: price('3200.5') }, fiatPerUsd: { USD: price('1'), EUR: price('0.92') }, at: new Date(), basis: {}, lastKnown: { usd: {}, fiatPerUsd: {} } };
    expect(ratesMap(table, [coin('BTC'), coin('USDT_TRX')], ['USD', 'EUR'])).toEqual({ BTC: { USD: '65000', EUR: '59800' }, USDT_TRX: { USD: '1', EUR: '0.92' } });
    const inverse = invertedRatesMap(table, [coin('BTC'), coin('USDT_TRX'), coin('ETH')], ['USD']);
    expect(inverse).toEqual({ USD: { BTC: '0.00001538', USDT_TRX: '1', ETH: '0.00031245' } });
  });

  it('leaves out what the source does not price', () => {
    const table: PriceTable = { usd: { BTC: price('1') }, fiatPerUsd: { USD: price('1') }, at: new Date(), basis: {}, lastKnown: { usd: {}, fiatPerUsd: {} } };
    expect(ratesMap(table, [coin('ETH')], ['USD', 'XXX'])).toEqual({ ETH: {} });
  });
});
