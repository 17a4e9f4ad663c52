/**
 * The failed-login counter of one key as kept in login_throttle: an e-mail together with a client address (the
 * owner's own mistakes, or one guesser), an e-mail from anywhere (the ceiling against guessing spread over many
 * addresses) or a client address (one guesser across many accounts).
 */
export type ThrottleState = { failures: number; windowStartedAt: Date; lockedUntil: Date | null };

export type ThrottlePolicy = {
  /** Failures inside one window before the key locks. */
  maxFailures: number;
  windowMs: number;
  /** First lock; each further failure doubles it, up to maxLockMs. */
  lockMs: number;
  maxLockMs: number;
};

/**
 * Per e-mail and client address together: 5 tries, then a minute, doubling to 15 minutes; a success clears it.
 * Someone who only knows the e-mail locks out their own address, never the owner signing in from another.
 */
export const PAIR_POLICY: ThrottlePolicy = { maxFailures: 5, windowMs: 15 * 60_000, lockMs: 60_000, maxLockMs: 15 * 60_000 };
/**
 * Per e-mail from any address: a ceiling far above one person's mistakes (50 a day), reached only by guessing
 * spread over many addresses; then 15 minutes for everyone, doubling with each further failure to 6 hours, and the owner is
 * told by mail (a password reset clears it).
 */
export const ACCOUNT_POLICY: ThrottlePolicy = { maxFailures: 50, windowMs: 24 * 60 * 60_000, lockMs: 15 * 60_000, maxLockMs: 6 * 60 * 60_000 };
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

/** Whether a failure moved the key from open to locked: one trip, told to the owner once, not per attempt. */
export function tripped(before: ThrottleState | undefined, after: ThrottleState, now: Date): boolean {
  return retryAfterMs(before, now) === 0 && retryAfterMs(after, now) > 0;
}

/** The login_throttle keys of one attempt, each with its policy; `address` is the client's limit bucket. */
export function throttleKeys(email: string, address: string): Array<{ key: string; policy: ThrottlePolicy }> {
  return [
    { key: `email:${email}|ip:${address}`, policy: PAIR_POLICY },
    { key: `email:${email}`, policy: ACCOUNT_POLICY },
    { key: `ip:${address}`, policy: ADDRESS_POLICY },
  ];
}
