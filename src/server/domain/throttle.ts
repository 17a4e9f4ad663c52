/** The failed-login counter of one key (an e-mail or a client address) as kept in login_throttle. */
export type ThrottleState = { failures: number; windowStartedAt: Date; lockedUntil: Date | null };

export type ThrottlePolicy = {
  /** Failures inside one window before the key locks. */
  maxFailures: number;
  windowMs: number;
  /** First lock; each further failure doubles it, up to maxLockMs. */
  lockMs: number;
  maxLockMs: number;
};

/** Per e-mail: 5 tries, then a minute, doubling to 15 minutes; a success clears it. */
export const ACCOUNT_POLICY: ThrottlePolicy = { maxFailures: 5, windowMs: 15 * 60_000, lockMs: 60_000, maxLockMs: 15 * 60_000 };
/** Per client address: generous, since many people may share one address. */
export const ADDRESS_POLICY: ThrottlePolicy = { maxFailures: 50, windowMs: 15 * 60_000, lockMs: 5 * 60_000, maxLockMs: 60 * 60_000 };

/** Milliseconds until the key may try again; 0 when it may try now. */
export function retryAfterMs(state: ThrottleState | undefined, now: Date): number {
  if (!state?.lockedUntil) return 0;
  return Math.max(0, state.lockedUntil.getTime() - now.getTime());
}

/** The state after one more failure: a fresh window once the old one has passed, a longer lock each time past the limit. */
export function afterFailure(state: ThrottleState | undefined, now: Date, policy: ThrottlePolicy): ThrottleState {
  const fresh = !state || now.getTime() - state.windowStartedAt.getTime() >= policy.windowMs;
  const failures = fresh ? 1 : state.failures + 1;
  const windowStartedAt = fresh ? now : state.windowStartedAt;
  if (failures < policy.maxFailures) return { failures, windowStartedAt, lockedUntil: fresh ? null : state.lockedUntil };
  const over = failures - policy.maxFailures;
  const lock = Math.min(policy.maxLockMs, policy.lockMs * 2 ** Math.min(over, 30));
  return { failures, windowStartedAt, lockedUntil: new Date(now.getTime() + lock) };
}

/** Rows whose window and lock are both over carry no information and may be deleted. */
export function isStale(state: ThrottleState, now: Date, policy: ThrottlePolicy): boolean {
  return now.getTime() - state.windowStartedAt.getTime() >= policy.windowMs && retryAfterMs(state, now) === 0;
}
