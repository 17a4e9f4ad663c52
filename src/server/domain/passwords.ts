import { availableParallelism } from 'node:os';
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { COMMON_PASSWORDS } from './common-passwords.ts';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

/** OWASP's argon2id baseline: 19 MiB, 2 passes, one lane. */
// Algorithm is an ambient const enum (not importable as a value here); 2 is its Argon2id.
export const ARGON2_OPTIONS = { algorithm: 2 as Algorithm, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export type PasswordProblem = 'TOO_SHORT' | 'TOO_LONG' | 'COMMON' | 'SAME_AS_EMAIL';

/** Why a new password is refused, or undefined when it is acceptable; lengths count characters, not bytes. */
export function passwordProblem(password: string, email?: string): PasswordProblem | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN) return 'TOO_SHORT';
  if (length > PASSWORD_MAX) return 'TOO_LONG';
  const lowered = password.toLowerCase();
  if (COMMON_PASSWORDS.has(lowered)) return 'COMMON';
  if (email) {
    const address = email.toLowerCase();
    const local = address.split('@')[0] ?? '';
    if (lowered === address || (local.length >= PASSWORD_MIN && lowered === local)) return 'SAME_AS_EMAIL';
  }
  return undefined;
}

export const PASSWORD_MESSAGES: Record<PasswordProblem, string> = {
  TOO_SHORT: `The password must have at least ${PASSWORD_MIN} characters`,
  TOO_LONG: `The password must have at most ${PASSWORD_MAX} characters`,
  COMMON: 'This password is one of the most common ones and is easy to guess; choose another',
  SAME_AS_EMAIL: 'The password must not be your e-mail address',
};

/** Raised when more password checks wait than the server can run soon; the caller answers "busy, retry". */
export class HasherBusyError extends Error {}

export type PasswordHasher = {
  hash: (password: string) => Promise<string>;
  /** False for a wrong password or an unreadable hash; never throws for a bad hash. */
  verify: (passwordHash: string, password: string) => Promise<boolean>;
  /** Spends the same work as a real check, so an unknown e-mail takes as long as a wrong password. */
  verifyDummy: (password: string) => Promise<void>;
  stats: () => { running: number; waiting: number };
  /** How many checks run at once. */
  lanes: number;
};

/**
 * argon2 on a bounded number of lanes with a bounded FIFO queue: a flood of checks waits its turn or is
 * refused at once instead of stacking up hundreds of 19 MiB jobs, so everyone else's sign-in stays fast.
 */
export function createPasswordHasher(options: { lanes?: number; maxWaiting?: number } = {}): PasswordHasher {
  const lanes = options.lanes ?? Math.max(1, availableParallelism());
  const maxWaiting = options.maxWaiting ?? 256;
  let running = 0;
  const waiting: Array<() => void> = [];
  let dummyHash: Promise<string> | undefined;

  const run = async <T>(job: () => Promise<T>): Promise<T> => {
    if (running >= lanes) {
      if (waiting.length >= maxWaiting) throw new HasherBusyError('too many password checks are waiting');
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else {
      running += 1;
    }
    try {
      return await job();
    } finally {
      // Hand the lane straight to the next waiter, so the count stays exact and the order is first come, first served.
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  };

  return {
    hash: (password) => run(() => hash(password, ARGON2_OPTIONS)),
    verify: (passwordHash, password) => run(() => verify(passwordHash, password).catch(() => false)),
    verifyDummy: async (password) => {
      dummyHash ??= hash('not a real password, only spends time', ARGON2_OPTIONS);
      const stored = await dummyHash;
      await run(() => verify(stored, password).catch(() => false));
    },
    stats: () => ({ running, waiting: waiting.length }),
    lanes,
  };
}
