import { describe, expect, it } from 'vitest';
import { fiatEquivalentText } from '../../../src/stores/rates.ts';

describe('fiat beside a typed or reviewed crypto amount (issue 33 item 3)', () => {
  it('shows the amount at the rate, in the chosen fiat and language, rounded to cents', () => {
    expect(fiatEquivalentText('0.004', '65000', '$', 'en')).toBe('≈\u00a0$260.00');
    expect(fiatEquivalentText('1.5', '64675.125', 'C$', 'en')).toBe('≈\u00a0C$97,012.69');
    expect(fiatEquivalentText('0.004', '6000000', '₽', 'ru')).toBe('≈\u00a024\u00a0000,00\u00a0₽');
    expect(fiatEquivalentText('12.', '1', '$', 'en')).toBe('≈\u00a0$12.00');
  });

  it('shows nothing for an empty, zero or unreadable amount, or without a rate', () => {
    for (const amount of ['', '.', '0', '0.', '0.000', 'abc']) expect(fiatEquivalentText(amount, '65000', '$', 'en')).toBeUndefined();
    expect(fiatEquivalentText('1', undefined, '$', 'en')).toBeUndefined();
  });
});
