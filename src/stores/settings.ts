import { persistentAtom } from '@nanostores/persistent';
import { computed } from 'nanostores';
import { DEFAULT_LANGUAGE, LANGUAGE_COOKIE, LANGUAGES, THEME_COOKIE, languageOf, localeOf, preferenceCookie, type Language } from '../lib/preferences.ts';
import { platform } from '../platform/platform.ts';

/** Device settings of SPEC §3, kept on the device. */
const json = { encode: JSON.stringify, decode: JSON.parse };

export const $activeAccount = persistentAtom<string | null>('wallet:activeAccount', null, json);
export const $protectWalletDismissed = persistentAtom<boolean>('wallet:isProtectWalletShown', false, json);
export const $selectedCurrency = persistentAtom<string>('wallet:selectedCurrency', 'USD');
export const $selectedLanguage = persistentAtom<Language>('wallet:selectedLanguage', DEFAULT_LANGUAGE, {
  encode: (value) => value,
  decode: (value) => ((LANGUAGES as readonly string[]).includes(value) ? (value as Language) : DEFAULT_LANGUAGE),
});
export const $disabledAssets = persistentAtom<string[]>('wallet:disabledAssets', [], json);
/** null: follow the system preference. */
export const $darkTheme = persistentAtom<boolean | null>('wallet:darkTheme', null, json);
export const $faceIdEnabled = persistentAtom<boolean>('wallet:faceIdEnabled', false, json);
export const $hideLinkBanner = persistentAtom<boolean>('wallet:hideTgBanner', false, json);

export const $locale = computed($selectedLanguage, localeOf);

/** The theme in force: the stored choice, else the system's. */
export function isDark(): boolean {
  return $darkTheme.get() ?? platform().prefersDark();
}

export function setLanguage(language: Language): void {
  $selectedLanguage.set(language);
  platform().setCookie(preferenceCookie(LANGUAGE_COOKIE, language));
}

export function setDarkTheme(dark: boolean): void {
  $darkTheme.set(dark);
  platform().setCookie(preferenceCookie(THEME_COOKIE, dark ? 'dark' : 'light'));
  platform().applyTheme(dark);
}

/**
 * Brings the device settings and the shells' cookies into agreement at start: a choice made on a shell
 * before the wallet ever ran (no stored value yet) wins, otherwise the stored value is mirrored to the cookie.
 */
export function syncPreferences(): void {
  const p = platform();
  const cookieLanguage = p.readCookie(LANGUAGE_COOKIE);
  if (cookieLanguage && !hasStored('wallet:selectedLanguage')) $selectedLanguage.set(languageOf(cookieLanguage));
  else p.setCookie(preferenceCookie(LANGUAGE_COOKIE, $selectedLanguage.get()));
  const cookieTheme = p.readCookie(THEME_COOKIE);
  if ((cookieTheme === 'dark' || cookieTheme === 'light') && $darkTheme.get() === null) $darkTheme.set(cookieTheme === 'dark');
  else if ($darkTheme.get() !== null) p.setCookie(preferenceCookie(THEME_COOKIE, $darkTheme.get() ? 'dark' : 'light'));
  p.applyTheme(isDark());
}

function hasStored(key: string): boolean {
  return typeof localStorage !== 'undefined' && localStorage.getItem(key) !== null;
}
