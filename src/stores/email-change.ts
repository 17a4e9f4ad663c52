import { atom, computed } from 'nanostores';
import { openPage } from '@nanostores/router';
import { confirmEmailChange, resendEmailChange, startEmailChange } from '../api/protection.ts';
import { isEmail } from '../lib/email.ts';
import { realEmail } from '../lib/messenger-email.ts';
import { platform } from '../platform/platform.ts';
import { showErrorToast } from './errors.ts';
import { $t } from './i18n.ts';
import { $pinState } from './passcode.ts';
import { runCountdown } from './primitives/countdown.ts';
import { createFlow } from './primitives/flow.ts';
import { $router } from './router.ts';
import { showToast } from './toasts.ts';
import { $profile } from './user.ts';

/** SPEC §4, §5, §9: codes are 4 letters or digits, sent again at most every 59 s. */
export const VERIFICATION_CODE_LENGTH = 4;
export const RESEND_SECONDS = 59;

/** The account's e-mail if mail can reach it; one in the messenger's own domain counts as none (SPEC §3). */
export const $realEmail = computed($profile, (profile) => realEmail(profile.data?.email));

export type EmailChangeState = {
  /** The address typed on the add/edit screen. */
  newEmail: string;
  busy: boolean;
  /** The code typed on a verification screen. */
  code: string;
  /** Seconds until 'resend' is allowed again. */
  resendIn: number;
};

const INITIAL: EmailChangeState = { newEmail: '', busy: false, code: '', resendIn: 0 };
/** SPEC §4: the countdown as 00:ss. */
export function countdownText(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  return `${String(Math.floor(whole / 60)).padStart(2, '0')}:${String(whole % 60).padStart(2, '0')}`;
}

/** The e-mail change (SPEC §2, §4): the address typed, the code and the resend wait live for one visit of its screens. */
export const emailChangeFlow = createFlow(['email', 'emailAdd', 'emailEdit', 'emailVerifyOld', 'emailVerifyNew'], (scope) => {
  const $emailChange = atom<EmailChangeState>(INITIAL);
  /** Which address this visit's change sent a code to: a verification screen shows only the stage the change reached. */
  const $codeSentTo = atom<'old' | 'new' | null>(null);

  /** The address the account already has is not a new one: refused before the gateway is asked (it says EMAIL_SAME). */
  const $sameAsCurrent = computed([$emailChange, $realEmail], (state, current) => current !== null && state.newEmail.trim().toLowerCase() === current.toLowerCase());
  const $newEmailValid = computed([$emailChange, $sameAsCurrent], (state, same) => isEmail(state.newEmail) && !same);

  function patch(change: Partial<EmailChangeState>): void {
    $emailChange.set({ ...$emailChange.get(), ...change });
  }

  let stopTicker = (): void => {};

  /** Starts the 59 s wait before another code may be asked for; it follows the platform's clock. */
  function startResendCountdown(): void {
    stopTicker();
    stopTicker = runCountdown(RESEND_SECONDS, () => platform().now(), (left) => patch({ resendIn: left }));
  }

  function stopResendCountdown(): void {
    stopTicker();
  }

  function setNewEmail(value: string): void {
    patch({ newEmail: value });
  }

  /** The add/edit screen: asks the gateway to start; the first code goes to the old address if there is one. */
  async function submitNewEmail(): Promise<void> {
    const { newEmail, busy } = $emailChange.get();
    if (busy || !$newEmailValid.get()) return;
    patch({ busy: true });
    try {
      const { stage } = await startEmailChange(newEmail.trim(), $pinState.get().pinCode);
      patch({ busy: false, code: '' });
      $codeSentTo.set(stage === 'old' ? 'old' : 'new');
      openPage($router, stage === 'old' ? 'emailVerifyOld' : 'emailVerifyNew');
    } catch (error) {
      patch({ busy: false });
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    }
  }

  /** A verification screen's field: letters and digits only, upper-cased; the fourth character submits it. */
  function typeCode(value: string): void {
    const code = value.replace(/[^A-Za-z0-9]/g, '').toUpperCase().slice(0, VERIFICATION_CODE_LENGTH);
    if ($emailChange.get().busy) return;
    patch({ code });
    if (code.length === VERIFICATION_CODE_LENGTH) void submitCode(code);
  }

  async function submitCode(code: string): Promise<void> {
    patch({ busy: true });
    try {
      const result = await confirmEmailChange(code);
      patch({ busy: false, code: '' });
      if (result.stage === 'new') {
        $codeSentTo.set('new');
        openPage($router, 'emailVerifyNew');
        return;
      }
      const state = $profile.get();
      if (state.data && result.email) {
        const email = result.email;
        $profile.set({ ...state, data: { ...state.data, email, accounts: state.data.accounts.map((account) => ({ ...account, email })) } });
      }
      $emailChange.set(INITIAL);
      showToast($t.get()('email_set_toast'));
      openPage($router, 'walletProtection');
    } catch (error) {
      patch({ busy: false, code: '' });
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    }
  }

  async function resendCode(): Promise<void> {
    const state = $emailChange.get();
    if (state.busy || state.resendIn > 0) return;
    patch({ busy: true });
    try {
      await resendEmailChange();
      patch({ busy: false, code: '' });
      startResendCountdown();
    } catch (error) {
      patch({ busy: false });
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    }
  }

  const stageOf = (page: ReturnType<typeof $router.get>) => (page?.route === 'emailVerifyOld' ? 'old' : page?.route === 'emailVerifyNew' ? 'new' : null);
  // A verification screen starts the resend wait when it opens (SPEC §4); leaving the flow stops it.
  const startOnVerify = (page: ReturnType<typeof $router.get>) => {
    const stage = stageOf(page);
    if (stage && stage === $codeSentTo.get()) startResendCountdown();
  };
  startOnVerify($router.get());
  scope.follow($router, startOnVerify);
  scope.onLeave(stopResendCountdown);
  // Opened without a code sent to that address in this visit (by URL, a reload): back to the e-mail screen (issue 33 item 1).
  scope.guard([$codeSentTo], (page) => {
    const stage = stageOf(page);
    return stage && stage !== $codeSentTo.get() ? { route: 'email' } : undefined;
  });

  return { $emailChange, $newEmailValid, $sameAsCurrent, startResendCountdown, stopResendCountdown, setNewEmail, submitNewEmail, typeCode, resendCode };
});

export type EmailChangeVisit = ReturnType<typeof emailChangeFlow.open>;
