import { computed } from 'nanostores';
import { $clientConfig } from './client-config.ts';

/** SPEC §1, §2: the sell entry is disabled unless the gateway turns it on (SELL_ENABLED and a payout provider). */
export const $sellEnabled = computed($clientConfig, (config) => config.data?.sellEnabled === true);

/** The buy entry is disabled once the gateway says buying is off (no card provider); until it answers it stays on. */
export const $buyEnabled = computed($clientConfig, (config) => config.data?.buyEnabled !== false);
