import { describe, expect, it } from 'vitest';
import en from '../../../i18n/operator.en.json' with { type: 'json' };
import ru from '../../../i18n/operator.ru.json' with { type: 'json' };
import { texts } from '../../../src/operator/texts.ts';

describe("the operator console's texts", () => {
  it('has a Russian text for every English key, with the same placeholders', () => {
    expect(Object.keys(ru).sort()).toEqual(Object.keys(en).sort());
    const names = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const key of Object.keys(en) as (keyof typeof en)[]) {
      expect(ru[key].trim(), key).not.toBe('');
      expect(names(ru[key]), key).toEqual(names(en[key]));
    }
  });

  it('fills placeholders in the chosen language', () => {
    expect(texts('en')('user_account', { name: 'Main' })).toBe('Account: Main');
    expect(texts('ru')('user_account', { name: 'Main' })).toBe('Счёт: Main');
  });
});
