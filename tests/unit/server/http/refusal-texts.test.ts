import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../../src/server/domain/errors.ts';
import { REFUSAL_TEXTS } from '../../../../src/server/http/messages.ts';

/**
 * Issue 33 item 2: every code the gateway can refuse with has its Russian words. The codes are the domain's one list
 * (domain/errors.ts ERROR_CODES: DomainError is typed over it, so no other code can be thrown); those of our own
 * faults are answered as INTERNAL. A new code without a text fails this test.
 */
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('the words of every refusal', () => {
  const codes = Object.entries(ERROR_CODES).flatMap(([code, kind]) => (kind === 'fault' && code !== 'INTERNAL' ? [] : [code]));

  it('has a Russian text for every code of every flow', () => {
    const missing = codes.filter((code) => !REFUSAL_TEXTS.RUS[code]?.trim());
    expect(missing, 'codes without a Russian text in i18n/refusals.ru.json').toEqual([]);
  });

  it('has no text for a code that no longer exists, and the English words name the same facts as the Russian', () => {
    expect(Object.keys(REFUSAL_TEXTS.RUS).filter((code) => !codes.includes(code))).toEqual([]);
    for (const [code, text] of Object.entries(REFUSAL_TEXTS.ENG)) expect(placeholders(text), code).toEqual(placeholders(REFUSAL_TEXTS.RUS[code] ?? ''));
  });
});
