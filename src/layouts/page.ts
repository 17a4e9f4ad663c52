import type { AstroGlobal } from 'astro';
import en from '../../i18n/en.json' with { type: 'json' };
import ru from '../../i18n/ru.json' with { type: 'json' };
import { LANGUAGE_COOKIE, THEME_COOKIE, languageOf, localeOf, themeOf, type Locale, type Theme } from '../lib/preferences.ts';
import { translate, type MessageKey } from '../lib/text.ts';
import { PAGES, SIGNED_IN_COOKIE } from '../lib/routes.ts';

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
  return redirectNoStore(astro, '/home');
}

/**
 * SPEC §2: an unauthenticated user is sent to the sign-in area. Without the wallet's hint nobody has signed in on
 * this device, so a wallet path answers with that redirect itself rather than loading the island to find out (a
 * signed-out /home loaded the island's JS only to leave). With a stale hint the island still finds out and clears it.
 */
export function signInIfSignedOut(astro: AstroGlobal): Response | undefined {
  if (astro.cookies.get(SIGNED_IN_COOKIE)?.value === '1') return undefined;
  // In a frame (the mini app inside Telegram Web) the hint is a third-party cookie the browser may withhold, and a
  // reload there must resume the messenger sign-in: the island decides.
  if (astro.request.headers.get('sec-fetch-dest') === 'iframe') return undefined;
  return redirectNoStore(astro, PAGES.signIn);
}

/** Both redirects depend on the device's cookie: no cache may keep them. */
function redirectNoStore(astro: AstroGlobal, to: string): Response {
  astro.response.headers.set('Cache-Control', 'no-store');
  return astro.redirect(to, 302);
}
