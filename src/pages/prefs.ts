import type { APIRoute } from 'astro';
import { LANGUAGES, LANGUAGE_COOKIE, THEME_COOKIE, preferenceCookie, themeOf, type Language } from '../lib/preferences.ts';

/** Sets the language or theme cookie for the server-rendered shells and goes back, with no script needed. */
export const GET: APIRoute = ({ url }) => {
  const headers = new Headers();
  const lang = url.searchParams.get('lang');
  if (lang && (LANGUAGES as readonly string[]).includes(lang)) headers.append('Set-Cookie', preferenceCookie(LANGUAGE_COOKIE, lang as Language));
  const theme = themeOf(url.searchParams.get('theme') ?? undefined);
  if (theme) headers.append('Set-Cookie', preferenceCookie(THEME_COOKIE, theme));
  const back = url.searchParams.get('back') ?? '/auth';
  // Only paths of this site, never another origin.
  headers.set('Location', /^\/(?!\/)[\w\-/]*$/.test(back) ? back : '/auth');
  return new Response(null, { status: 303, headers });
};
