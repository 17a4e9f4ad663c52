import { english, type MessageKey } from '../lib/text.ts';
import { toWalletError } from '../api/errors.ts';
import { $t } from './i18n.ts';
import { showToast } from './toasts.ts';

export type ErrorTextOptions = {
  /** The text when the code has none of its own; SPEC §8 names it per flow. */
  fallback?: MessageKey;
  /** SPEC §8: send, sell, swap confirm, passcode and address-book errors show the gateway's own message. */
  serverMessage?: boolean;
};

/**
 * The one place that turns any error into the user's text (SPEC §8): a code with a text of its own
 * (error_<code>: transport codes, B2C_USM*, APP_0001) wins, then the gateway's message where the flow shows it,
 * then the flow's fallback.
 */
export function errorText(error: unknown, options: ErrorTextOptions = {}): string {
  const t = $t.get();
  const wallet = toWalletError(error);
  const key = `error_${wallet.code}`;
  if (key in english) return t(key as MessageKey);
  if (options.serverMessage && wallet.fromServer && wallet.message) return wallet.message;
  return t(options.fallback ?? 'error_unknown');
}

export function showErrorToast(error: unknown, options: ErrorTextOptions = {}): void {
  showToast(errorText(error, options), 'error');
}
