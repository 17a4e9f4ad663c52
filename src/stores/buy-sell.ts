import { computed } from 'nanostores';
import { getBuyCurrencies, type BuyCurrencies } from '../api/buy.ts';
import { $clientConfig } from './client-config.ts';
import { errorText } from './errors.ts';
import { $t } from './i18n.ts';
import { createQuery } from './query.ts';

/** SPEC §1, §2: the sell entry is disabled unless the gateway turns it on (SELL_ENABLED and a payout provider). */
export const $sellEnabled = computed($clientConfig, (config) => config.data?.sellEnabled === true);

/** The buy entry is disabled once the gateway says buying is off (no card provider); until it answers it stays on. */
export const $buyEnabled = computed($clientConfig, (config) => config.data?.buyEnabled !== false);

const buyCurrenciesQuery = createQuery<true, BuyCurrencies>({ key: () => 'buy-currencies', load: () => getBuyCurrencies() });
/** What a card buys here (issue 32: the provider's own list), asked only while buying is on. */
export const $buyCurrencies = buyCurrenciesQuery.watch(computed($buyEnabled, (on) => (on ? true : null)));

/**
 * Why buying is unavailable although it is on: the provider did not answer, does not sell in the buyer's country, or
 * sells nothing of ours; null while it is fine or still being asked (the entry then stays on: no spinner waits on it).
 */
export const $buyUnavailableReason = computed([$buyCurrencies, $t], (state, t): string | null => {
  if (state.error) return errorText(state.error, { fallback: 'buy_provider_down' });
  if (state.data && state.data.currencies.length === 0) return t('buy_get_empty');
  return null;
});
