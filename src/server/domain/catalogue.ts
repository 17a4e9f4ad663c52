/**
 * The catalogue this gateway offers (SPEC §3 coin and fiat metadata): the shipped coins, less what the
 * environment hides (BTC_LNG in production), with explorer links pointing at the chain actually in use. A coin
 * whose network is off (no chain adapter) stays listed but inactive: the app skips it and every flow refuses it.
 */
import { COINS, FIATS, networkExplorer, visibleCoins, type ChainEnv, type CoinMeta, type FiatMeta, type Network } from '../../lib/currencies.ts';
import { formatUnits } from '../../lib/amount.ts';

export type Catalogue = { coins: readonly CoinMeta[]; fiats: readonly FiatMeta[] };

export function buildCatalogue(options: {
  production: boolean;
  /** The adapter's own explorer (the devnet's), else the network's public one for `env` (none on regtest). */
  explorerUrl?: (network: Network) => string | undefined;
  env?: ChainEnv;
  networksOn: readonly Network[];
  /** MIN_DEPOSIT per currency, in atomic units: shown where the user receives. */
  minDeposit?: Readonly<Record<string, bigint>>;
}): Catalogue {
  const coins = visibleCoins(COINS, options.production).map((coin) => ({
    ...coin,
    ...minimumOf(coin, options.minDeposit),
    active: coin.active && options.networksOn.includes(coin.network),
    urlScan: options.explorerUrl?.(coin.network) ?? networkExplorer(coin.network, options.env ?? 'mainnet') ?? '',
  }));
  return { coins, fiats: FIATS };
}

export function offeredCoin(catalogue: Catalogue, currency: string): CoinMeta | undefined {
  return catalogue.coins.find((c) => c.currency === currency);
}

function minimumOf(coin: CoinMeta, minDeposit: Readonly<Record<string, bigint>> | undefined): { minDeposit?: string } {
  const units = minDeposit?.[coin.currency] ?? 0n;
  return units > 0n ? { minDeposit: formatUnits(units, coin.decimals) } : {};
}
