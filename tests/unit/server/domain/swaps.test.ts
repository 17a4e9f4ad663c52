import { describe, expect, expectTypeOf, it } from 'vitest';
import { addUnits, subtractUnits, unitsOf, type Units } from '../../../../src/lib/money.ts';
import {
  amountUnits,
  limitOf,
  quoteByDestination,
  quoteBySource,
  quoteHolds,
  SwapError,
  DEFAULT_SWAP_LIMITS,
  type DestinationUnits,
  type SourceUnits,
} from '../../../../src/server/domain/swaps/rules.ts';
import { findCoin, type CoinMeta } from '../../../../src/lib/currencies.ts';

const PRICE = 10n ** 8n;
const btc = { price: 65_000n * PRICE, decimals: 8 };
const usdt = { price: 1n * PRICE, decimals: 6 };
const eth = { price: 3_200n * PRICE, decimals: 18 };
const coin = (currency: string) => findCoin(currency) as CoinMeta;

describe('the two sides of a swap do not mix (issue 34 item 4)', () => {
  it('brands what the user pays apart from what they get, each a bigint at run time', () => {
    const q = quoteBySource(unitsOf(100_000n), btc, usdt, 50);
    expectTypeOf(q.source).toEqualTypeOf<SourceUnits>();
    expectTypeOf(q.destination).toEqualTypeOf<DestinationUnits>();
    expectTypeOf(q.fee).toEqualTypeOf<DestinationUnits>();
    // The spread is in the destination currency: it adds to what the user gets.
    expect(addUnits(q.destination, q.fee)).toBe(65_000_000n);
    expect(typeof q.source).toBe('bigint');
  });

  it('refuses to compile a source amount where a destination one belongs, and the other way', () => {
    const q = quoteBySource(unitsOf(100_000n), btc, usdt, 50);
    // @ts-expect-error: source units plus destination units
    addUnits(q.source, q.destination);
    // @ts-expect-error: the fee (destination units) taken from the source
    subtractUnits(q.source, q.fee);
    // @ts-expect-error: quoting by destination with what the user pays
    quoteByDestination(q.source, btc, usdt, 50);
    // @ts-expect-error: quoting by source with what the user gets
    quoteBySource(q.destination, btc, usdt, 50);
    // @ts-expect-error: a quote whose sides are swapped
    quoteHolds({ source: q.destination, destination: q.source, fee: q.fee }, btc, usdt, 100);
    // @ts-expect-error: a plain bigint is no side's units
    const plain: SourceUnits = 100_000n;
    // @ts-expect-error: nor is units of some currency unknown at compile time
    const generic: DestinationUnits = unitsOf<string>(1n);
    expect([plain, generic]).toEqual([100_000n, 1n]);
    // Either side is still units of some currency: it goes where any currency's units go (a ledger posting).
    const anyCurrency: Units = q.source;
    expect(anyCurrency).toBe(100_000n);
  });
});

describe('swap quotes: exact, with the spread in the destination currency', () => {
  it('by source: what the source buys less the spread, rounded down; the fee is the rest', () => {
    const q = quoteBySource(unitsOf(100_000n), btc, usdt, 50);
    expect(q).toEqual({ source: 100_000n, destination: 64_675_000n, fee: 325_000n, rate: '64675' });
    expect(q.destination + q.fee).toBe(65_000_000n);
  });

  it('by destination: the user gets exactly what they typed, paying the source rounded up', () => {
    const q = quoteByDestination(unitsOf(64_675_000n), btc, usdt, 50);
    expect(q.source).toBe(100_000n);
    expect(q.destination).toBe(64_675_000n);
    const odd = quoteByDestination(unitsOf(1_000_000n), btc, usdt, 50);
    // 1 USDT needs 1/0.995 USDT gross = 0.00001547… BTC, rounded up to the satoshi.
    expect(odd.source).toBe(1547n);
    expect(odd.destination).toBe(1_000_000n);
    expect(odd.fee).toBeGreaterThanOrEqual(0n);
    expect(quoteBySource(odd.source, btc, usdt, 50).destination).toBeGreaterThanOrEqual(1_000_000n);
  });

  it('never shows more than 8 decimals of an 18-decimal coin, and never pays more than the price', () => {
    const q = quoteBySource(unitsOf(10_000_000n), usdt, eth, 50);
    expect(q.destination % 10n ** 10n).toBe(0n);
    expect(q.destination + q.fee).toBe((10_000_000n * 10n ** 18n) / (3_200n * 10n ** 6n));
    const back = quoteByDestination(q.destination, usdt, eth, 50);
    expect(back.source).toBeLessThanOrEqual(10_000_000n);
  });

  it('refuses amounts too small to buy anything', () => {
    expect(() => quoteBySource(unitsOf(1n), usdt, btc, 50)).toThrow(SwapError);
    expect(() => quoteByDestination(unitsOf(0n), btc, usdt, 50)).toThrow(SwapError);
  });

  it('reads wire amounts with at most 8 decimals, above zero', () => {
    expect(amountUnits('0.001', coin('BTC'))).toBe(100_000n);
    expect(amountUnits('1.5', coin('ETH'))).toBe(1_500_000_000_000_000_000n);
    expect(() => amountUnits('0.000000001', coin('BTC'))).toThrow(SwapError);
    expect(() => amountUnits('1.1234567', coin('USDT_TRX'))).toThrow(SwapError);
    expect(() => amountUnits('0', coin('BTC'))).toThrow(SwapError);
  });
});

describe('swap limits come from configuration', () => {
  it('takes the pair, else the source, else the default of its asset', () => {
    const settings = { spreadBps: 50, limits: { 'BTC/ETH': { min: '0.01', max: '1' }, USDT_TRX: { min: '5', max: '10' } } };
    expect(limitOf(settings, coin('BTC'), coin('ETH'))).toEqual({ minLimit: 1_000_000n, maxLimit: 100_000_000n });
    expect(limitOf(settings, coin('USDT_TRX'), coin('BTC'))).toEqual({ minLimit: 5_000_000n, maxLimit: 10_000_000n });
    expect(limitOf(settings, coin('BTC'), coin('USDT_TRX'))).toEqual({ minLimit: 20_000n, maxLimit: 150_000_000n });
    expect(limitOf(settings, coin('USDT_ETH'), coin('BTC'))?.minLimit).toBe(10_000_000n);
    for (const [asset, limit] of Object.entries(DEFAULT_SWAP_LIMITS)) expect(Number(limit.min), asset).toBeLessThan(Number(limit.max));
  });
});

describe('swap configuration', () => {
  it('reads SWAP_SPREAD_BPS and SWAP_LIMITS, refusing bad values with the variable named', async () => {
    const { loadConfig } = await import('../../../../src/server/config.ts');
    expect(loadConfig({}).swap).toEqual({ spreadBps: 50, limits: {}, maxSlippageBps: 50 });
    expect(loadConfig({ SWAP_SPREAD_BPS: '120', SWAP_LIMITS: '{"BTC/ETH":{"min":"0.1","max":"2"}}', SWAP_MAX_SLIPPAGE_BPS: '30' }).swap).toEqual({
      spreadBps: 120,
      limits: { 'BTC/ETH': { min: '0.1', max: '2' } },
      maxSlippageBps: 30,
    });
    expect(() => loadConfig({ SWAP_LIMITS: '{oops' })).toThrow(/^SWAP_LIMITS is invalid.*must be JSON/);
    expect(() => loadConfig({ SWAP_LIMITS: '{"BTC":{"min":"2","max":"1"}}' })).toThrow(/min must be below max/);
    expect(() => loadConfig({ SWAP_SPREAD_BPS: '9000' })).toThrow(/^SWAP_SPREAD_BPS is invalid/);
    for (const bad of ['-1', '1.5', '1001', 'lots']) expect(() => loadConfig({ SWAP_MAX_SLIPPAGE_BPS: bad }), bad).toThrow(/^SWAP_MAX_SLIPPAGE_BPS is invalid/);
    expect(loadConfig({}).sell.maxSlippageBps).toBe(100);
    expect(loadConfig({ SELL_MAX_SLIPPAGE_BPS: '0' }).sell.maxSlippageBps).toBe(0);
    for (const bad of ['-1', '2.5', '5000']) expect(() => loadConfig({ SELL_MAX_SLIPPAGE_BPS: bad }), bad).toThrow(/^SELL_MAX_SLIPPAGE_BPS is invalid/);
  });
});
