import { describe, expect, it } from 'vitest';
import { withinDailyCap } from '../../../../src/server/domain/signing-cap.ts';
import { signerDailyMax } from '../../../../src/server/config-hot-cold.ts';
import { loadConfig } from '../../../../src/server/config.ts';

describe("the signer's daily cap", () => {
  it('lets a payment through up to the cap and refuses the one that would pass it', () => {
    expect(withinDailyCap(10n, 0n, 10n)).toBe(true);
    expect(withinDailyCap(10n, 4n, 6n)).toBe(true);
    expect(withinDailyCap(10n, 4n, 7n)).toBe(false);
    expect(withinDailyCap(10n, 11n, 0n)).toBe(false);
    expect(withinDailyCap(0n, 0n, 1n)).toBe(false);
    // No cap for the currency: anything.
    expect(withinDailyCap(undefined, 10n ** 30n, 10n ** 30n)).toBe(true);
  });

  it('reads SIGNER_DAILY_MAX per network in its coin and per token in its own units, exactly', () => {
    expect(signerDailyMax('LITECOIN:10,ETHEREUM:5,USDT_TRX:20000.5')).toEqual({ LTC: 1_000_000_000n, ETH: 5n * 10n ** 18n, USDT_TRX: 20_000_500_000n });
    expect(signerDailyMax(undefined)).toEqual({});
    expect(signerDailyMax('ETHEREUM:0.000000000000000001')).toEqual({ ETH: 1n });
    expect(() => signerDailyMax('MOON:1')).toThrow(/SIGNER_DAILY_MAX names MOON/);
    // A network's coin by its currency is the network's setting: one way to say it.
    expect(() => signerDailyMax('LTC:1')).toThrow(/SIGNER_DAILY_MAX names LTC/);
    expect(() => signerDailyMax('LITECOIN:0.000000001')).toThrow(/SIGNER_DAILY_MAX for LITECOIN is invalid/);
    expect(loadConfig({ SIGNER_DAILY_MAX: 'LITECOIN:10,ETHEREUM:5' }, '0.0.0-test').signer.dailyMax).toEqual({ LTC: 1_000_000_000n, ETH: 5n * 10n ** 18n });
    expect(() => loadConfig({ SIGNER_DAILY_MAX: 'LITECOIN=10' }, '0.0.0-test')).toThrow(/SIGNER_DAILY_MAX is invalid/);
  });
});
