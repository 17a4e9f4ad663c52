import { describe, expect, it } from 'vitest';
import { format } from '../../../src/lib/text.ts';
import en from '../../../i18n/en.json';
import ru from '../../../i18n/ru.json';
import { checkSellAmount, cryptoLimits, divideDecimals, sellLimitsText, type SellTerms } from '../../../src/stores/sell.ts';

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

  it('never shows a min above the max: the limits line says the amount is not available (issue 33 item 3)', () => {
    const tEn = (key: keyof typeof en, params?: Record<string, string | number>) => format(en[key], params);
    const tRu = (key: keyof typeof en, params?: Record<string, string | number>) => format(ru[key], params);
    const show = (value: string) => value;
    expect(sellLimitsText({ min: '0.0002', max: '0.06' }, 'BTC', tEn, show)).toBe('Min 0.0002 - max 0.06 BTC');
    for (const limits of [{ min: '0.0004', max: '0.0002' }, { min: '0.0002', max: '0.0002' }]) {
      expect(sellLimitsText(limits, 'BTC', tEn, show)).toBe('This amount is not available to sell right now (BTC)');
      expect(sellLimitsText(limits, 'BTC', tRu, show)).toBe('Эта сумма сейчас недоступна для продажи (BTC)');
    }
    const inverted = checkSellAmount('1', terms('2000', '1000', '5000000'), '10', 8);
    expect(inverted.limits && sellLimitsText(inverted.limits, 'BTC', tEn, show)).not.toMatch(/Min/);
  });
});
