import { atom, computed } from 'nanostores';
import { openPage } from '@nanostores/router';
import { changePincode, confirmPincodeReset, disablePincode, enablePincode, requestPincodeReset, validatePincode } from '../api/protection.ts';
import { WalletError } from '../api/errors.ts';
import { english } from '../lib/text.ts';
import { platform } from '../platform/platform.ts';
import { showErrorToast } from './errors.ts';
import { $t } from './i18n.ts';
import { $pincodeBlocked } from './passcode-entry.ts';
import { runCountdown } from './primitives/countdown.ts';
import { createFlow } from './primitives/flow.ts';
import { $router, type RouteName } from './router.ts';
import { $faceIdEnabled } from './settings.ts';
import { showToast } from './toasts.ts';
import { $profile } from './user.ts';

/**
 * SPEC §3 device settings 'current pin code': whether the passcode was validated in this visit to the protection
 * screens, and the code itself (sent as the `pincode` header of the e-mail change). Kept in memory only.
 */
export type PinState = { valid: boolean; pinCode: string };
const INVALID: PinState = { valid: false, pinCode: '' };
export const $pinState = atom<PinState>(INVALID);

/** SPEC §9: the success screen redirects after 5 s. */
export const SUCCESS_REDIRECT_SECONDS = 5;

/** The routes the pin state belongs to: leaving them forgets it (SPEC §4 Protection screen). */
export const PASSCODE_ROUTES: ReadonlySet<RouteName> = new Set<RouteName>([
  'walletProtection',
  'email',
  'emailAdd',
  'emailEdit',
  'emailVerifyOld',
  'emailVerifyNew',
  'passcode',
  'passcodeDisable',
  'passcodeEnable',
  'passcodeChange',
  'passcodeSuccess',
]);


export const $pinCodeActive = computed($profile, (profile) => profile.data?.pinCodeActive ?? false);

/** The protection screens ask for the passcode first when one is set and it was not entered in this visit. */
export const $needsPasscode = computed([$pinCodeActive, $pinState], (active, pin) => active && !pin.valid);

export function resetPinState(): void {
  if ($pinState.get() !== INVALID) $pinState.set(INVALID);
}

/** A passcode was just saved (set or changed): only then does /settings/passcode/success show (issue 33 item 1). */
const $passcodeSaved = atom(false);

function showPasscodeSaved(): void {
  $passcodeSaved.set(true);
  openPage($router, 'passcodeSuccess');
}

/**
 * The protection screens as one flow: the passcode entered during a visit is forgotten when the visit ends. The
 * success screen opened without a passcode saved (by URL, by reload, by going back to it) returns to the passcode's start.
 */
export const protectionFlow = createFlow([...PASSCODE_ROUTES], (scope) => {
  scope.onLeave(resetPinState);
  scope.onLeave(() => $passcodeSaved.set(false));
  scope.follow($router, (page) => {
    if (page?.route !== 'passcodeSuccess') $passcodeSaved.set(false);
  });
  scope.guard([$passcodeSaved], (page) => (page.route === 'passcodeSuccess' && !$passcodeSaved.get() ? { route: 'passcode' } : undefined));
  return {};
});

function setPinCodeActive(active: boolean): void {
  const state = $profile.get();
  if (state.data) $profile.set({ ...state, data: { ...state.data, pinCodeActive: active } });
}

function mismatch(): WalletError {
  return new WalletError('APP_0001', english.error_APP_0001);
}

/** The protection screen's gate: the gateway checks the code (wrong ones count towards the lockout). */
export async function unlockProtection(pin: string): Promise<void> {
  await validatePincode(pin);
  $pinState.set({ valid: true, pinCode: pin });
}

export type SetupStep = 'enter' | 'confirm';
export type ChangeStep = 'current' | 'new' | 'confirm';

/** /settings/passcode/enable: enter, confirm; a mismatch shows APP_0001 and starts again; a match saves it. */
export function createPasscodeSetup() {
  const $step = atom<SetupStep>('enter');
  let first = '';
  return {
    $step,
    async submit(pin: string): Promise<void> {
      if ($step.get() === 'enter') {
        first = pin;
        $step.set('confirm');
        return;
      }
      if (pin !== first) {
        first = '';
        $step.set('enter');
        throw mismatch();
      }
      try {
        await enablePincode(pin);
      } catch (error) {
        first = '';
        $step.set('enter');
        throw error;
      }
      setPinCodeActive(true);
      $pinState.set({ valid: true, pinCode: pin });
      showPasscodeSaved();
    },
  };
}

/**
 * /settings/passcode/change (SPEC §4: enter new, then confirm): the current code only when it was not entered on the
 * protection screen in this visit (checked by the gateway), then the new one and its confirmation.
 */
export function createPasscodeChange() {
  const entered = $pinState.get();
  const $step = atom<ChangeStep>(entered.valid && entered.pinCode !== '' ? 'new' : 'current');
  let current = entered.valid ? entered.pinCode : '';
  let next = '';
  return {
    $step,
    async submit(pin: string): Promise<void> {
      const step = $step.get();
      if (step === 'current') {
        await validatePincode(pin);
        current = pin;
        $step.set('new');
        return;
      }
      if (step === 'new') {
        next = pin;
        $step.set('confirm');
        return;
      }
      if (pin !== next) {
        next = '';
        $step.set('new');
        throw mismatch();
      }
      await changePincode(current, pin);
      $pinState.set({ valid: true, pinCode: pin });
      showPasscodeSaved();
    },
  };
}

/** /settings/passcode/disable: needs the current code; biometric unlock goes with it. */
export async function disablePasscode(pin: string): Promise<void> {
  await disablePincode(pin);
  setPinCodeActive(false);
  $faceIdEnabled.set(false);
  resetPinState();
  showToast($t.get()('passcode_disabled_toast'));
  openPage($router, 'walletProtection');
}

/** /settings/passcode/success: the seconds left before it moves on to the protection screen. */
export function createSuccessCountdown() {
  const $left = atom(SUCCESS_REDIRECT_SECONDS);
  let stop = (): void => {};
  return {
    $left,
    start() {
      stop();
      stop = runCountdown(SUCCESS_REDIRECT_SECONDS, () => platform().now(), (left) => $left.set(left), () => openPage($router, 'walletProtection'));
    },
    stop: () => stop(),
  };
}

/** SPEC §4: the one mobile platform the biometric toggle is offered on (inside the mini app). */
export const BIOMETRY_CLIENT = 'ios';

/** SPEC §4 Biometric toggle: only inside the mini app on iOS where biometrics are available, and only with a passcode. */
export function biometryAvailable(): boolean {
  const here = platform();
  return here.kind === 'tg' && here.client === BIOMETRY_CLIENT && Boolean(here.biometry?.supported()) && $pinCodeActive.get();
}

/** On when access is granted; otherwise the device settings if access was asked for before, else ask for it. */
export async function toggleBiometry(on: boolean): Promise<void> {
  const biometry = platform().biometry;
  if (!on || !biometry) {
    $faceIdEnabled.set(false);
    return;
  }
  if (biometry.granted()) {
    $faceIdEnabled.set(true);
    return;
  }
  if (biometry.requested()) {
    biometry.openSettings();
    return;
  }
  $faceIdEnabled.set(await biometry.requestAccess());
}

/** The reset of a blocked passcode (B2C_USM0032) through a code mailed to the account's address. */
export type PincodeResetState = { sent: boolean; code: string; busy: boolean };
export const $pincodeReset = atom<PincodeResetState>({ sent: false, code: '', busy: false });

export async function sendPincodeReset(): Promise<void> {
  if ($pincodeReset.get().busy) return;
  $pincodeReset.set({ ...$pincodeReset.get(), busy: true });
  try {
    await requestPincodeReset();
    $pincodeReset.set({ sent: true, code: '', busy: false });
  } catch (error) {
    $pincodeReset.set({ ...$pincodeReset.get(), busy: false });
    showErrorToast(error, { fallback: 'common_something_went_wrong' });
  }
}

/** Letters and digits, upper-cased; the fourth submits the code, and a right one turns the passcode off. */
export async function typePincodeResetCode(value: string): Promise<void> {
  const code = value.replace(/[^A-Za-z0-9]/g, '').toUpperCase().slice(0, 4);
  if ($pincodeReset.get().busy) return;
  $pincodeReset.set({ ...$pincodeReset.get(), code });
  if (code.length < 4) return;
  $pincodeReset.set({ ...$pincodeReset.get(), busy: true });
  try {
    await confirmPincodeReset(code);
    $pincodeReset.set({ sent: false, code: '', busy: false });
    $pincodeBlocked.set(false);
    setPinCodeActive(false);
    $faceIdEnabled.set(false);
    resetPinState();
    showToast($t.get()('passcode_reset_toast'));
  } catch (error) {
    $pincodeReset.set({ ...$pincodeReset.get(), code: '', busy: false });
    showErrorToast(error, { fallback: 'common_something_went_wrong' });
  }
}
