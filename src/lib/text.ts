import en from '../../i18n/en.json' with { type: 'json' };
import type { Locale } from './preferences.ts';

export type Messages = typeof en;
export type MessageKey = keyof Messages;
export const english: Messages = en;

/** Fills `{name}` placeholders; unknown names stay as written so a missing value is visible, not silent. */
export function format(template: string, params: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/** Looks a key up in the given messages, falling back to English for a key a translation lacks. */
export function translate(messages: Partial<Record<string, string>>, key: MessageKey, params?: Record<string, string | number>): string {
  return format(messages[key] ?? en[key], params);
}

export async function loadMessages(locale: Locale): Promise<Partial<Messages>> {
  if (locale === 'en') return en;
  return (await import('../../i18n/ru.json', { with: { type: 'json' } })).default;
}
