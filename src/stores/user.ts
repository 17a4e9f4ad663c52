import { atom, computed } from 'nanostores';
import { openPage } from '@nanostores/router';
import { FIAT_CURRENCIES, getProfile, setAccountCurrency, setAccountLanguage, type Account, type FiatCurrency, type Profile } from '../api/user.ts';
import { toWalletError, type WalletError } from '../api/errors.ts';
import { LANGUAGES, type Language } from '../lib/preferences.ts';
import { FIATS } from '../lib/currencies.ts';
import { $authState } from './auth.ts';
import { showErrorToast } from './errors.ts';
import { $router } from './router.ts';
import { $activeAccount, $selectedCurrency, $selectedLanguage, setLanguage } from './settings.ts';

/** SPEC §4 'Loading lists': pending sets loading and clears the error; rejected sets it; fulfilled stores the data. */
export type ProfileState = { data: Profile | null; loading: boolean; error: WalletError | null };

const EMPTY: ProfileState = { data: null, loading: false, error: null };

export const $profile = atom<ProfileState>(EMPTY);

/** The account the wallet works with: the device's active one if the user has it, else the first. */
export const $account = computed([$profile, $activeAccount], (profile, active): Account | null => {
  const accounts = profile.data?.accounts ?? [];
  return accounts.find((account) => account.id === active) ?? accounts[0] ?? null;
});

export { FIAT_CURRENCIES, LANGUAGES, type FiatCurrency };

/** SPEC §9: the symbols shown beside fiat amounts, from the one fiat table (CAD as C$, so it is not read as USD). */
export const FIAT_SYMBOLS: Record<string, string> = Object.fromEntries(FIATS.map((fiat) => [fiat.currency, fiat.symbol]));

let loading: Promise<void> | undefined;

/** GET /user; the device then follows the account's currency and language, which are saved to it. */
export function loadProfile(): Promise<void> {
  loading ??= (async () => {
    $profile.set({ ...$profile.get(), loading: true, error: null });
    try {
      const data = await getProfile();
      $profile.set({ data, loading: false, error: null });
      adopt(data);
    } catch (error) {
      $profile.set({ ...$profile.get(), loading: false, error: toWalletError(error) });
    } finally {
      loading = undefined;
    }
  })();
  return loading;
}

function adopt(profile: Profile): void {
  const account = profile.accounts.find((item) => item.id === $activeAccount.get()) ?? profile.accounts[0];
  if (!account) return;
  if (account.id !== $activeAccount.get()) $activeAccount.set(account.id);
  if ((FIAT_CURRENCIES as readonly string[]).includes(account.defaultFiatCurrency)) $selectedCurrency.set(account.defaultFiatCurrency);
  if ((LANGUAGES as readonly string[]).includes(account.language) && account.language !== $selectedLanguage.get()) setLanguage(account.language);
}

function patchAccount(id: string, change: Partial<Account>): void {
  const { data } = $profile.get();
  if (!data) return;
  $profile.set({ ...$profile.get(), data: { ...data, accounts: data.accounts.map((item) => (item.id === id ? { ...item, ...change } : item)) } });
}

/** /settings/select-currency: saved to the account and the device; a refusal puts the old one back. */
export async function chooseCurrency(currency: FiatCurrency): Promise<void> {
  const before = $selectedCurrency.get();
  const account = $account.get();
  $selectedCurrency.set(currency);
  try {
    await setAccountCurrency(currency);
    if (account) patchAccount(account.id, { defaultFiatCurrency: currency });
    openPage($router, 'settings');
  } catch (error) {
    $selectedCurrency.set(before);
    showErrorToast(error, { fallback: 'common_something_went_wrong' });
  }
}

/** /settings/select-language: the device switches at once; the account is told so mails follow. */
export async function chooseLanguage(language: Language): Promise<void> {
  const before = $selectedLanguage.get();
  const account = $account.get();
  setLanguage(language);
  try {
    await setAccountLanguage(language);
    if (account) patchAccount(account.id, { language });
    openPage($router, 'settings');
  } catch (error) {
    setLanguage(before);
    showErrorToast(error, { fallback: 'common_something_went_wrong' });
  }
}

/** The profile follows the session: loaded when someone signs in, forgotten when they leave. Started by the island; returns the stop. */
export function followSession(): () => void {
  // A session started before the island (the mini app signs in first) is followed from where it is.
  if ($authState.get() === 'authenticated' && !$profile.get().data) void loadProfile();
  return $authState.listen((state) => {
    if (state === 'authenticated') void loadProfile();
    if (state === 'anonymous') {
      $profile.set(EMPTY);
      $activeAccount.set(null);
    }
  });
}
