import { describe, expect, it } from 'vitest';
import type { PaymentMethodItem } from '../../../src/api/buy.ts';
import { COINS } from '../../../src/lib/currencies.ts';
import { applyQuote, buyableCoins, buyLimitProblem, canReviewBuy, leadingMethod, shouldSkipFiatChooser, type BuyState } from '../../../src/stores/buy.ts';
import { formatCountdown as formatBuyCountdown } from '../../../src/stores/primitives/countdown.ts';

const card: PaymentMethodItem = { paymentMethodCode: 'CARD', paymentMethodName: 'Bank card', fiatAmount: '100', fiatCurrency: 'USD', cryptoAmount: '98.522167', minLimit: '10', maxLimit: '5000', itemId: 'a', rate: '1.015' };
const other: PaymentMethodItem = { ...card, paymentMethodCode: 'OTHER', paymentMethodName: 'Other', cryptoAmount: '97', fiatAmount: '102', itemId: 'b', minLimit: '50', maxLimit: '100' };
const state: BuyState = {
  to: 'USDC_ETH',
  from: 'USD',
  geoId: 'US',
  methods: [],
  method: null,
  rateId: null,
  fromAmount: '100',
  toAmount: '',
  typed: 'from',
  quoting: true,
  quoteFailed: false,
  backFromOrder: false,
  choosing: null,
};

describe('the buy flow store', () => {
  it('offers only active coins whose currency contains USDC', () => {
    expect(buyableCoins(COINS).map((c) => c.currency)).toEqual(['USDC_ETH']);
    expect(buyableCoins(COINS.map((c) => ({ ...c, active: false })))).toEqual([]);
    // Of those, the ones the gateway's provider sells once it has said which (issue 32: MoonPay's list).
    expect(buyableCoins(COINS, ['USDC_ETH', 'USDT_ETH']).map((c) => c.currency)).toEqual(['USDC_ETH']);
    expect(buyableCoins(COINS, [])).toEqual([]);
  });

  it('skips the fiat chooser only for a single option when not coming back from the order', () => {
    expect(shouldSkipFiatChooser([{ fiatCurrency: 'USD', geoId: 'US' }], false)).toEqual({ fiatCurrency: 'USD', geoId: 'US' });
    expect(shouldSkipFiatChooser([{ fiatCurrency: 'USD', geoId: 'US' }], true)).toBeUndefined();
    expect(shouldSkipFiatChooser([{ fiatCurrency: 'USD', geoId: 'US' }, { fiatCurrency: 'EUR', geoId: 'EU' }], false)).toBeUndefined();
    expect(shouldSkipFiatChooser(undefined, false)).toBeUndefined();
  });

  it('fills the side not typed from the first returned method, or the chosen one', () => {
    const quote = { methods: [card, other], fixedRateId: 'r1' };
    expect(applyQuote(state, 'from', quote)).toMatchObject({ toAmount: '98.522167', rateId: 'r1', method: null, quoting: false });
    expect(applyQuote({ ...state, method: 'OTHER' }, 'from', quote)).toMatchObject({ toAmount: '97', method: 'OTHER' });
    expect(applyQuote({ ...state, typed: 'to', toAmount: '98.522167' }, 'to', quote)).toMatchObject({ fromAmount: '100' });
    // A chosen method the new quote lacks is dropped.
    expect(applyQuote({ ...state, method: 'GONE' }, 'from', quote).method).toBeNull();
    expect(leadingMethod([card, other], null)).toBe(card);
  });

  it('preselects the only payment method a quote offers, so Review order needs no extra tap', () => {
    const single = applyQuote(state, 'from', { methods: [card], fixedRateId: 'r1' });
    expect(single.method).toBe('CARD');
    expect(canReviewBuy(single, null)).toBe(true);
    expect(applyQuote(state, 'from', { methods: [card, other], fixedRateId: 'r1' }).method).toBeNull();
  });

  it("puts the fiat field in error outside the method's limits with SPEC §5's message", () => {
    expect(buyLimitProblem('9.99', card)).toEqual({ key: 'buy_limit_error', params: { min: '10', max: '5,000', currency: 'USD' } });
    // Written as the labels are, in the user's language (issue 19 item 8).
    expect(buyLimitProblem('9.99', { ...card, minLimit: '10.5' }, 'ru')?.params).toMatchObject({ min: '10,5', max: '5\u00a0000' });
    expect(buyLimitProblem('5000.01', card)).not.toBeNull();
    expect(buyLimitProblem('10', card)).toBeNull();
    expect(buyLimitProblem('5000', card)).toBeNull();
    expect(buyLimitProblem('0', card)).toBeNull();
    expect(buyLimitProblem('', card)).toBeNull();
    expect(buyLimitProblem('100', undefined)).toBeNull();
  });

  it('keeps review disabled while the crypto amount is 0, no method is chosen, limits are violated or a quote is running', () => {
    const ready: BuyState = { ...state, methods: [card], method: 'CARD', rateId: 'r1', quoting: false };
    expect(canReviewBuy(ready, null)).toBe(true);
    expect(canReviewBuy({ ...ready, method: null }, null)).toBe(false);
    expect(canReviewBuy({ ...ready, methods: [{ ...card, cryptoAmount: '0' }] }, null)).toBe(false);
    expect(canReviewBuy(ready, { key: 'buy_limit_error', params: {} })).toBe(false);
    expect(canReviewBuy({ ...ready, quoting: true }, null)).toBe(false);
    expect(canReviewBuy({ ...ready, rateId: null }, null)).toBe(false);
  });

  it('counts the review down as minutes:seconds', () => {
    expect(formatBuyCountdown(300)).toBe('5:00');
    expect(formatBuyCountdown(59)).toBe('0:59');
    expect(formatBuyCountdown(-3)).toBe('0:00');
  });
});
