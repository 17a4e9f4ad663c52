import { english, type MessageKey } from '../lib/text.ts';
import { toWalletError } from '../api/errors.ts';
import { isNetwork, NETWORK_INFO } from '../lib/currencies.ts';
import { $t } from './i18n.ts';
import { showToast } from './toasts.ts';

export type ErrorTextOptions = {
  /** The text when the code has none of its own; SPEC §8 names it per flow. */
  fallback?: MessageKey;
  /**
   * Which of the gateway's own messages the flow shows (SPEC §8): true, after the code's own text (send, swap
   * confirm, address book); 'first', before it (the passcode prompt: the gateway's text carries the wait);
   * 'refusal', only a refusal's (4xx, or a code with a text of its own), and the fallback for anything else,
   * transport failures included (sell).
   */
  serverMessage?: boolean | 'first' | 'refusal';
};

/**
 * The one place that turns any error into the user's text (SPEC §8): a code with a text of its own
 * (error_<code>: transport codes, B2C_USM*, APP_0001) wins, then the gateway's message where the flow shows it,
 * then the flow's fallback.
 */
export function errorText(error: unknown, options: ErrorTextOptions = {}): string {
  const t = $t.get();
  const wallet = toWalletError(error);
  const fromServer = wallet.fromServer && wallet.message !== '';
  const fallback = t(options.fallback ?? 'error_unknown');
  const key = `error_${wallet.code}`;
  // A network that is not answering is named in the user's words (NETWORK_UNAVAILABLE).
  const params = { network: wallet.network && isNetwork(wallet.network) ? NETWORK_INFO[wallet.network].blockchain : (wallet.network ?? '') };
  if (options.serverMessage === 'refusal') {
    // A refusal of the gateway's own with its own words (no current price: 503) says why; a transport failure does not.
    if (fromServer && key in english) return t(key as MessageKey, params);
    return fromServer && (wallet.status ?? 500) < 500 ? wallet.message : fallback;
  }
  if (options.serverMessage === 'first' && fromServer) return wallet.message;
  if (key in english) return t(key as MessageKey, params);
  if (options.serverMessage && fromServer) return wallet.message;
  return fallback;
}

export function showErrorToast(error: unknown, options: ErrorTextOptions = {}): void {
  showToast(errorText(error, options), 'error');
}
