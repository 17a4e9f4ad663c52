import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WalletError } from '../../../src/api/errors.ts';
import { setPlatform } from '../../../src/platform/platform.ts';
import { testPlatform } from '../../../src/platform/test.ts';
import { mockRequest, refusal } from '../../support/request-mock.ts';

const gateway = mockRequest();
/** What the passcode calls sent: the `pincode` header (the code checked) and the body. */
const sent = (route: Parameters<typeof gateway.to>[0]) => gateway.to(route).map((call) => ({ pincode: call.headers.pincode, body: call.body }));

const { createPasscodeEntry, PASSCODE_SUBMIT_DELAY_MS, $pincodeBlocked } = await import('../../../src/stores/passcode-entry.ts');
const passcode = await import('../../../src/stores/passcode.ts');
// The protection flow is followed for the whole file, as the module's router listener was before.
passcode.protectionFlow.$current.listen(() => {});
const emailRules = await import('../../../src/stores/email-change.ts');
// One visit of the e-mail change for the whole file, as the module's stores were before.
const email = { ...emailRules, ...emailRules.emailChangeFlow.open() };
const { $profile } = await import('../../../src/stores/user.ts');
const { $router } = await import('../../../src/stores/router.ts');
const { $faceIdEnabled } = await import('../../../src/stores/settings.ts');
const { $activeToast, hideToast } = await import('../../../src/stores/toasts.ts');

const profile = (pinCodeActive: boolean, address: string | null = 'old@example.com') =>
  $profile.set({ data: { email: address, pinCodeActive, tgAuth: false, accounts: [{ id: 'acc-1', language: 'ENG', defaultFiatCurrency: 'USD', email: address }] }, loading: false, error: null });

const type = (entry: { press: (digit: string) => void }, pin: string) => [...pin].forEach((digit) => entry.press(digit));

describe('passcode entry', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    setPlatform(testPlatform());
  });
  afterEach(() => vi.useRealTimers());

  it('fires 300 ms after the fourth digit, not before, and ignores keys meanwhile', async () => {
    const action = vi.fn().mockResolvedValue(undefined);
    const entry = createPasscodeEntry(action);
    type(entry, '12');
    entry.erase();
    type(entry, '345');
    expect(entry.$state.get()).toMatchObject({ digits: '1345', busy: true });
    entry.press('9');
    await vi.advanceTimersByTimeAsync(PASSCODE_SUBMIT_DELAY_MS - 1);
    expect(action).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(action).toHaveBeenCalledWith('1345');
    expect(entry.$state.get()).toEqual({ digits: '', busy: false, error: null, waitSeconds: 0 });
  });

  it('a blocked passcode (B2C_USM0032) turns the keypad off: no digit is taken and no refusal text repeats', async () => {
    const action = vi.fn().mockRejectedValue(new WalletError('B2C_USM0032', 'The pin code is blocked. Reset it through your e-mail', { status: 423, fromServer: true }));
    const entry = createPasscodeEntry(action);
    try {
      type(entry, '1357');
      await vi.advanceTimersByTimeAsync(PASSCODE_SUBMIT_DELAY_MS);
      expect($pincodeBlocked.get()).toBe(true);
      // The prompt's own notice says it once; the refusal's text is not shown beside it.
      expect(entry.$state.get()).toEqual({ digits: '', busy: false, error: null, waitSeconds: 0 });
      type(entry, '2468');
      await vi.advanceTimersByTimeAsync(PASSCODE_SUBMIT_DELAY_MS);
      expect(entry.$state.get().digits).toBe('');
      expect(action).toHaveBeenCalledTimes(1);
    } finally {
      $pincodeBlocked.set(false);
    }
  });

  it('clears the circles and shows the gateway’s message when the action is refused', async () => {
    const entry = createPasscodeEntry(() => Promise.reject(new WalletError('B2C_USM0030', 'Too many wrong pin codes. Try again in 30 s', { status: 429, fromServer: true })));
    type(entry, '0000');
    await vi.advanceTimersByTimeAsync(PASSCODE_SUBMIT_DELAY_MS);
    expect(entry.$state.get()).toEqual({ digits: '', busy: false, error: 'Too many wrong pin codes. Try again in 30 s', waitSeconds: 0 });
    entry.press('1');
    expect(entry.$state.get().error).toBeNull();
  });

  it('after a lockout counts "Try again in 30 s" down with the keypad off, then takes digits again', async () => {
    const action = vi.fn().mockRejectedValueOnce(new WalletError('B2C_USM0030', 'Too many wrong pin codes. Try again in 30 s', { status: 429, fromServer: true, retryAfterSeconds: 30 }));
    const entry = createPasscodeEntry(action);
    type(entry, '0000');
    await vi.advanceTimersByTimeAsync(PASSCODE_SUBMIT_DELAY_MS);
    expect(entry.$state.get()).toMatchObject({ digits: '', waitSeconds: 30, error: 'Try again in 30 s' });
    entry.press('1');
    expect(entry.$state.get().digits).toBe('');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(entry.$state.get()).toMatchObject({ waitSeconds: 20, error: 'Try again in 20 s' });
    await vi.advanceTimersByTimeAsync(20_000);
    expect(entry.$state.get()).toEqual({ digits: '', busy: false, error: null, waitSeconds: 0 });
    entry.press('1');
    expect(entry.$state.get().digits).toBe('1');
    entry.dispose();
  });

  it('stops a pending submit when disposed', async () => {
    const action = vi.fn().mockResolvedValue(undefined);
    const entry = createPasscodeEntry(action);
    type(entry, '1234');
    entry.dispose();
    await vi.advanceTimersByTimeAsync(1000);
    expect(action).not.toHaveBeenCalled();
  });
});

describe('passcode flows', () => {
  beforeEach(() => {
    setPlatform(testPlatform());
    vi.resetAllMocks();
    gateway.reset();
    hideToast();
    $router.open('/settings/passcode/enable');
  });

  it('setup: a mismatch gives APP_0001 and starts again; a match saves, validates the session and opens success', async () => {
    profile(false);
    gateway.on('POST /user/pinCode/enable', { pinCodeActive: true });
    const setup = passcode.createPasscodeSetup();
    await setup.submit('1234');
    expect(setup.$step.get()).toBe('confirm');
    await expect(setup.submit('4321')).rejects.toMatchObject({ code: 'APP_0001' });
    expect(setup.$step.get()).toBe('enter');
    expect(sent('POST /user/pinCode/enable')).toEqual([]);
    await setup.submit('2580');
    await setup.submit('2580');
    expect(sent('POST /user/pinCode/enable')).toEqual([{ pincode: undefined, body: { pinCode: '2580' } }]);
    expect($profile.get().data?.pinCodeActive).toBe(true);
    expect(passcode.$pinState.get()).toEqual({ valid: true, pinCode: '2580' });
    expect($router.get()?.route).toBe('passcodeSuccess');
  });

  it('change (SPEC §4: enter new, then confirm): the code entered on the protection screen is not asked again', async () => {
    profile(true);
    passcode.$pinState.set({ valid: true, pinCode: '2580' });
    gateway.on('POST /user/pinCode/change', { pinCodeActive: true });
    const change = passcode.createPasscodeChange();
    expect(change.$step.get()).toBe('new');
    await change.submit('1357');
    await change.submit('1357');
    expect(sent('POST /user/pinCode/validate')).toEqual([]);
    expect(sent('POST /user/pinCode/change')).toEqual([{ pincode: '2580', body: { pinCode: '1357' } }]);
    expect(passcode.$pinState.get()).toEqual({ valid: true, pinCode: '1357' });
    expect($router.get()?.route).toBe('passcodeSuccess');
  });

  it('change without the passcode entered in this visit: the current code is checked first, then new and confirmation', async () => {
    profile(true);
    passcode.resetPinState();
    gateway.once('POST /user/pinCode/validate', refusal(403, 'B2C_USM0031', 'Incorrect pin code')).on('POST /user/pinCode/validate', { valid: true });
    gateway.on('POST /user/pinCode/change', { pinCodeActive: true });
    const change = passcode.createPasscodeChange();
    await expect(change.submit('0000')).rejects.toMatchObject({ code: 'B2C_USM0031' });
    expect(change.$step.get()).toBe('current');
    await change.submit('2580');
    await change.submit('1357');
    await expect(change.submit('7531')).rejects.toMatchObject({ code: 'APP_0001' });
    expect(change.$step.get()).toBe('new');
    await change.submit('1357');
    await change.submit('1357');
    expect(sent('POST /user/pinCode/validate').map((call) => call.pincode)).toEqual(['0000', '2580']);
    expect(sent('POST /user/pinCode/change')).toEqual([{ pincode: '2580', body: { pinCode: '1357' } }]);
  });

  it('disable turns biometrics off, forgets the pin state and says so', async () => {
    profile(true);
    $faceIdEnabled.set(true);
    gateway.on('POST /user/pinCode/disable', { pinCodeActive: false });
    await passcode.disablePasscode('2580');
    expect(sent('POST /user/pinCode/disable')).toEqual([{ pincode: '2580', body: undefined }]);
    expect($profile.get().data?.pinCodeActive).toBe(false);
    expect($faceIdEnabled.get()).toBe(false);
    expect($activeToast.get()?.text).toBe('Passcode turned off');
    expect($router.get()?.route).toBe('walletProtection');
  });

  it('the pin state resets when the path leaves the passcode routes, not inside them', async () => {
    profile(true);
    gateway.on('POST /user/pinCode/validate', { valid: true });
    $router.open('/settings/wallet-protection');
    expect(passcode.$needsPasscode.get()).toBe(true);
    await passcode.unlockProtection('2580');
    expect(passcode.$needsPasscode.get()).toBe(false);
    $router.open('/settings/wallet-protection/email/edit');
    expect(passcode.$pinState.get()).toEqual({ valid: true, pinCode: '2580' });
    $router.open('/home');
    expect(passcode.$pinState.get()).toEqual({ valid: false, pinCode: '' });
    expect(passcode.$needsPasscode.get()).toBe(true);
  });

  it('biometric toggle: on when granted, else settings if asked before, else asks', async () => {
    profile(true);
    const biometry = { supported: () => true, granted: vi.fn(() => false), requested: vi.fn(() => false), requestAccess: vi.fn(async () => true), openSettings: vi.fn() };
    // SPEC §4: one mobile platform (iOS) inside the mini app; not Android, not Telegram Desktop, not the web.
    setPlatform(testPlatform({ biometry, kind: 'tg', client: 'android' }));
    expect(passcode.biometryAvailable()).toBe(false);
    setPlatform(testPlatform({ biometry, kind: 'tg', client: 'tdesktop' }));
    expect(passcode.biometryAvailable()).toBe(false);
    setPlatform(testPlatform({ biometry, kind: 'web', client: 'ios' }));
    expect(passcode.biometryAvailable()).toBe(false);
    setPlatform(testPlatform({ biometry, kind: 'tg', client: 'ios' }));
    expect(passcode.biometryAvailable()).toBe(true);
    $faceIdEnabled.set(false);
    await passcode.toggleBiometry(true);
    expect(biometry.requestAccess).toHaveBeenCalled();
    expect($faceIdEnabled.get()).toBe(true);
    await passcode.toggleBiometry(false);
    biometry.requested.mockReturnValue(true);
    await passcode.toggleBiometry(true);
    expect(biometry.openSettings).toHaveBeenCalled();
    expect($faceIdEnabled.get()).toBe(false);
    biometry.granted.mockReturnValue(true);
    await passcode.toggleBiometry(true);
    expect($faceIdEnabled.get()).toBe(true);
    profile(false);
    expect(passcode.biometryAvailable()).toBe(false);
    setPlatform(testPlatform());
    profile(true);
    expect(passcode.biometryAvailable()).toBe(false);
  });
});

describe('e-mail change', () => {
  let now = 0;
  beforeEach(() => {
    vi.useFakeTimers();
    now = 1_000_000;
    setPlatform(testPlatform({ now: () => now }));
    vi.resetAllMocks();
    gateway.reset();
    hideToast();
    email.setNewEmail('');
  });
  afterEach(() => {
    email.stopResendCountdown();
    vi.useRealTimers();
  });

  it('messenger-domain addresses count as none', () => {
    profile(false, 'tg12345@telegram.org');
    expect(email.$realEmail.get()).toBeNull();
    profile(false, 'me@example.com');
    expect(email.$realEmail.get()).toBe('me@example.com');
  });

  it('sends the validated pin code, verifies the old then the new address with codes that submit themselves', async () => {
    profile(true, 'old@example.com');
    $router.open('/settings/wallet-protection/email/edit');
    passcode.$pinState.set({ valid: true, pinCode: '2580' });
    email.setNewEmail('new@example');
    expect(email.$newEmailValid.get()).toBe(false);
    email.setNewEmail('new@example.com');
    gateway.on('POST /user/email-change', { stage: 'old' });
    await email.submitNewEmail();
    expect(sent('POST /user/email-change')).toEqual([{ pincode: '2580', body: { newEmail: 'new@example.com' } }]);
    expect($router.get()?.route).toBe('emailVerifyOld');

    gateway.once('POST /user/email-change/confirm', { stage: 'new' }).once('POST /user/email-change/confirm', { stage: 'done', email: 'new@example.com' });
    email.typeCode('a-b');
    expect(email.$emailChange.get().code).toBe('AB');
    expect(sent('POST /user/email-change/confirm')).toEqual([]);
    email.typeCode('ab7k9');
    await vi.waitFor(() => expect($router.get()?.route).toBe('emailVerifyNew'));
    email.typeCode('ZX12');
    await vi.waitFor(() => expect($router.get()?.route).toBe('walletProtection'));
    expect(sent('POST /user/email-change/confirm').map((call) => call.body)).toEqual([{ confirmationCode: 'AB7K' }, { confirmationCode: 'ZX12' }]);
    expect($profile.get().data?.email).toBe('new@example.com');
    expect($activeToast.get()?.text).toBe('E-mail set');
  });

  it('resend is disabled for 59 s, shown as 00:ss', async () => {
    gateway.on('POST /user/email-change/resend-confirmation', { stage: 'new' });
    email.startResendCountdown();
    expect(email.countdownText(email.$emailChange.get().resendIn)).toBe('00:59');
    now += 50_500;
    await vi.advanceTimersByTimeAsync(500);
    expect(email.countdownText(email.$emailChange.get().resendIn)).toBe('00:09');
    await email.resendCode();
    expect(sent('POST /user/email-change/resend-confirmation')).toEqual([]);
    now += 9_000;
    await vi.advanceTimersByTimeAsync(500);
    expect(email.$emailChange.get().resendIn).toBe(0);
    await email.resendCode();
    expect(sent('POST /user/email-change/resend-confirmation')).toHaveLength(1);
    expect(email.$emailChange.get().resendIn).toBe(59);
  });
  it('step screens opened without their step (by address, a reload) go back to their flow\'s start', () => {
    // A fresh visit of the e-mail change: no code was sent in it.
    emailRules.emailChangeFlow.close();
    emailRules.emailChangeFlow.open();
    for (const stage of ['new', 'old']) {
      $router.open(`/settings/wallet-protection/email/verification/${stage}`);
      expect($router.get()?.route).toBe('email');
    }
    $router.open('/settings/passcode');
    $router.open('/settings/passcode/success');
    expect($router.get()?.route).toBe('passcode');
  });
});
