import type { AstroGlobal } from 'astro';
import en from '../../i18n/en.json' with { type: 'json' };
import ru from '../../i18n/ru.json' with { type: 'json' };
import { LANGUAGE_COOKIE, THEME_COOKIE, languageOf, localeOf, themeOf, type Locale, type Theme } from '../lib/preferences.ts';
import { translate, type MessageKey } from '../lib/text.ts';
import { SIGNED_IN_COOKIE } from '../lib/routes.ts';

export type PageLocals = { supportEmail?: string; publicUrl?: string };

export type PageContext = {
  locale: Locale;
  theme: Theme | undefined;
  t: (key: MessageKey, params?: Record<string, string | number>) => string;
  locals: PageLocals;
};

/** What every server-rendered shell needs: the device's language and theme (from cookies) and its texts. */
export function pageContext(astro: AstroGlobal): PageContext {
  const locale = localeOf(languageOf(astro.cookies.get(LANGUAGE_COOKIE)?.value));
  const messages: Partial<Record<string, string>> = locale === 'ru' ? ru : en;
  return {
    locale,
    theme: themeOf(astro.cookies.get(THEME_COOKIE)?.value),
    t: (key, params) => translate(messages, key, params),
    locals: astro.locals as PageLocals,
  };
}

/** A page whose address carries a secret (a mailed code, an authorization code): never cached, never sent on as a referrer. */
export function keepAddressSecret(astro: AstroGlobal): void {
  astro.response.headers.set('Cache-Control', 'no-store');
  astro.response.headers.set('Referrer-Policy', 'no-referrer');
}

/**
 * SPEC §2: a signed-in user who opens the entry (/auth, /auth/login) goes home. The wallet's hint cookie says so
 * (lib/preferences.ts); a page that carries an outcome to show (?error=) stays, so its message is not lost.
 */
export function homeIfSignedIn(astro: AstroGlobal): Response | undefined {
  if (astro.cookies.get(SIGNED_IN_COOKIE)?.value !== '1' || astro.url.searchParams.has('error')) return undefined;
  astro.response.headers.set('Cache-Control', 'no-store');
  return astro.redirect('/home', 302);
}
