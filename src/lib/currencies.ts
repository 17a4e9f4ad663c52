/**
 * The asset catalogue (SPEC §3 coin metadata, fiat metadata), shipped in code and shared by the browser and
 * the gateway. Amounts of a currency are counted in atomic units of `decimals`; `round` is for display only.
 */

export const NETWORKS = ['BITCOIN', 'ETHEREUM', 'TRON', 'LITECOIN', 'DOGECOIN', 'TON'] as const;
export type Network = (typeof NETWORKS)[number];

export type CoinImplementation = { currency: string; network: Network; token?: string };

export type CoinMeta = {
  currency: string;
  name: string;
  logoName: string;
  /** The network coin's logo for a token (USDT on Tron shows TRX small), null for a network's own coin. */
  secondaryLogoName: string | null;
  token: boolean;
  network: Network;
  blockchain: string;
  /** The asset the coin stands for whatever its network: USDT for USDT_TRX and USDT_ETH. */
  baseCurrency: string;
  /** Decimals shown to the user. */
  round: number;
  /** Explorer link of a transaction: `{tx}` is replaced by its hash; empty where the chain has no explorer (regtest). */
  urlScan: string;
  crypto: true;
  active: boolean;
  /** Atomic units per coin, as 10^decimals (satoshi, wei, sun, nanoton). */
  decimals: number;
  implementations: CoinImplementation[];
  /** The smallest deposit credited (MIN_DEPOSIT), as a decimal; absent when any amount is credited. */
  minDeposit?: string;
};

export type FiatMeta = { currency: string; name: string; symbol: string; decimals: number };

type NetworkInfo = { coin: string; blockchain: string; explorer: string };

/** CHAIN_ENV: which of a network's chains the custody runs on; it picks address formats and explorer links. */
export const CHAIN_ENVS = ['mainnet', 'testnet', 'regtest'] as const;
export type ChainEnv = (typeof CHAIN_ENVS)[number];

/** Each network's own coin (which pays its fees and names its addresses) and its public explorer. */
export const NETWORK_INFO: Record<Network, NetworkInfo> = {
  BITCOIN: { coin: 'BTC', blockchain: 'Bitcoin', explorer: 'https://mempool.space/tx/{tx}' },
  ETHEREUM: { coin: 'ETH', blockchain: 'Ethereum', explorer: 'https://etherscan.io/tx/{tx}' },
  TRON: { coin: 'TRX', blockchain: 'Tron', explorer: 'https://tronscan.org/#/transaction/{tx}' },
  LITECOIN: { coin: 'LTC', blockchain: 'Litecoin', explorer: 'https://litecoinspace.org/tx/{tx}' },
  DOGECOIN: { coin: 'DOGE', blockchain: 'Dogecoin', explorer: 'https://blockchair.com/dogecoin/transaction/{tx}' },
  TON: { coin: 'TON', blockchain: 'TON', explorer: 'https://tonviewer.com/transaction/{tx}' },
};

/** Each network's public test network explorer (Bitcoin testnet4, Sepolia, Nile, TON testnet). */
const TESTNET_EXPLORERS: Record<Network, string> = {
  BITCOIN: 'https://mempool.space/testnet4/tx/{tx}',
  ETHEREUM: 'https://sepolia.etherscan.io/tx/{tx}',
  TRON: 'https://nile.tronscan.org/#/transaction/{tx}',
  LITECOIN: 'https://litecoinspace.org/testnet/tx/{tx}',
  DOGECOIN: 'https://blockexplorer.one/dogecoin/testnet/tx/{tx}',
  TON: 'https://testnet.tonviewer.com/transaction/{tx}',
};

/** The explorer of `network` under CHAIN_ENV `env` (`{tx}` placeholder); none on regtest, a chain only this node knows. */
export function networkExplorer(network: Network, env: ChainEnv): string | undefined {
  if (env === 'regtest') return undefined;
  return env === 'testnet' ? TESTNET_EXPLORERS[network] : NETWORK_INFO[network].explorer;
}

type CoinSeed = Omit<CoinMeta, 'secondaryLogoName' | 'blockchain' | 'urlScan' | 'crypto' | 'active' | 'implementations'> & {
  tokenContract?: string;
};

function coin(seed: CoinSeed): CoinMeta {
  const { tokenContract, ...rest } = seed;
  const info = NETWORK_INFO[seed.network];
  const implementation: CoinImplementation = { currency: seed.currency, network: seed.network };
  if (tokenContract) implementation.token = tokenContract;
  return {
    ...rest,
    secondaryLogoName: seed.token ? info.coin.toLowerCase() : null,
    blockchain: info.blockchain,
    urlScan: info.explorer,
    crypto: true,
    active: true,
    implementations: [implementation],
  };
}

/** Every crypto coin the product knows, in the order screens list them. */
export const COINS: readonly CoinMeta[] = [
  coin({ currency: 'BTC', name: 'Bitcoin', logoName: 'btc', token: false, network: 'BITCOIN', baseCurrency: 'BTC', round: 8, decimals: 8 }),
  coin({ currency: 'ETH', name: 'Ethereum', logoName: 'eth', token: false, network: 'ETHEREUM', baseCurrency: 'ETH', round: 6, decimals: 18 }),
  coin({
    currency: 'USDT_ETH',
    name: 'Tether USD (ERC-20)',
    logoName: 'usdt',
    token: true,
    network: 'ETHEREUM',
    baseCurrency: 'USDT',
    round: 2,
    decimals: 6,
    tokenContract: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
  }),
  coin({
    currency: 'USDC_ETH',
    name: 'USD Coin (ERC-20)',
    logoName: 'usdc',
    token: true,
    network: 'ETHEREUM',
    baseCurrency: 'USDC',
    round: 2,
    decimals: 6,
    tokenContract: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
  }),
  coin({ currency: 'TRX', name: 'Tron', logoName: 'trx', token: false, network: 'TRON', baseCurrency: 'TRX', round: 2, decimals: 6 }),
  coin({
    currency: 'USDT_TRX',
    name: 'Tether USD (TRC-20)',
    logoName: 'usdt',
    token: true,
    network: 'TRON',
    baseCurrency: 'USDT',
    round: 2,
    decimals: 6,
    tokenContract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
  }),
  coin({ currency: 'LTC', name: 'Litecoin', logoName: 'ltc', token: false, network: 'LITECOIN', baseCurrency: 'LTC', round: 6, decimals: 8 }),
  coin({ currency: 'DOGE', name: 'Dogecoin', logoName: 'doge', token: false, network: 'DOGECOIN', baseCurrency: 'DOGE', round: 2, decimals: 8 }),
  coin({ currency: 'TON', name: 'Toncoin', logoName: 'ton', token: false, network: 'TON', baseCurrency: 'TON', round: 4, decimals: 9 }),
  // Lightning is settled on the Bitcoin side of custody; it exists outside production only (SPEC §5).
  coin({ currency: 'BTC_LNG', name: 'Bitcoin Lightning', logoName: 'btc_lng', token: false, network: 'BITCOIN', baseCurrency: 'BTC', round: 8, decimals: 8 }),
];

export const HIDDEN_IN_PRODUCTION = 'BTC_LNG';

/** SPEC §5 and §3: coins without implementations are skipped; in production BTC_LNG is hidden. */
export function visibleCoins(coins: readonly CoinMeta[], production: boolean): CoinMeta[] {
  return coins.filter(
    (c) => c.implementations.length > 0 && (!production || c.implementations.some((i) => i.currency !== HIDDEN_IN_PRODUCTION)),
  );
}

/** The fiat currencies (SPEC §9): the first six are the user's choices, RUB is for card payouts. */
export const FIATS: readonly FiatMeta[] = [
  { currency: 'USD', name: 'US Dollar', symbol: '$', decimals: 2 },
  { currency: 'EUR', name: 'Euro', symbol: '€', decimals: 2 },
  { currency: 'KZT', name: 'Kazakhstani Tenge', symbol: '₸', decimals: 2 },
  { currency: 'UAH', name: 'Ukrainian Hryvnia', symbol: '₴', decimals: 2 },
  { currency: 'AZN', name: 'Azerbaijani Manat', symbol: '₼', decimals: 2 },
  // C$, not the spec's bare $: beside USD's $ a Canadian amount would read as US dollars (issue 33 item 3).
  { currency: 'CAD', name: 'Canadian Dollar', symbol: 'C$', decimals: 2 },
  { currency: 'RUB', name: 'Russian Ruble', symbol: '₽', decimals: 2 },
];

/** Chosen when nothing is held yet: 'add most common assets' (SPEC §2, §9). */
export const COMMON_ASSETS = ['BTC', 'ETH', 'USDT_TRX'] as const;

const COIN_BY_CURRENCY = new Map(COINS.map((c) => [c.currency, c]));
const FIAT_BY_CURRENCY = new Map(FIATS.map((f) => [f.currency, f]));

export function findCoin(currency: string): CoinMeta | undefined {
  return COIN_BY_CURRENCY.get(currency);
}

export function findFiat(currency: string): FiatMeta | undefined {
  return FIAT_BY_CURRENCY.get(currency);
}

/** Decimals of any currency the product knows, crypto or fiat; undefined for an unknown code. */
export function decimalsOf(currency: string): number | undefined {
  return COIN_BY_CURRENCY.get(currency)?.decimals ?? FIAT_BY_CURRENCY.get(currency)?.decimals;
}

/** Decimals of a currency money is kept in: an unknown code is a fault, never guessed (SPEC §5: amounts are exact). */
export function requireDecimals(currency: string): number {
  const decimals = decimalsOf(currency);
  if (decimals === undefined) throw new Error(`unknown currency ${currency}`);
  return decimals;
}

export function isNetwork(value: string): value is Network {
  return (NETWORKS as readonly string[]).includes(value);
}

/** The explorer link of a transaction hash on a coin, or undefined without a hash or an explorer. */
export function explorerLink(urlScan: string, hash: string | null | undefined): string | undefined {
  // An empty urlScan is a chain without an explorer (regtest): no link.
  return hash && urlScan ? urlScan.replaceAll('{tx}', encodeURIComponent(hash)) : undefined;
}
