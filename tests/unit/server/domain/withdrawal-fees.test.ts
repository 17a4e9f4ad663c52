import { describe, expect, it, vi } from 'vitest';
import { unitsOf } from '../../../../src/lib/money.ts';
import { findCoin, type CoinMeta } from '../../../../src/lib/currencies.ts';
import type { FeeEstimate, FeeQuery } from '../../../../src/server/adapters/chains/port.ts';
import { createFeeCalculator, estimateInAsset, FEE_ESTIMATE_CACHE_MS, roundUpToShown, withdrawalFee } from '../../../../src/server/domain/withdrawals/fees.ts';
import { PriceUnavailableError } from '../../../../src/server/domain/rates.ts';
import { WithdrawalError } from '../../../../src/server/domain/withdrawals/rules.ts';
import { DEFAULT_WITHDRAWAL_FEE_MARGIN_BPS } from '../../../../src/server/config-withdrawals.ts';
import { loadConfig, ConfigError } from '../../../../src/server/config.ts';
import { fixedRates } from '../../../support/prices.ts';

const coin = (currency: string): CoinMeta => {
  const found = findCoin(currency);
  if (!found) throw new Error(currency);
  return found;
};
const REFERENCE = { ETH: '3200', USDT: '1', TRX: '0.12', BTC: '65000' };
const prices = (usd: Record<string, string> = REFERENCE) => fixedRates(usd).prices();
const eth = (wei: bigint): FeeEstimate => ({ network: 'ETHEREUM', currency: 'ETH', amount: unitsOf(wei) });

describe('the withdrawal fee rule', () => {
  it('keeps the floor where the network asks less (the devnet and quiet networks)', async () => {
    // A token transfer at 2 gwei: 0.00013 ETH, 0.416 USDT at $3200, 0.4992 with 20 %: the 5 USDT floor stays.
    const inUsdt = estimateInAsset(eth(130_000_000_000_000n), coin('USDT_ETH'), await prices());
    expect(inUsdt).toBe(416_000n);
    expect(withdrawalFee({ floor: 5_000_000n, estimateInAsset: inUsdt, marginBps: 2000, coin: coin('USDT_ETH') })).toBe(5_000_000n);
    // BTC: 1,000 sat and the margin is below the 0.0001 floor.
    expect(withdrawalFee({ floor: 10_000n, estimateInAsset: estimateInAsset({ currency: 'BTC', amount: unitsOf(1_000n) }, coin('BTC'), undefined), marginBps: 2000, coin: coin('BTC') })).toBe(10_000n);
  });

  it('charges the estimate and the margin where the network asks more than the floor', async () => {
    // 0.01 ETH of gas is 32 USDT; with 20 % it is 38.4.
    const inUsdt = estimateInAsset(eth(10_000_000_000_000_000n), coin('USDT_ETH'), await prices());
    expect(inUsdt).toBe(32_000_000n);
    expect(withdrawalFee({ floor: 5_000_000n, estimateInAsset: inUsdt, marginBps: 2000, coin: coin('USDT_ETH') })).toBe(38_400_000n);
    expect(withdrawalFee({ floor: 5_000_000n, estimateInAsset: inUsdt, marginBps: 0, coin: coin('USDT_ETH') })).toBe(32_000_000n);
    expect(withdrawalFee({ floor: 5_000_000n, estimateInAsset: inUsdt, marginBps: 10_000, coin: coin('USDT_ETH') })).toBe(64_000_000n);
    // A coin's own fee needs no price: TRX for TRX, 1.37 TRX with 20 % is 1.644.
    expect(withdrawalFee({ floor: 1_000_000n, estimateInAsset: estimateInAsset({ currency: 'TRX', amount: unitsOf(1_370_000n) }, coin('TRX'), undefined), marginBps: 2000, coin: coin('TRX') })).toBe(1_644_000n);
  });

  it('converts a token fee exactly, rounding up at each step, and never shows more than 8 decimals', async () => {
    const table = await prices({ ETH: '3200.12345678', USDT: '0.99987654' });
    // 123456789012345 wei × 3200.12345678 / 0.99987654 = 395125.748… micro-USDT: 395126, then × 1.2 = 474151.2: 474152.
    const inUsdt = estimateInAsset(eth(123_456_789_012_345n), coin('USDT_ETH'), table);
    expect(inUsdt).toBe(395_126n);
    expect(withdrawalFee({ floor: 0n, estimateInAsset: inUsdt, marginBps: 2000, coin: coin('USDT_ETH') })).toBe(474_152n);
    // TRC-20: 13 TRX at $0.12 is exactly 1.56 USDT.
    expect(estimateInAsset({ currency: 'TRX', amount: unitsOf(13_000_000n) }, coin('USDT_TRX'), await prices())).toBe(1_560_000n);
    // ETH has 18 decimals, the user sees 8: 0.001234567890123456 ETH is charged as 0.00123457.
    expect(roundUpToShown(unitsOf(1_234_567_890_123_456n), coin('ETH'))).toBe(1_234_570_000_000_000n);
    expect(withdrawalFee({ floor: 1_000_000_000_000_000n, estimateInAsset: 1_234_567_890_123_456n, marginBps: 0, coin: coin('ETH') })).toBe(1_234_570_000_000_000n);
    expect(roundUpToShown(unitsOf(1_230_000_000_000_000n), coin('ETH'))).toBe(1_230_000_000_000_000n);
    // The same asset on another rail (BTC_LNG paying in BTC) is rescaled without a price.
    expect(estimateInAsset({ currency: 'BTC', amount: unitsOf(1_000n) }, coin('BTC_LNG'), undefined)).toBe(1_000n);
  });

  it('refuses a token fee when the fee coin or the token itself has no current price, inventing none', async () => {
    for (const missing of ['ETH', 'USDT']) {
      const table = await prices(Object.fromEntries(Object.entries(REFERENCE).filter(([asset]) => asset !== missing)));
      const refusal = (() => {
        try {
          estimateInAsset(eth(130_000_000_000_000n), coin('USDT_ETH'), table);
        } catch (error) {
          return error;
        }
      })();
      expect(refusal).toBeInstanceOf(PriceUnavailableError);
      expect(refusal).toMatchObject({ code: 'PRICE_UNAVAILABLE', details: { asset: missing } });
    }
  });
});

describe('the current fee of a withdrawal', () => {
  const floors = new Map([
    ['USDT_ETH', 5_000_000n],
    ['ETH', 1_000_000_000_000_000n],
  ]);
  const setup = (estimate: (query: FeeQuery) => Promise<FeeEstimate>, usd: Record<string, string> = REFERENCE) => {
    let now = 1_000_000;
    const estimateFee = vi.fn(estimate);
    const rates = fixedRates(usd);
    const readPrices = vi.spyOn(rates, 'prices');
    const fees = createFeeCalculator({ chain: { estimateFee, hotWalletAddress: async () => '0xhot' }, rates, floors, marginBps: 2000, now: () => now });
    return { fees, estimateFee, readPrices, later: (ms: number) => (now += ms) };
  };

  it('asks the node once per network, currency and recipient for a few seconds, and prices only tokens', async () => {
    const { fees, estimateFee, readPrices, later } = setup(async () => eth(10_000_000_000_000_000n));
    expect((await fees.current(coin('USDT_ETH'), '0xabc', unitsOf(1n))).fee).toBe(38_400_000n);
    expect((await fees.current(coin('USDT_ETH'), '0xabc', unitsOf(2n))).fee).toBe(38_400_000n);
    expect(estimateFee).toHaveBeenCalledTimes(1);
    // Another recipient may cost more gas (its first token balance): asked on its own.
    await fees.current(coin('USDT_ETH'), '0xdef', unitsOf(1n));
    expect(estimateFee).toHaveBeenCalledTimes(2);
    later(FEE_ESTIMATE_CACHE_MS);
    await fees.current(coin('USDT_ETH'), '0xabc', unitsOf(1n));
    expect(estimateFee).toHaveBeenCalledTimes(3);
    readPrices.mockClear();
    // ETH for ETH: 0.01 ETH + 20 %, no price read.
    expect((await fees.current(coin('ETH'), '0xabc', unitsOf(1n))).fee).toBe(12_000_000_000_000_000n);
    expect(readPrices).not.toHaveBeenCalled();
    // No recipient yet: priced as a transfer to the hot wallet's own address.
    await fees.current(coin('ETH'), undefined, unitsOf(1n));
    expect(estimateFee).toHaveBeenLastCalledWith({ network: 'ETHEREUM', currency: 'ETH', toAddress: '0xhot', amount: 1n });
  });

  it('refuses with WITHDRAWAL_FEE_UNAVAILABLE when the node cannot estimate, and asks again next time', async () => {
    let down = true;
    const { fees, estimateFee } = setup(async () => {
      if (down) throw new Error('connect ECONNREFUSED');
      return eth(100_000_000_000_000n);
    });
    const refused = await fees.current(coin('ETH'), '0xabc', unitsOf(1n)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(WithdrawalError);
    expect(refused).toMatchObject({ code: 'WITHDRAWAL_FEE_UNAVAILABLE' });
    down = false;
    expect((await fees.current(coin('ETH'), '0xabc', unitsOf(1n))).fee).toBe(1_000_000_000_000_000n);
    expect(estimateFee).toHaveBeenCalledTimes(2);
  });

  it('refuses a token withdrawal with PRICE_UNAVAILABLE when the market has no price for its fee coin', async () => {
    const { fees } = setup(async () => eth(10_000_000_000_000_000n), { USDT: '1' });
    await expect(fees.current(coin('USDT_ETH'), '0xabc', unitsOf(1n))).rejects.toMatchObject({ code: 'PRICE_UNAVAILABLE' });
  });
});

describe('WITHDRAWAL_FEE_MARGIN_BPS', () => {
  it('is 20 % by default, from 0 to 10000 basis points', () => {
    expect(DEFAULT_WITHDRAWAL_FEE_MARGIN_BPS).toBe(2000);
    expect(loadConfig({}).withdrawals.feeMarginBps).toBe(2000);
    expect(loadConfig({ WITHDRAWAL_FEE_MARGIN_BPS: '0' }).withdrawals.feeMarginBps).toBe(0);
    expect(loadConfig({ WITHDRAWAL_FEE_MARGIN_BPS: '10000' }).withdrawals.feeMarginBps).toBe(10_000);
    expect(() => loadConfig({ WITHDRAWAL_FEE_MARGIN_BPS: '10001' })).toThrow(ConfigError);
    expect(() => loadConfig({ WITHDRAWAL_FEE_MARGIN_BPS: '-1' })).toThrow(/WITHDRAWAL_FEE_MARGIN_BPS/);
    expect(() => loadConfig({ WITHDRAWAL_FEE_MARGIN_BPS: '12.5' })).toThrow(ConfigError);
  });
});
