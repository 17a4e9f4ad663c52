/**
 * The words of the gateway's refusals in the user's language (issue 33 item 2). English is the domain's own message
 * (it names what went wrong precisely), except where `i18n/refusals.en.json` words a code for users (the passcode
 * prompt shows the gateway's text as is, SPEC §8); Russian is `i18n/refusals.ru.json`, one text per code, its
 * `{placeholders}` filled from the error's details. A text whose details are missing falls back to the English
 * message rather than show a placeholder. Which language: the account's (signed in), else the device's language
 * cookie, else Accept-Language (see `requestLanguage`).
 */
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import en from '../../../i18n/refusals.en.json' with { type: 'json' };
import ru from '../../../i18n/refusals.ru.json' with { type: 'json' };
import { LANGUAGE_COOKIE, LANGUAGES, type Language } from '../../lib/preferences.ts';
import { format } from '../../lib/text.ts';

export type { Language };

/** The words per language and code; a code a language lacks answers with the domain's message. */
export const REFUSAL_TEXTS: Readonly<Record<Language, Readonly<Record<string, string>>>> = { ENG: en, RUS: ru };

/** What a refusal carries for its words: its code, its English message and the facts it names. */
export type Refusal = { code: string; message: string; details?: Readonly<Record<string, string | number | boolean>> };

function duration(seconds: number, language: Language): string {
  const whole = Math.max(1, Math.ceil(seconds));
  if (whole < 60) return language === 'RUS' ? `${whole} с` : `${whole} s`;
  const minutes = Math.ceil(whole / 60);
  return language === 'RUS' ? `${minutes} мин` : `${minutes} min`;
}

/** "1250.50" as "$1,250.50" (English) or "1 250,50 $" (Russian). */
function dollars(amount: string, language: Language): string {
  const [whole = '0', cents = '00'] = amount.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, language === 'RUS' ? '\u00a0' : ',');
  return language === 'RUS' ? `${grouped},${cents}\u00a0$` : `$${grouped}.${cents}`;
}

/** The `message` a refusal is answered with in `language`. */
export function userMessage(error: Refusal, language: Language): string {
  const template = REFUSAL_TEXTS[language][error.code];
  if (!template) return error.message;
  const details = error.details ?? {};
  const params: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(details)) params[name] = typeof value === 'boolean' ? String(value) : value;
  // A lockout's wait as the prompt says it ("30 s", "2 min").
  if (typeof details['waitSeconds'] === 'number') params['wait'] = duration(details['waitSeconds'], language);
  // A sum in dollars (the withdrawal limits': `limitUsd`, `leftUsd`) as the language writes it.
  for (const [name, value] of Object.entries(details)) if (name.endsWith('Usd') && typeof value === 'string') params[name] = dollars(value, language);
  const text = format(template, params);
  return /\{\w+\}/.test(text) ? error.message : text;
}

const isLanguage = (value: unknown): value is Language => typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);

/** The first of Accept-Language's languages (by weight) that the wallet speaks; undefined when it names neither. */
export function acceptedLanguage(header: string | undefined): Language | undefined {
  if (!header) return undefined;
  const ranked = header
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { primary: tag.trim().toLowerCase().split('-')[0], weight: q === undefined ? 1 : Number(q), index };
    })
    .filter((entry) => entry.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  for (const { primary } of ranked) {
    if (primary === 'ru') return 'RUS';
    if (primary === 'en') return 'ENG';
  }
  return undefined;
}

/** The signed-in user's language, read from the account (undefined when unknown or unreadable). */
export type AccountLanguage = (userId: string) => Promise<Language | undefined>;

/**
 * The language a request is answered in: one the refusal names itself (the passcode's, read with its check), the
 * signed-in account's, the device's language cookie (chosen on the sign-in pages), Accept-Language; else English.
 */
export async function requestLanguage(c: Context, error: Refusal, accountLanguage?: AccountLanguage): Promise<Language> {
  const named = error.details?.['language'];
  if (isLanguage(named)) return named;
  const principal = c.get('principal') as { userId?: string } | undefined;
  if (principal?.userId && accountLanguage) {
    const language = await accountLanguage(principal.userId).catch(() => undefined);
    if (language) return language;
  }
  const cookie = getCookie(c, LANGUAGE_COOKIE);
  if (isLanguage(cookie)) return cookie;
  return acceptedLanguage(c.req.header('accept-language')) ?? 'ENG';
}
