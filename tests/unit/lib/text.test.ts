import { describe, expect, it } from 'vitest';
import en from '../../../i18n/en.json' with { type: 'json' };
import ru from '../../../i18n/ru.json' with { type: 'json' };
import { format, translate } from '../../../src/lib/text.ts';

describe('texts', () => {
  it('has a Russian text for every English key and no key only in Russian', () => {
    expect(Object.keys(ru).sort()).toEqual(Object.keys(en).sort());
    for (const [key, value] of Object.entries(ru)) expect(value.trim(), key).not.toBe('');
  });

  it('keeps the same placeholders in both languages', () => {
    const names = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const key of Object.keys(en) as (keyof typeof en)[]) expect(names(ru[key]), key).toEqual(names(en[key]));
  });

  it('fills placeholders and leaves unknown ones visible', () => {
    expect(format('Min {min} - max {max} {currency}', { min: 10, max: 500, currency: 'USD' })).toBe('Min 10 - max 500 USD');
    expect(format('Hello {name}')).toBe('Hello {name}');
  });

  it('falls back to English for a key a translation lacks', () => {
    expect(translate({}, 'auth_login')).toBe(en.auth_login);
    expect(translate(ru, 'auth_login')).toBe(ru.auth_login);
  });
});
