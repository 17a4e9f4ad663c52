import { describe, expect, it } from 'vitest';
import { ACCOUNT_POLICY, ADDRESS_POLICY, PAIR_POLICY, afterFailure, isStale, retryAfterMs, throttleKeys, tripped, type ThrottleState } from '../../../../src/server/domain/throttle.ts';

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

  // Five tries before the first lock are now counted per e-mail and client address together (issue 14 item 7).
  it('gives an account five tries from one address before the first lock', () => {
    let state: ThrottleState | undefined;
    for (let i = 0; i < 4; i += 1) state = afterFailure(state, at(i), PAIR_POLICY);
    expect(retryAfterMs(state, at(4))).toBe(0);
    state = afterFailure(state, at(4), PAIR_POLICY);
    expect(retryAfterMs(state, at(4))).toBe(60_000);
  });

  it('keys each attempt by e-mail and address together, by e-mail alone and by address alone', () => {
    expect(throttleKeys('a@example.com', '198.51.100.7')).toEqual([
      { key: 'email:a@example.com|ip:198.51.100.7', policy: PAIR_POLICY },
      { key: 'email:a@example.com', policy: ACCOUNT_POLICY },
      { key: 'ip:198.51.100.7', policy: ADDRESS_POLICY },
    ]);
  });

  it('holds the per-account ceiling far above one person, then backs off to hours', () => {
    expect(ACCOUNT_POLICY.maxFailures).toBeGreaterThanOrEqual(10 * PAIR_POLICY.maxFailures);
    let state: ThrottleState | undefined;
    for (let i = 0; i < ACCOUNT_POLICY.maxFailures - 1; i += 1) state = afterFailure(state, at(i), ACCOUNT_POLICY);
    expect(retryAfterMs(state, at(100))).toBe(0);
    state = afterFailure(state, at(100), ACCOUNT_POLICY);
    expect(retryAfterMs(state, at(100))).toBe(15 * 60_000);
    // Each failure after a lock ran out doubles the next one, up to six hours.
    let now = 100 + 15 * 60_000;
    for (const expected of [30, 60, 120, 240, 360, 360]) {
      state = afterFailure(state, at(now), ACCOUNT_POLICY);
      expect(retryAfterMs(state, at(now))).toBe(expected * 60_000);
      now += expected * 60_000;
    }
  });

  it('tells a trip (open to locked) from a failure while already locked or still open', () => {
    const four = fail(2);
    const locking = afterFailure(four, at(0), policy);
    expect(tripped(four, locking, at(0))).toBe(true);
    expect(tripped(fail(1), fail(2) ?? locking, at(0))).toBe(false);
    expect(tripped(locking, afterFailure(locking, at(10), policy), at(10))).toBe(false);
    // The lock ran out: the next failure that locks again is a new trip.
    expect(tripped(locking, afterFailure(locking, at(2_000), policy), at(2_000))).toBe(true);
  });
});
