import { beforeEach, describe, expect, it } from 'vitest';
import { setPlatform } from '../../../src/platform/platform.ts';
import { testPlatform } from '../../../src/platform/test.ts';
import { $darkTheme, $locale, $selectedLanguage, isDark, setDarkTheme, setLanguage, syncPreferences } from '../../../src/stores/settings.ts';

describe('device settings', () => {
  let platform: ReturnType<typeof testPlatform>;
  beforeEach(() => {
    platform = testPlatform();
    setPlatform(platform);
    $selectedLanguage.set('ENG');
    $darkTheme.set(null);
  });

  it('defaults to English and the system theme', () => {
    expect($locale.get()).toBe('en');
    expect(isDark()).toBe(false);
    setPlatform(testPlatform({ prefersDark: () => true }));
    expect(isDark()).toBe(true);
  });

  it('a language choice is kept and mirrored to the cookie the shells read', () => {
    setLanguage('RUS');
    expect($locale.get()).toBe('ru');
    expect(platform.cookies.get('lang')).toBe('RUS');
  });

  it('a theme choice is kept, applied and mirrored to the cookie', () => {
    setDarkTheme(true);
    expect($darkTheme.get()).toBe(true);
    expect(platform.dark).toBe(true);
    expect(platform.cookies.get('theme')).toBe('dark');
  });

  it('at start, a theme chosen on a shell before the wallet ran is adopted', () => {
    platform.cookies.set('theme', 'dark');
    syncPreferences();
    expect($darkTheme.get()).toBe(true);
    expect(platform.dark).toBe(true);
  });

  it('at start, a stored language is mirrored to the cookie', () => {
    $selectedLanguage.set('RUS');
    syncPreferences();
    expect(platform.cookies.get('lang')).toBe('RUS');
  });
});
