import { createI18n } from '@nanostores/i18n';
import { computed } from 'nanostores';
import { english, format, loadMessages, type MessageKey, type Messages } from '../lib/text.ts';
import { $locale } from './settings.ts';

/** English ships in the bundle; Russian loads on demand. All texts live in i18n/*.json. */
export const i18n = createI18n($locale, {
  baseLocale: 'en',
  get: async (code) => ({ wallet: await loadMessages(code === 'ru' ? 'ru' : 'en') }),
});

export const $messages = i18n('wallet', english);

export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

/** A translate function for the current language. */
export const $t = computed($messages, (messages: Messages): Translate => (key, params) => format(messages[key] ?? english[key], params));
