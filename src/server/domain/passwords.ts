import { availableParallelism } from 'node:os';
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { COMMON_PASSWORDS } from './common-passwords.ts';
import { DomainError } from './errors.ts';

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
/** Past the hashing budget: the caller comes back in a moment (503 BUSY). */
export class HasherBusyError extends DomainError<'BUSY'> {
  constructor() {
    super('BUSY', 'The server is busy; try again in a moment');
  }
}

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
 * argon2 on a bounded number of lanes with bounded FIFO queues: a flood of checks waits its turn or is refused at
 * once instead of stacking up hundreds of 19 MiB jobs, so everyone else's sign-in stays fast. Hashing a new
 * password (sign-up, reset) has a budget of its own: at most `newPasswordLanes` of the lanes (half, at least one)
 * and its own short queue, and a waiting sign-in check always goes first, so a storm of sign-ups never holds a
 * sign-in up by more than the one hash already running on its lane.
 */
export function createPasswordHasher(options: { lanes?: number; maxWaiting?: number; newPasswordLanes?: number; maxNewWaiting?: number } = {}): PasswordHasher {
  const lanes = options.lanes ?? Math.max(1, availableParallelism());
  const newLanes = Math.min(lanes, options.newPasswordLanes ?? Math.max(1, Math.floor(lanes / 2)));
  const queues = { check: [] as Array<() => void>, new: [] as Array<() => void> };
  const maxWaiting = { check: options.maxWaiting ?? 256, new: options.maxNewWaiting ?? 32 };
  let running = 0;
  let runningNew = 0;
  let dummyHash: Promise<string> | undefined;

  /** Hands free lanes to the waiting jobs: checks first, new passwords only within their budget. */
  const dispatch = () => {
    while (running < lanes) {
      const check = queues.check.shift();
      if (check) {
        running += 1;
        check();
        continue;
      }
      if (runningNew >= newLanes) return;
      const next = queues.new.shift();
      if (!next) return;
      running += 1;
      runningNew += 1;
      next();
    }
  };

  const run = async <T>(kind: 'check' | 'new', job: () => Promise<T>): Promise<T> => {
    const free = running < lanes && (kind === 'check' ? queues.check.length === 0 : runningNew < newLanes && queues.new.length === 0 && queues.check.length === 0);
    if (free) {
      running += 1;
      if (kind === 'new') runningNew += 1;
    } else {
      if (queues[kind].length >= maxWaiting[kind]) throw new HasherBusyError();
      // dispatch() counts the lane in before it lets the job go, so the counts stay exact.
      await new Promise<void>((resolve) => queues[kind].push(resolve));
    }
    try {
      return await job();
    } finally {
      running -= 1;
      if (kind === 'new') runningNew -= 1;
      dispatch();
    }
  };

  return {
    hash: (password) => run('new', () => hash(password, ARGON2_OPTIONS)),
    verify: (passwordHash, password) => run('check', () => verify(passwordHash, password).catch(() => false)),
    verifyDummy: async (password) => {
      dummyHash ??= hash('not a real password, only spends time', ARGON2_OPTIONS);
      const stored = await dummyHash;
      await run('check', () => verify(stored, password).catch(() => false));
    },
    stats: () => ({ running, waiting: queues.check.length + queues.new.length }),
    lanes,
  };
}
