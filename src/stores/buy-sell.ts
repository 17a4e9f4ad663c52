import { computed } from 'nanostores';
import { getClientConfig } from '../api/user.ts';
import type { ClientConfig } from '../api/session.ts';
import { always, createQuery } from './query.ts';

/** GET /api/client-config, read once and kept like any query result: the buy/sell screen needs its buy and sell switches. */
const clientConfigQuery = createQuery<true, ClientConfig>({ key: () => 'client-config', load: () => getClientConfig() });
const $clientConfig = clientConfigQuery.watch(always(true));

/** SPEC §1, §2: the sell entry is disabled unless the gateway turns it on (SELL_ENABLED and a payout provider). */
export const $sellEnabled = computed($clientConfig, (config) => config.data?.sellEnabled === true);

/** The buy entry is disabled once the gateway says buying is off (no card provider); until it answers it stays on. */
export const $buyEnabled = computed($clientConfig, (config) => config.data?.buyEnabled !== false);
