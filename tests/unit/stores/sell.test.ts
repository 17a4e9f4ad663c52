import { describe, expect, it } from 'vitest';
import { checkSellAmount, cryptoLimits, divideDecimals, type SellTerms } from '../../../src/stores/sell.ts';

const terms = (minLimit: string, maxLimit: string, rate: string): SellTerms => ({
  loading: false,
  failed: false,
  limits: { minLimit, maxLimit, limitCurrency: 'RUB' },
  rate: { rate, rateId: 'r' },
  cards: [],
});

describe('sell amount rules (SPEC §5)', () => {
  it('divides exactly, rounding as asked', () => {
    expect(divideDecimals('1000', '5000000', 8, 'up')).toBe('0.0002');
    expect(divideDecimals('1000', '3', 8, 'down')).toBe('333.33333333');
    expect(divideDecimals('1000', '3', 8, 'up')).toBe('333.33333334');
  });

  it('takes the limits as the fiat limits divided by the rate', () => {
    expect(cryptoLimits({ minLimit: '1000', maxLimit: '300000', limitCurrency: 'RUB' }, '5000000', 8)).toEqual({ min: '0.0002', max: '0.06' });
    expect(cryptoLimits({ minLimit: '1000', maxLimit: '300000', limitCurrency: 'RUB' }, undefined, 8)).toBeUndefined();
  });

  it('needs an amount strictly between the limits; zero blocks without a message', () => {
    const t = terms('1000', '300000', '5000000');
    for (const zero of ['', '0', '0.']) {
      const check = checkSellAmount(zero, t, '1', 8);
      expect(check.canContinue).toBe(false);
      expect(check.error).toBeUndefined();
    }
    expect(checkSellAmount('0.0002', t, '1', 8)).toMatchObject({ canContinue: false, error: 'sell_amount_limits' });
    expect(checkSellAmount('0.00020001', t, '1', 8)).toMatchObject({ canContinue: true, fiatAmount: '1000.05' });
    expect(checkSellAmount('0.06', t, '1', 8)).toMatchObject({ canContinue: false, error: 'sell_amount_limits' });
    expect(checkSellAmount('0.001', t, '1', 8)).toMatchObject({ canContinue: true, fiatAmount: '5000' });
    expect(checkSellAmount('0.001', t, '0.0005', 8)).toMatchObject({ canContinue: false, error: 'sell_not_enough' });
  });

  it('shows sell_limit_error when max is not above min', () => {
    expect(checkSellAmount('1', terms('1000', '1000', '5000000'), '10', 8)).toMatchObject({ canContinue: false, error: 'sell_limit_error' });
    expect(checkSellAmount('1', terms('2000', '1000', '5000000'), '10', 8)).toMatchObject({ canContinue: false, error: 'sell_limit_error' });
  });
});
