import { computed } from 'nanostores';
import { getCoinCatalogue, type CoinCatalogue } from '../api/wallet.ts';
import type { CoinMeta } from '../lib/currencies.ts';
import { always, createQuery } from './query.ts';

/** The coin catalogue (SPEC §3): one read shared by every screen, kept like any query result. */
export const catalogueQuery = createQuery<true, CoinCatalogue>({ key: () => 'catalogue', load: () => getCoinCatalogue() });

export const $catalogue = catalogueQuery.watch(always(true));

/** SPEC §3: coins without implementations are skipped. The gateway already hides BTC_LNG in production (SPEC §5). */
export function coinMap(crypto: readonly CoinMeta[]): Record<string, CoinMeta> {
  const coins: Record<string, CoinMeta> = {};
  for (const coin of crypto) if (coin.implementations.length > 0) coins[coin.currency] = coin;
  return coins;
}

export const $coins = computed($catalogue, (catalogue) => coinMap(catalogue.data?.crypto ?? []));

/** Active crypto coins in the catalogue's order: what choosers and asset management list. */
export const $activeCoins = computed($coins, (coins) => Object.values(coins).filter((coin) => coin.crypto && coin.active));

/** The coin's logo file under public/coins. */
export function logoUrl(logoName: string): string {
  return `/coins/${logoName}.svg`;
}
