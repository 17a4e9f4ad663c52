import { describe, expect, it } from 'vitest';
import { createPasswordHasher, HasherBusyError, passwordProblem, PASSWORD_MESSAGES } from '../../../../src/server/domain/passwords.ts';
import { COMMON_PASSWORDS } from '../../../../src/server/domain/common-passwords.ts';

describe('password policy', () => {
  it('accepts 8 to 128 characters, counted as characters not bytes', () => {
    expect(passwordProblem('seven77')).toBe('TOO_SHORT');
    expect(passwordProblem('eight888x')).toBeUndefined();
    expect(passwordProblem('ж'.repeat(8))).toBeUndefined();
    expect(passwordProblem('😀'.repeat(7))).toBe('TOO_SHORT');
    expect(passwordProblem('x'.repeat(128) + 'y'.repeat(0))).toBeUndefined();
    expect(passwordProblem('x'.repeat(129))).toBe('TOO_LONG');
  });

  it('refuses the common passwords whatever their case, with a clear message', () => {
    expect(COMMON_PASSWORDS.size).toBeGreaterThan(300);
    for (const password of ['password123', 'Password123', 'QWERTYUIOP', '1q2w3e4r5t', 'iloveyou1']) expect(passwordProblem(password)).toBe('COMMON');
    expect(PASSWORD_MESSAGES.COMMON).toMatch(/common/);
  });

  it('refuses the e-mail itself or its name part', () => {
    expect(passwordProblem('alice.smith@example.com', 'Alice.Smith@example.com')).toBe('SAME_AS_EMAIL');
    expect(passwordProblem('alice.smith', 'alice.smith@example.com')).toBe('SAME_AS_EMAIL');
    expect(passwordProblem('alice.smith!2', 'alice.smith@example.com')).toBeUndefined();
  });
});

describe('password hasher', () => {
  it('hashes with argon2id at the configured cost and verifies', async () => {
    const hasher = createPasswordHasher({ lanes: 1 });
    const hash = await hasher.hash('correct horse battery');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await hasher.verify(hash, 'correct horse battery')).toBe(true);
    expect(await hasher.verify(hash, 'wrong horse battery')).toBe(false);
    expect(await hasher.verify('not a hash', 'x')).toBe(false);
  });

  it('runs no more checks at once than it has lanes, and refuses beyond its queue', async () => {
    const hasher = createPasswordHasher({ lanes: 2, maxWaiting: 3 });
    const hash = await hasher.hash('correct horse battery');
    let peak = 0;
    const jobs = Array.from({ length: 5 }, () => hasher.verify(hash, 'correct horse battery'));
    peak = Math.max(peak, hasher.stats().running);
    expect(hasher.stats()).toEqual({ running: 2, waiting: 3 });
    await expect(hasher.verify(hash, 'one too many')).rejects.toBeInstanceOf(HasherBusyError);
    expect(await Promise.all(jobs)).toEqual([true, true, true, true, true]);
    expect(peak).toBe(2);
    expect(hasher.stats()).toEqual({ running: 0, waiting: 0 });
  });
});
