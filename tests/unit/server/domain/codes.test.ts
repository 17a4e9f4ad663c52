import { describe, expect, it } from 'vitest';
import { codeExpiry, hashCode, newCode } from '../../../../src/server/domain/codes.ts';

describe('mailed codes', () => {
  it('are long, URL-safe and different every time', () => {
    const codes = new Set(Array.from({ length: 100 }, newCode));
    expect(codes.size).toBe(100);
    for (const code of codes) expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('are stored as their sha256 only', () => {
    expect(hashCode('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashCode('abc')).not.toContain('abc');
  });

  it('expire after 24 hours (confirmation) and 1 hour (reset)', () => {
    const now = new Date('2025-01-01T00:00:00Z');
    expect(codeExpiry('confirm_email', now).toISOString()).toBe('2025-01-02T00:00:00.000Z');
    expect(codeExpiry('reset_password', now).toISOString()).toBe('2025-01-01T01:00:00.000Z');
  });
});
