import { atom, type ReadableAtom, type WritableAtom } from 'nanostores';
import { toWalletError } from '../api/errors.ts';
import { errorText } from './errors.ts';
import { $t } from './i18n.ts';
import { runCountdown } from './primitives/countdown.ts';
import { $profile } from './user.ts';

/** SPEC §5, §9: the passcode is exactly 4 digits and the action fires 300 ms after the fourth. */
export const PASSCODE_LENGTH = 4;
export const PASSCODE_SUBMIT_DELAY_MS = 300;

export type PasscodeEntryState = {
  /** The digits typed so far (0 to 4). */
  digits: string;
  /** True from the fourth digit until the action settles: the keypad ignores presses. */
  busy: boolean;
  /** The last failure's text (the gateway's message for B2C_USM0030/0031/0032, APP_0001 ...), cleared by the next digit. */
  error: string | null;
  /** Seconds of a lockout still to wait (B2C_USM0030 with the gateway's Retry-After): the keypad is off until 0. */
  waitSeconds: number;
};

export type PasscodeEntry = {
  $state: ReadableAtom<PasscodeEntryState>;
  press: (digit: string) => void;
  erase: () => void;
  /** Replaces the action (a component passes its latest callback on every render). */
  setAction: (action: (pin: string) => Promise<void>) => void;
  /** Stops a pending submit; call when the prompt goes away. */
  dispose: () => void;
};

/**
 * Set when any passcode prompt met B2C_USM0032: every prompt then turns its keypad off and says once what to do
 * (reset through e-mail), since no code can be entered until then.
 */
export const $pincodeBlocked = atom(false);

const EMPTY: PasscodeEntryState = { digits: '', busy: false, error: null, waitSeconds: 0 };

/**
 * The logic of one passcode prompt: four digits fill the circles, the action runs 300 ms after the fourth; when it
 * rejects the circles empty and the error's text shows, when it resolves the circles empty for the next step.
 */
export function createPasscodeEntry(initialAction: (pin: string) => Promise<void>): PasscodeEntry {
  const $state = atom<PasscodeEntryState>(EMPTY);
  let action = initialAction;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let disposed = false;
  let stopWait = (): void => {};

  /** A lockout counts its wait down under the circles ("Try again in 30 s") with the keypad off, then clears. */
  const wait = (seconds: number) => {
    stopWait();
    stopWait = runCountdown(
      seconds,
      () => Date.now(),
      (left) => {
        if (!disposed) $state.set({ digits: '', busy: false, waitSeconds: left, error: left > 0 ? $t.get()('passcode_try_again', { seconds: left }) : null });
      },
    );
  };

  const submit = async (pin: string) => {
    timer = undefined;
    try {
      await action(pin);
      if (!disposed) $state.set(EMPTY);
    } catch (error) {
      const failure = toWalletError(error);
      if (failure.code === 'B2C_USM0032') $pincodeBlocked.set(true);
      if (disposed) return;
      // Blocked: the prompt's own notice says it (once), in place of the refusal's text.
      if (failure.code === 'B2C_USM0032') $state.set(EMPTY);
      else if (failure.code === 'B2C_USM0030' && failure.retryAfterSeconds) wait(failure.retryAfterSeconds);
      else $state.set({ ...EMPTY, error: passcodeErrorText(error) });
    }
  };

  return {
    $state,
    press(digit) {
      const state = $state.get();
      if (state.busy || state.waitSeconds > 0 || disposed || $pincodeBlocked.get() || !/^\d$/.test(digit) || state.digits.length >= PASSCODE_LENGTH) return;
      const digits = state.digits + digit;
      const complete = digits.length === PASSCODE_LENGTH;
      $state.set({ digits, busy: complete, error: null, waitSeconds: 0 });
      if (complete) timer = setTimeout(() => void submit(digits), PASSCODE_SUBMIT_DELAY_MS);
    },
    erase() {
      const state = $state.get();
      if (state.busy || state.waitSeconds > 0 || disposed || state.digits === '') return;
      $state.set({ ...state, digits: state.digits.slice(0, -1) });
    },
    setAction(next) {
      action = next;
    },
    dispose() {
      disposed = true;
      stopWait();
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

type Review = { busy: boolean; askingPasscode: boolean };

/**
 * The Confirm of a review that moves money out, and the way back from its prompt: with the passcode on, the prompt
 * shows in place of the review first (SPEC §6) and its code goes to `confirm`; without it, `confirm` runs at once.
 */
export function passcodeStep<T extends Review>($review: WritableAtom<T | null>, confirm: () => Promise<void>): { confirm: () => void; cancel: () => void } {
  return {
    confirm() {
      const review = $review.get();
      if (!review || review.busy) return;
      if ($profile.get().data?.pinCodeActive) $review.set({ ...review, askingPasscode: true });
      else void confirm().catch(() => {});
    },
    cancel() {
      const review = $review.get();
      if (review) $review.set({ ...review, askingPasscode: false });
    },
  };
}

/** A passcode refusal (B2C_USM0030/0031/0032): the prompt stays open and shows it, instead of a toast. */
export function isPasscodeRefusal(error: unknown): boolean {
  return /^B2C_USM003[012]$/.test(toWalletError(error).code);
}

/** The passcode refusals show the gateway's own text, which is in the user's language and carries the wait. */
export function passcodeErrorText(error: unknown): string {
  return errorText(error, { serverMessage: isPasscodeRefusal(error) ? 'first' : true });
}
