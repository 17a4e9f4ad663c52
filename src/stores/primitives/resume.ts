import { persistentAtom } from '@nanostores/persistent';
import type { ReadableAtom } from 'nanostores';
import type { FlowScope } from './flow.ts';

/** How long an order in flight is worth restoring: the longest wait of any flow (a purchase at the provider). */
export const RESUME_MAX_AGE_MS = 30 * 60_000;

type Stored<T> = { account: string; savedAt: number; data: T };

export type Resume<T> = {
  /** Keeps what a reload needs to bring the visit back (undefined: nothing in flight, forget it). */
  save: (account: string | null, data: T | undefined) => void;
  /**
   * What was kept, at once (so the flow's guards see it before they run), unless older than `maxAgeMs`. The
   * profile may not be known yet after a reload: once `$account` names the account, a visit kept for another
   * account is forgotten and `forget` undoes the restore. Returns the stop of that check.
   */
  restore: ($account: ReadableAtom<string | null>, restore: (data: T) => void, forget: () => void) => () => void;
  clear: () => void;
};

/**
 * An order in flight that survives a reload (issue 19 item 14): a flow keeps the little it needs (never a card
 * number or a passcode) on the device, and its next visit after a reload, or after the browser came back from
 * the card provider, starts from it. Kept per account and for `maxAgeMs` at most.
 */
export function createResume<T>(name: string, now: () => number = () => Date.now(), maxAgeMs = RESUME_MAX_AGE_MS): Resume<T> {
  const $stored = persistentAtom<Stored<T> | null>(`wallet:resume:${name}`, null, {
    encode: JSON.stringify,
    decode: (text) => {
      try {
        return JSON.parse(text) as Stored<T> | null;
      } catch {
        return null;
      }
    },
    listen: false,
  });
  const clear = () => $stored.set(null);
  return {
    save(account, data) {
      if (!account || data === undefined) clear();
      else $stored.set({ account, savedAt: now(), data });
    },
    restore($account, restore, forget) {
      const stored = $stored.get();
      if (!stored || now() - stored.savedAt > maxAgeMs || ($account.get() !== null && $account.get() !== stored.account)) {
        clear();
        return () => {};
      }
      restore(stored.data);
      let stop = (): void => {};
      const check = (account: string | null) => {
        if (account === null) return;
        stop();
        if (account !== stored.account) {
          clear();
          forget();
        }
      };
      stop = $account.subscribe(check);
      return stop;
    },
    clear,
  };
}

/**
 * The one wiring of a resume into a flow's visit (swap, buy, sell, send): opened on one of the routes a reload may
 * land on, the visit starts from what was kept (`restore`; `forget` undoes it for another account), else what was
 * kept is dropped; what `snapshot` says is kept whenever one of `follow` changes, and dropped when the flow is left.
 */
export function keepVisit<T>(
  scope: FlowScope,
  resume: Resume<T>,
  options: { resumes: boolean; $account: ReadableAtom<string | null>; restore: (data: T) => void; forget: () => void; follow: readonly ReadableAtom<unknown>[]; snapshot: () => T | undefined },
): void {
  if (options.resumes) scope.onLeave(resume.restore(options.$account, options.restore, options.forget));
  else resume.clear();
  const save = () => resume.save(options.$account.get(), options.snapshot());
  for (const store of options.follow) scope.follow(store, save);
  scope.onLeave(() => resume.clear());
}
