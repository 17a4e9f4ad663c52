/** The console's texts, English and Russian (i18n/operator.*.json): its own files, so the wallet's bundle carries none. */
import en from '../../i18n/operator.en.json' with { type: 'json' };
import ru from '../../i18n/operator.ru.json' with { type: 'json' };

export type TextKey = keyof typeof en;
export type Translate = (key: TextKey, params?: Record<string, string | number>) => string;

export function texts(locale: 'en' | 'ru'): Translate {
  const messages: Record<string, string> = locale === 'ru' ? ru : en;
  return (key, params = {}) => (messages[key] ?? en[key]).replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}
