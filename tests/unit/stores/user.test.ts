import { beforeEach, describe, expect, it, vi } from 'vitest';
import { setPlatform } from '../../../src/platform/platform.ts';
import { testPlatform } from '../../../src/platform/test.ts';
import { mockRequest, offline, refusal, reply } from '../../support/request-mock.ts';

const gateway = mockRequest();

const { $authState } = await import('../../../src/stores/auth.ts');
const { $account, $profile, chooseCurrency, chooseLanguage, followSession, loadProfile } = await import('../../../src/stores/user.ts');
// The profile follows the session as the island starts it.
followSession();
const { $activeAccount, $selectedCurrency, $selectedLanguage } = await import('../../../src/stores/settings.ts');
const { $activeToast, hideToast } = await import('../../../src/stores/toasts.ts');
const { $router } = await import('../../../src/stores/router.ts');

const PROFILE = {
  email: 'a@b.io',
  pinCodeActive: false,
  tgAuth: false,
  accounts: [{ id: 'acc-1', language: 'ENG', defaultFiatCurrency: 'EUR', email: 'a@b.io' }],
};

describe('user store', () => {
  let platform: ReturnType<typeof testPlatform>;
  beforeEach(() => {
    platform = testPlatform();
    setPlatform(platform);
    gateway.reset();
    hideToast();
    $authState.set('loading');
    $profile.set({ data: null, loading: false, error: null });
    $activeAccount.set(null);
    $selectedCurrency.set('USD');
    $selectedLanguage.set('ENG');
  });

  it('loads the profile when someone signs in; the device follows the account', async () => {
    gateway.on('GET /user', PROFILE);
    $authState.set('authenticated');
    await vi.waitFor(() => expect($profile.get().data).toEqual(PROFILE));
    expect($activeAccount.get()).toBe('acc-1');
    expect($account.get()?.id).toBe('acc-1');
    expect($selectedCurrency.get()).toBe('EUR');
  });

  it('a failed load keeps the error and stops loading', async () => {
    gateway.on('GET /user', offline());
    await loadProfile();
    expect($profile.get()).toMatchObject({ data: null, loading: false, error: { code: 'FETCH_ERROR' } });
  });

  it('signing out forgets the profile and the active account', async () => {
    gateway.on('GET /user', PROFILE);
    await loadProfile();
    $authState.set('anonymous');
    expect($profile.get().data).toBeNull();
    expect($activeAccount.get()).toBeNull();
  });

  it('a currency choice is saved to the account and the device, then settings open', async () => {
    gateway.on('GET /user', PROFILE);
    gateway.on('POST /user/default-fiat-currency/update/KZT', reply(204));
    await loadProfile();
    await chooseCurrency('KZT');
    expect(gateway.to('POST /user/default-fiat-currency/update/KZT')).toHaveLength(1);
    expect($selectedCurrency.get()).toBe('KZT');
    expect($account.get()?.defaultFiatCurrency).toBe('KZT');
    expect($router.get()?.route).toBe('settings');
  });

  it('a refused currency choice puts the old one back and says so', async () => {
    gateway.on('GET /user', PROFILE);
    gateway.on('POST /user/default-fiat-currency/update/CAD', refusal(400, 'VALIDATION', 'bad'));
    await loadProfile();
    await chooseCurrency('CAD');
    expect($selectedCurrency.get()).toBe('EUR');
    expect($activeToast.get()).toMatchObject({ kind: 'error', text: 'Something went wrong...' });
  });

  it('a language choice switches the device at once, mirrors the cookie and is saved to the account', async () => {
    gateway.on('GET /user', PROFILE);
    gateway.on('POST /user/language/RUS', reply(204));
    await loadProfile();
    await chooseLanguage('RUS');
    expect(gateway.to('POST /user/language/RUS')).toHaveLength(1);
    expect($selectedLanguage.get()).toBe('RUS');
    expect(platform.cookies.get('lang')).toBe('RUS');
    expect($account.get()?.language).toBe('RUS');
  });
});
