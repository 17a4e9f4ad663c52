import { describe, expect, it } from 'vitest';
import { hash as rawHash, verify as rawVerify } from '@node-rs/argon2';
import { ARGON2_OPTIONS, createPasswordHasher, HasherBusyError, passwordProblem, PASSWORD_MESSAGES } from '../../../../src/server/domain/passwords.ts';
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

  it('keeps new-password hashing to its own lanes and queue: a sign-up burst does not hold up a sign-in (issue 14 item 12)', async () => {
    const hasher = createPasswordHasher({ lanes: 2, maxNewWaiting: 64 });
    const stored = await rawHash('correct horse battery', ARGON2_OPTIONS);
    // The raw cost of one check on this machine, now: the bound below is relative to it, not to a fixed time.
    let raw = Infinity;
    for (let i = 0; i < 3; i += 1) {
      const started = performance.now();
      await rawVerify(stored, 'correct horse battery');
      raw = Math.min(raw, performance.now() - started);
    }
    const burst = Array.from({ length: 40 }, (_, i) => hasher.hash(`sign-up password ${i}`));
    // Sign-ups take at most half the lanes: one lane is left for sign-ins.
    expect(hasher.stats()).toEqual({ running: 1, waiting: 39 });
    const started = performance.now();
    expect(await hasher.verify(stored, 'correct horse battery')).toBe(true);
    const login = performance.now() - started;
    // Behind the whole burst it would take some 20 raw checks; beside one running hash it takes about one.
    expect(login).toBeLessThan(raw * 6 + 100);
    // Past its own short queue a sign-up is refused at once, and every queued one still completes.
    const small = createPasswordHasher({ lanes: 2, maxNewWaiting: 1 });
    const held = [small.hash('first of two'), small.hash('second of two')];
    await expect(small.hash('third of two')).rejects.toBeInstanceOf(HasherBusyError);
    expect(await Promise.all([...burst, ...held])).toHaveLength(42);
    expect(hasher.stats()).toEqual({ running: 0, waiting: 0 });
  }, 60_000);

  it('gives a waiting sign-in the next free lane before a waiting sign-up', async () => {
    const hasher = createPasswordHasher({ lanes: 1 });
    const stored = await hasher.hash('correct horse battery');
    const order: string[] = [];
    const first = hasher.hash('running first').then(() => order.push('hash 1'));
    const second = hasher.hash('waiting sign-up').then(() => order.push('hash 2'));
    const check = hasher.verify(stored, 'correct horse battery').then(() => order.push('check'));
    await Promise.all([first, second, check]);
    expect(order).toEqual(['hash 1', 'check', 'hash 2']);
  }, 30_000);
});
