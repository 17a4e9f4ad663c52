import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/server/config.ts';
import { judgeWithdrawal, limitsOn, usdOf, usdText, type WithdrawalLimits } from '../../../../src/server/domain/withdrawals/limits.ts';
import { userMessage } from '../../../../src/server/http/messages.ts';
import { WithdrawalError } from '../../../../src/server/domain/withdrawals/rules.ts';
import { unitsOf } from '../../../../src/lib/money.ts';

const usd = (dollars: number) => BigInt(dollars) * 10n ** 8n;
const LIMITS: WithdrawalLimits = { dailyUsd: usd(1000), reviewAboveUsd: usd(500), reviewNewAddressAboveUsd: usd(100) };

describe('the withdrawal limits', () => {
  it('value an amount in USD exactly, rounding up so no limit slips by a fraction', () => {
    // 0.5 LTC (8 decimals) at $75.
    expect(usdOf(unitsOf(50_000_000n), 8, usd(75))).toBe(usd(37) + 50_000_000n);
    // 1 wei of ETH at $3200 is worth less than a PRICE_SCALE unit: rounded up to one.
    expect(usdOf(unitsOf(1n), 18, usd(3200))).toBe(1n);
    expect(usdText(usd(1250) + 5n * 10n ** 7n)).toBe('1250.50');
    expect(usdText(usd(3) + 999n)).toBe('3.00');
  });

  it('refuse what passes the rolling daily limit, saying what is left', () => {
    expect(judgeWithdrawal(LIMITS, { usd: usd(300), usedUsd: usd(800), newAddress: false })).toEqual({ refused: { limitUsd: usd(1000), leftUsd: usd(200) } });
    // Exactly up to the limit passes.
    expect(judgeWithdrawal(LIMITS, { usd: usd(200), usedUsd: usd(800), newAddress: false })).toEqual({ reasons: [] });
    // Already over (a price that rose): nothing is left, not a negative amount.
    expect(judgeWithdrawal(LIMITS, { usd: usd(1), usedUsd: usd(1200), newAddress: false })).toEqual({ refused: { limitUsd: usd(1000), leftUsd: 0n } });
  });

  it('send to review above the threshold, and above the lower one for a first withdrawal to an address', () => {
    expect(judgeWithdrawal(LIMITS, { usd: usd(500), usedUsd: 0n, newAddress: false })).toEqual({ reasons: [] });
    expect(judgeWithdrawal(LIMITS, { usd: usd(501), usedUsd: 0n, newAddress: false })).toEqual({ reasons: ['ABOVE_THRESHOLD'] });
    expect(judgeWithdrawal(LIMITS, { usd: usd(100), usedUsd: 0n, newAddress: true })).toEqual({ reasons: [] });
    expect(judgeWithdrawal(LIMITS, { usd: usd(101), usedUsd: 0n, newAddress: true })).toEqual({ reasons: ['NEW_ADDRESS'] });
    expect(judgeWithdrawal(LIMITS, { usd: usd(101), usedUsd: 0n, newAddress: false })).toEqual({ reasons: [] });
    expect(judgeWithdrawal(LIMITS, { usd: usd(600), usedUsd: 0n, newAddress: true })).toEqual({ reasons: ['ABOVE_THRESHOLD', 'NEW_ADDRESS'] });
  });

  it('hold a withdrawal without a current price for review, unless nothing is left of the limit', () => {
    expect(judgeWithdrawal(LIMITS, { usd: undefined, usedUsd: usd(100), newAddress: false })).toEqual({ reasons: ['NO_PRICE'] });
    expect(judgeWithdrawal(LIMITS, { usd: undefined, usedUsd: usd(1000), newAddress: false })).toEqual({ refused: { limitUsd: usd(1000), leftUsd: 0n } });
    // Review rules alone: no price still means review.
    expect(judgeWithdrawal({ ...LIMITS, dailyUsd: 0n }, { usd: undefined, usedUsd: usd(5000), newAddress: false })).toEqual({ reasons: ['NO_PRICE'] });
  });

  it('let everything through with every rule off, priced or not', () => {
    const off: WithdrawalLimits = { dailyUsd: 0n, reviewAboveUsd: 0n, reviewNewAddressAboveUsd: 0n };
    expect(limitsOn(off)).toBe(false);
    expect(judgeWithdrawal(off, { usd: undefined, usedUsd: usd(10 ** 9), newAddress: true })).toEqual({ reasons: [] });
    expect(judgeWithdrawal({ ...off, reviewAboveUsd: usd(10) }, { usd: usd(10 ** 6), usedUsd: usd(10 ** 9), newAddress: true })).toEqual({ reasons: ['ABOVE_THRESHOLD'] });
  });

  it('are read from the configuration: development defaults, 0 off, malformed amounts refused', () => {
    expect(loadConfig({}).withdrawals.limits).toEqual({ dailyUsd: usd(50_000), reviewAboveUsd: usd(10_000), reviewNewAddressAboveUsd: usd(2000) });
    expect(loadConfig({ WITHDRAWAL_DAILY_LIMIT_USD: '0', WITHDRAWAL_REVIEW_ABOVE_USD: '0.00', WITHDRAWAL_REVIEW_NEW_ADDRESS_ABOVE_USD: '250.5' }).withdrawals.limits).toEqual({
      dailyUsd: 0n,
      reviewAboveUsd: 0n,
      reviewNewAddressAboveUsd: usd(250) + 5n * 10n ** 7n,
    });
    expect(() => loadConfig({ WITHDRAWAL_DAILY_LIMIT_USD: '-5' })).toThrow(/^WITHDRAWAL_DAILY_LIMIT_USD is invalid/);
    expect(() => loadConfig({ WITHDRAWAL_REVIEW_ABOVE_USD: '10.123' })).toThrow(/^WITHDRAWAL_REVIEW_ABOVE_USD is invalid/);
  });

  it('say the refusal in the account language, with the limit and what is left', () => {
    const refusal = (language: string) => new WithdrawalError('WITHDRAWAL_DAILY_LIMIT', 'over', { details: { language, limitUsd: '50000.00', leftUsd: '1250.50' } });
    expect(userMessage(refusal('ENG'), 'ENG')).toBe('This is over your daily withdrawal limit of $50,000.00 in 24 hours. You can send up to $1,250.50 more right now.');
    expect(userMessage(refusal('RUS'), 'RUS')).toBe('Превышен дневной лимит на вывод (50\u00a0000,00\u00a0$ за 24 часа). Сейчас можно отправить ещё не больше 1\u00a0250,50\u00a0$.');
  });
});
