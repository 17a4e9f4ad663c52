import { describe, expect, it } from 'vitest';
import { ACCOUNT_POLICY, afterFailure, isStale, retryAfterMs, type ThrottleState } from '../../../../src/server/domain/throttle.ts';

const policy = { maxFailures: 3, windowMs: 60_000, lockMs: 1_000, maxLockMs: 5_000 };
const at = (ms: number) => new Date(1_700_000_000_000 + ms);

function fail(times: number, start = 0, step = 0): ThrottleState | undefined {
  let state: ThrottleState | undefined;
  for (let i = 0; i < times; i += 1) state = afterFailure(state, at(start + i * step), policy);
  return state;
}

describe('login throttle', () => {
  it('lets the first failures through without a lock', () => {
    const state = fail(2);
    expect(state).toMatchObject({ failures: 2, lockedUntil: null });
    expect(retryAfterMs(state, at(0))).toBe(0);
  });

  it('locks at the limit and doubles the lock with each further failure, up to the cap', () => {
    expect(retryAfterMs(fail(3), at(0))).toBe(1_000);
    expect(retryAfterMs(fail(4), at(0))).toBe(2_000);
    expect(retryAfterMs(fail(5), at(0))).toBe(4_000);
    expect(retryAfterMs(fail(6), at(0))).toBe(5_000);
    expect(retryAfterMs(fail(60), at(0))).toBe(5_000);
  });

  it('counts the lock down and frees the key when it is over', () => {
    const state = fail(3);
    expect(retryAfterMs(state, at(400))).toBe(600);
    expect(retryAfterMs(state, at(1_000))).toBe(0);
  });

  it('starts a new window once the old one has passed', () => {
    const state = afterFailure(fail(3), at(60_000), policy);
    expect(state).toEqual({ failures: 1, windowStartedAt: at(60_000), lockedUntil: null });
  });

  it('marks rows stale only when both window and lock are over', () => {
    const state = fail(3);
    if (!state) throw new Error('no state');
    expect(isStale(state, at(30_000), policy)).toBe(false);
    expect(isStale(state, at(60_000), policy)).toBe(true);
  });

  it('gives an account five tries before the first lock', () => {
    let state: ThrottleState | undefined;
    for (let i = 0; i < 4; i += 1) state = afterFailure(state, at(i), ACCOUNT_POLICY);
    expect(retryAfterMs(state, at(4))).toBe(0);
    state = afterFailure(state, at(4), ACCOUNT_POLICY);
    expect(retryAfterMs(state, at(4))).toBe(60_000);
  });
});
