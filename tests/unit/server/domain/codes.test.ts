import { describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { codeExpiry, newCode, storedCode } from '../../../../src/server/domain/codes.ts';
import { secretsKeyFrom } from '../../../../src/server/adapters/keys/secrets-key.ts';

const key = secretsKeyFrom(randomBytes(32), 'env');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('mailed codes', () => {
  it('are long, URL-safe and different every time', () => {
    const codes = new Set(Array.from({ length: 100 }, newCode));
    expect(codes.size).toBe(100);
    for (const code of codes) expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('are stored as a keyed hash: no table reader can check a guess against it', () => {
    const stored = storedCode(key, 'verification', 'AB3C');
    expect(stored).not.toContain('AB3C');
    expect(stored).not.toContain(sha256('AB3C'));
    expect(storedCode(key, 'verification', 'AB3C')).toBe(stored);
    expect(storedCode(secretsKeyFrom(randomBytes(32), 'env'), 'verification', 'AB3C')).not.toBe(stored);
    expect(storedCode(key, 'link', 'AB3C')).not.toBe(stored);
    // Over the old sha256, so a row stored before keyed hashing is migrated without knowing its code.
    expect(key.keyedHash(sha256('AB3C'), 'code:verification')).toBe(stored);
  });

  it('expire after 24 hours (confirmation) and 1 hour (reset)', () => {
    const now = new Date('2025-01-01T00:00:00Z');
    expect(codeExpiry('confirm_email', now).toISOString()).toBe('2025-01-02T00:00:00.000Z');
    expect(codeExpiry('reset_password', now).toISOString()).toBe('2025-01-01T01:00:00.000Z');
  });
});
