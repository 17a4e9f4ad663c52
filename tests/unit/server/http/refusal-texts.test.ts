import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STATUS_OF_CODE } from '../../../../src/server/http/errors.ts';
import { REFUSAL_TEXTS } from '../../../../src/server/http/messages.ts';

/**
 * Issue 33 item 2: every code the gateway can refuse with has its Russian words. The codes are not listed here: they
 * are read from where they live, the status map (http/errors.ts) and every `new <DomainError or a subclass>('CODE'`
 * (or `new ApiError(status, 'CODE'`) and `extends DomainError<'CODE' | …>` in src/server. A new code without a text
 * fails this test.
 */
function serverSource(): string {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (path.endsWith('.ts')) files.push(path);
    }
  };
  walk('src/server');
  return files.map((file) => readFileSync(file, 'utf8')).join('\n');
}

function thrownCodes(source: string): Set<string> {
  const classes = new Set(['DomainError', ...[...source.matchAll(/class (\w+) extends DomainError\b/g)].map((m) => m[1])]);
  const codes = new Set<string>();
  for (const m of source.matchAll(/new (\w+)\(\s*(?:\d+,\s*)?'([A-Z][A-Z0-9_]+)'/g)) if (m[1] && m[2] && classes.has(m[1])) codes.add(m[2]);
  for (const m of source.matchAll(/extends DomainError<([^>]+)>/g)) for (const c of (m[1] ?? '').matchAll(/'([A-Z][A-Z0-9_]+)'/g)) if (c[1]) codes.add(c[1]);
  for (const m of source.matchAll(/type \w*Code\w* =([^;]+);/g)) for (const c of (m[1] ?? '').matchAll(/'([A-Z][A-Z0-9_]+)'/g)) if (c[1]) codes.add(c[1]);
  return codes;
}

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('the words of every refusal', () => {
  const thrown = thrownCodes(serverSource());
  const codes = [...new Set([...Object.keys(STATUS_OF_CODE), ...thrown])].sort();

  it('finds the codes where they are thrown (the scan itself works)', () => {
    for (const code of ['SWAP_NOT_ENOUGH', 'WEAK_PASSWORD', 'B2C_USM0031', 'TOO_MANY_REQUESTS', 'WITHDRAWAL_WRONG_ADDRESS', 'C2F_ONLY_SBER']) expect(thrown, code).toContain(code);
    expect(codes.length).toBeGreaterThan(90);
  });

  it('has a Russian text for every code of every flow', () => {
    const missing = codes.filter((code) => !REFUSAL_TEXTS.RUS[code]?.trim());
    expect(missing, 'codes without a Russian text in i18n/refusals.ru.json').toEqual([]);
  });

  it('has no text for a code that no longer exists, and the English words name the same facts as the Russian', () => {
    expect(Object.keys(REFUSAL_TEXTS.RUS).filter((code) => !codes.includes(code))).toEqual([]);
    for (const [code, text] of Object.entries(REFUSAL_TEXTS.ENG)) expect(placeholders(text), code).toEqual(placeholders(REFUSAL_TEXTS.RUS[code] ?? ''));
  });
});
