import { computed } from 'nanostores';
import { getClientConfig } from '../api/user.ts';
import type { ClientConfig } from '../api/session.ts';
import type { ChainEnv } from '../lib/currencies.ts';
import { always, createQuery } from './query.ts';

/** GET /api/client-config, read once and kept like any query result. */
const clientConfigQuery = createQuery<true, ClientConfig>({ key: () => 'client-config', load: () => getClientConfig() });
export const $clientConfig = clientConfigQuery.watch(always(true));

/** CHAIN_ENV as the gateway announces it: the address forms the send and address-book forms accept. Mainnet until it answers. */
export const $chainEnv = computed($clientConfig, (config): ChainEnv => config.data?.chainEnv ?? 'mainnet');
