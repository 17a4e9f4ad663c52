/** Device preferences that the server-rendered shells read from cookies and the wallet keeps on the device. */
export const LANGUAGES = ['ENG', 'RUS'] as const;
export type Language = (typeof LANGUAGES)[number];
export type Locale = 'en' | 'ru';
export const DEFAULT_LANGUAGE: Language = 'ENG';

export const LANGUAGE_COOKIE = 'lang';
export const THEME_COOKIE = 'theme';
export type Theme = 'dark' | 'light';

export function localeOf(language: Language): Locale {
  return language === 'RUS' ? 'ru' : 'en';
}

export function languageOf(locale: string | undefined): Language {
  return locale === 'ru' || locale === 'RUS' ? 'RUS' : 'ENG';
}

export function themeOf(value: string | undefined): Theme | undefined {
  return value === 'dark' || value === 'light' ? value : undefined;
}

/** Cookie text for a preference kept for a year; readable by the server for the first paint. */
export function preferenceCookie(name: string, value: string): string {
  return `${name}=${encodeURIComponent(value)}; Path=/; Max-Age=31536000; SameSite=Lax`;
}
