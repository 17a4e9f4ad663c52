/**
 * Composes the custody core from configuration: the HD seed, the chains (an adapter per network, or off), the
 * rates source, the catalogue this environment offers, the card and payout providers (or off), and the worker's
 * jobs. Used by the server, the worker and the tests.
 */
import type pg from 'pg';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import { NETWORKS, type Network } from '../lib/currencies.ts';
import type { SecretsKey, WalletKeys, WalletSeed } from './adapters/keys/port.ts';
import { seedKeys } from './adapters/keys/wallet-keys.ts';
import { signerChannel } from './adapters/signer/channel.ts';
import { connectSigner, remoteKeys, remoteSigning, type Signer } from './signer/remote.ts';
import { approvalSealer, type ApprovalSeal } from './domain/signing.ts';
import { SeedError } from './adapters/keys/seed.ts';
import { openWalletSeed } from './adapters/keys/sealed-seed.ts';
import { openSecretsKey } from './adapters/keys/secrets-key.ts';
import type { DevnetChain } from './adapters/chains/devnet.ts';
import { openChains } from './adapters/chains/open.ts';
import type { ChainAdapter, ChainAddressing, ChainCallTrace, ChainEnv } from './adapters/chains/port.ts';
import { chainAddressing } from './domain/addresses.ts';
import { createDepositAddressGuard, type DepositAddressGuard } from './domain/deposit-address-guard.ts';
import { checkColdWallets, type HotColdDeps } from './domain/hot-cold.ts';
import { ConfigError } from './config-error.ts';
import { createReferenceRates, REFERENCE_USD, type ReferenceRates } from './adapters/rates/reference.ts';
import type { HedgePort, MarketFeed, RatesPort } from './adapters/rates/port.ts';
import type { HedgeSettings } from './domain/market/hedge.ts';
import { centralBankFeed, exchangeFeed } from './adapters/rates/feeds.ts';
import { createHedgeExchange } from './adapters/rates/exchanges.ts';
import { hedgeExposure } from './domain/market/hedge.ts';
import { createMarketRates } from './domain/market/prices.ts';
import { fundDesk } from './domain/market/desk.ts';
import { DEFAULT_MARKET_CONFIG, type MarketConfig } from './config-market.ts';
import { COINS, FIATS } from '../lib/currencies.ts';
import { parseDecimal, pow10 } from '../lib/amount.ts';
import { unitsOf } from '../lib/money.ts';
import { buildCatalogue, type Catalogue } from './domain/catalogue.ts';
import { ensureSystemAccounts, GAS_FLOAT_NETWORKS, systemAccounts } from './domain/ledger.ts';
import { fundGas } from './domain/gas-float.ts';
import type { JobHandler } from './jobs/port.ts';
import { jobHandlers } from './jobs/handlers.ts';
import { createAssetReader, type AssetReader } from './domain/assets.ts';
import { listenAccountChanges, onLocalAccountChange } from './domain/account-changes.ts';
import { DEFAULT_PAYOUT_OPTIONS, openPayouts, type Payouts } from './adapters/payout/open.ts';
import { createSellDesk, type SellDesk } from './domain/sell/desk.ts';
import { DEFAULT_SELL_SETTINGS } from './domain/sell/rules.ts';
import { openCards, type Cards } from './adapters/card/open.ts';
import { createBuyDesk, type BuyDesk } from './domain/buy/desk.ts';
import { DEFAULT_BUY_CONFIG } from './config-buy.ts';
import { createSealedSettings } from './adapters/keys/secrets-key.ts';
import { createNoticeSender } from './adapters/telegram/notices.ts';
import { loadDevKeys } from './domain/messenger.ts';
import { deliverNotifications } from './domain/notifications.ts';

export type CustodyConfig = Pick<Config, 'production' | 'publicUrl' | 'dataDir' | 'walletSeed' | 'chains' | 'workerPollMs' | 'ratesWalkMs'> &
  Partial<Pick<Config, 'payout' | 'sell' | 'buy' | 'secretsKey' | 'secretsKeyPrevious' | 'walletSeedFile' | 'walletSeedPassphraseFd' | 'walletSeedCommand' | 'analytics' | 'market' | 'signer' | 'telegram' | 'hotCold' | 'databaseUrl'>>;

/** Where prices come from, as the start line and the jobs see it. */
export type Market = {
  config: MarketConfig;
  /** The development walk, while it is the source (never in production): its step and the sandbox's withholding. */
  reference: ReferenceRates | undefined;
  /** The real feeds the worker polls (exchanges, central banks); none on the walk or with prices off. */
  feeds: readonly { feed: MarketFeed; everyMs: number }[];
  /** The desk's exchange account, where HEDGE_EXCHANGE names one. */
  hedge?: { port: HedgePort; settings: HedgeSettings; everyMs: number } | undefined;
};

export type Custody = {
  /**
   * The custody's keys: public only where the signer signs (the gateway, the worker), every key where this process
   * loaded the seed itself (`signing: 'seed'`: the tests, the operator's commands beside the signer).
   */
  keys: WalletKeys;
  /** Seals a withdrawal's figures as it is approved (domain/signing.ts): where a signer checks them. */
  approvalSeal: ApprovalSeal | undefined;
  /** The address rules under CHAIN_ENV (derivation, formats), handed to the adapters and the gateway's checks. */
  addresses: ChainAddressing;
  /** Seals each deposit address as it is derived and checks it wherever it is shown or handed out. */
  addressGuard: DepositAddressGuard;
  /** The chains, each network on its adapter; `chain.networks` are those that are on (none in production today). */
  chain: ChainAdapter;
  /** The devnet where it stands in for the chains (development and tests): its faucet is under /sandbox/devnet. */
  devnet: DevnetChain | undefined;
  /** What runs each network: an adapter's name, or off. */
  chainAdapters: Readonly<Record<Network, string>>;
  rates: RatesPort;
  market: Market;
  catalogue: Catalogue;
  /** Asset lists (balances, addresses) served from a cache kept exact by account-change notifications. */
  assets: AssetReader;
  jobs: JobHandler[];
  /** The payout bank of sells (the embedded sandbox outside production, or off) and the sell orders on it. */
  payouts: Payouts;
  sell: SellDesk;
  /** The card payment provider of purchases (the embedded sandbox outside production, or off) and the buy orders on it. */
  cards: Cards;
  buy: BuyDesk;
  close: () => Promise<void>;
};

/** At most this old, whatever happens to notifications: a safety net, not the mechanism. */
const ASSET_CACHE_TTL_MS = 2_000;

const SEED_SETTING = 'wallet.seed';
const CHAIN_ENV_SETTING = 'wallet.chain_env';


/**
 * `options.secrets` is the key the server already opened; a process of its own (worker, CLI) opens it here.
 * `options.traceChain` puts a span around every chain node call (tracing on, metrics/tracing.ts).
 */
/**
 * `options.signing`: `signer` (the gateway and the worker) holds no key: addresses come from the public keys the
 * signer recorded and every signature is asked of it over its channel; `seed` (default: tests, the operator's
 * commands) loads the seed into this process.
 */
export async function openCustody(
  config: CustodyConfig,
  log: Logger,
  pool: pg.Pool,
  options: { owner?: boolean; secrets?: SecretsKey; traceChain?: ChainCallTrace | undefined; signing?: 'seed' | 'signer' } = {},
): Promise<Custody> {
  const secrets = options.secrets ?? (await openSecretsKey({ value: config.secretsKey, previous: config.secretsKeyPrevious, dataDir: config.dataDir, production: config.production }, log, pool));
  let keys: WalletKeys;
  let signer: Signer | undefined;
  let approvalSeal: ApprovalSeal | undefined;
  if (options.signing === 'signer') {
    await checkChainEnv(pool, config.chains.env);
    const channel = await signerChannel({ socket: config.signer?.socket, token: config.signer?.token, dataDir: config.dataDir, production: config.production, database: config.databaseUrl });
    signer = connectSigner(channel);
    approvalSeal = approvalSealer(channel.token);
    keys = await remoteKeys(pool, config.chains.env, signer, channel.token);
  } else {
    const seed = await openWalletSeed(
      { mnemonic: config.walletSeed, file: config.walletSeedFile, passphraseFd: config.walletSeedPassphraseFd, command: config.walletSeedCommand, dataDir: config.dataDir, production: config.production },
      log,
    );
    await checkSeedFingerprint(pool, seed);
    await checkChainEnv(pool, config.chains.env);
    keys = seedKeys(seed.bytes, seed.fingerprint);
  }
  const addresses = chainAddressing(config.chains.env);
  if (config.hotCold) checkColdWallets(config.hotCold, addresses, config.chains.env);
  await ensureSystemAccounts(pool, systemAccounts(NETWORKS));
  // loadConfig already refuses it; this keeps a production custody off the simulated chain whoever builds the config.
  if (config.production && config.chains.mode === 'devnet') throw new Error('the devnet cannot run in production');
  const chains = openChains(pool, { ...config.chains, publicUrl: config.publicUrl, keys, addresses, trace: options.traceChain });
  const chain = signer ? remoteSigning(chains.port, signer) : chains.port;
  // Only a process that runs the worker keeps the block clock's settings; a CLI beside it must not move them.
  await chains.devnet?.init({ rebase: options.owner ?? true });
  const market = openMarket(config.market ?? (config.production ? { ...DEFAULT_MARKET_CONFIG, source: 'off' } : DEFAULT_MARKET_CONFIG), pool);
  const rates = market.rates;
  const hedge = market.hedge;
  const catalogue = buildCatalogue({ production: config.production, explorerUrl: (network) => chain.explorerUrl(network), env: config.chains.env, networksOn: chain.networks, minDeposit: config.chains.minDeposit });
  // The reader is built before its listener exists; the listener only ever calls it after both are set.
  const cache: { reader?: AssetReader } = {};
  const listener = listenAccountChanges(pool.options, log, {
    onChange: (account) => cache.reader?.invalidate(account),
    onReset: () => cache.reader?.clear(),
  });
  const addressGuard = createDepositAddressGuard({ secrets, keys, addresses, log });
  const assets = createAssetReader(pool, catalogue, { ttlMs: ASSET_CACHE_TTL_MS, trusted: () => listener.healthy, guard: addressGuard });
  cache.reader = assets;
  const stopLocal = onLocalAccountChange((account) => assets.changing(account));
  const payouts = await openPayouts(config.payout ?? DEFAULT_PAYOUT_OPTIONS, { pool, log, publicUrl: config.publicUrl, secrets });
  const sell = createSellDesk({ pool, rates, coins: () => catalogue.coins, provider: payouts.provider, settings: config.sell ?? DEFAULT_SELL_SETTINGS, log });
  const buyConfig = config.buy ?? DEFAULT_BUY_CONFIG;
  const cards = await openCards(buyConfig, { pool, log, publicUrl: config.publicUrl, secrets });
  // An on-ramp's coin must be the very token the chain adapter watches: on mainnet its contract is checked too.
  const tokenContracts = config.chains.env === 'mainnet' ? { ...config.chains.evm.tokens, ...config.chains.tron.tokens } : undefined;
  const buy = createBuyDesk({ pool, rates, coins: () => catalogue.coins, provider: cards.provider, onRamp: cards.onRamp, tokenContracts, settings: buyConfig, publicUrl: config.publicUrl, log, addressGuard });
  // The bot's messages go out while Telegram is on: a real token, or development mode's generated one (to the stand-in).
  const telegram = config.telegram;
  const botToken = telegram?.enabled ? (telegram.botToken ?? (telegram.devMode ? (await loadDevKeys(createSealedSettings(pool, secrets))).botToken : undefined)) : undefined;
  const notices = telegram && botToken ? createNoticeSender({ apiRoot: telegram.apiRoot, botToken, miniAppUrl: telegram.miniAppUrl }) : undefined;
  const jobs = jobHandlers({
    pool,
    log,
    pollMs: config.workerPollMs,
    ratesWalkMs: config.ratesWalkMs,
    market: {
      reference: market.reference,
      feeds: market.feeds,
      hedge: hedge && { everyMs: hedge.everyMs, run: () => hedgeExposure(pool, { rates, exchange: hedge.port, settings: hedge.settings, log }) },
    },
    chain,
    minDeposit: config.chains.minDeposit,
    addressGuard,
    // Selling and buying are off without their provider: their jobs too.
    sell: payouts.provider ? sell : undefined,
    buy: cards.provider || cards.onRamp ? buy : undefined,
    payoutSandbox: payouts.payDue ? { payDue: payouts.payDue } : undefined,
    payoutWebhooks: payouts.webhooks,
    cardWebhooks: cards.webhooks,
    notifications: notices && { deliverDue: () => deliverNotifications(pool, notices, { log }) },
    analyticsRetentionDays: config.analytics?.retentionDays,
    hotCold: hotColdJob(config, addresses),
  });
  // In development the desk starts with coins of every network the devnet runs, so swaps work out of the box, and the
  // devnet's hot wallet with a gas float on the ledger as a node's would have (domain/gas-float.ts).
  if (chains.devnet && !config.production && (options.owner ?? true)) {
    const devnetCoins = COINS.filter((coin) => chains.adapters[coin.network] === 'devnet');
    await fundDeskFromDevnet(pool, devnetCoins);
    await fundGasOnDevnet(pool, devnetCoins);
  }
  const close = async () => {
    stopLocal();
    await Promise.all([...market.feeds.map(({ feed }) => feed.close?.()), market.hedge?.port.close()]);
    return listener.close();
  };
  return { keys, approvalSeal, addresses, addressGuard, chain, devnet: chains.devnet, chainAdapters: chains.adapters, rates, market: { config: market.config, reference: market.reference, feeds: market.feeds, hedge: market.hedge }, catalogue, assets, jobs, payouts, sell, cards, buy, close };
}

/** A million dollars' worth of each coin at the reference prices, once per database: the development desk's stock. */
const DEVNET_DESK_USD = 1_000_000n;

/** Ten thousand dollars' worth of each gas float network's coin, once per database: the development hot wallet's float. */
const DEVNET_GAS_USD = 10_000n;

type DevnetCoin = { currency: string; network: Network; token: boolean; baseCurrency: string; decimals: number };

/** `usd` dollars of the coin at the reference prices, in its units; undefined without a reference price. */
function devnetUnits(coin: DevnetCoin, usd: bigint): bigint | undefined {
  const reference = REFERENCE_USD[coin.baseCurrency];
  return reference ? (usd * pow10(8) * pow10(coin.decimals)) / parseDecimal(reference, 8) : undefined;
}

async function fundDeskFromDevnet(pool: pg.Pool, coins: readonly DevnetCoin[]): Promise<void> {
  for (const coin of coins) {
    const units = devnetUnits(coin, DEVNET_DESK_USD);
    if (units !== undefined) await fundDesk(pool, { currency: coin.currency, units: unitsOf(units), key: `devnet:${coin.currency}` });
  }
}

async function fundGasOnDevnet(pool: pg.Pool, coins: readonly DevnetCoin[]): Promise<void> {
  for (const coin of coins.filter((c) => !c.token && GAS_FLOAT_NETWORKS.includes(c.network))) {
    const units = devnetUnits(coin, DEVNET_GAS_USD);
    if (units !== undefined) await fundGas(pool, { network: coin.network, units: unitsOf(units), key: 'devnet' });
  }
}

/** The price source the configuration names: the exchanges and central banks, the development walk, or none. */
function openMarket(config: MarketConfig, pool: pg.Pool): Market & { rates: RatesPort } {
  if (config.source === 'reference') {
    const reference = createReferenceRates(pool);
    return { config, reference, feeds: [], rates: reference };
  }
  if (config.source === 'off') return { config, reference: undefined, feeds: [], rates: createMarketRates(pool, { ...config, minSources: Number.MAX_SAFE_INTEGER }) };
  const assets = [...new Set(COINS.map((coin) => coin.baseCurrency))];
  const feeds = [
    { feed: exchangeFeed({ sources: config.exchanges, assets, urls: config.exchangeUrls }), everyMs: config.pollMs },
    // Every fiat but USD, the unit of every price, from its issuing central bank.
    { feed: centralBankFeed({ urls: config.fiatUrls, fiats: FIATS.map((fiat) => fiat.currency).filter((fiat) => fiat !== 'USD') }), everyMs: config.fiatPollMs },
  ];
  const hedge = config.hedge && {
    port: createHedgeExchange({ exchange: config.hedge.exchange, apiKey: config.hedge.apiKey, secret: config.hedge.secret, ...(config.hedge.password ? { password: config.hedge.password } : {}), ...(config.hedge.url ? { url: config.hedge.url } : {}) }),
    settings: { exchange: config.hedge.exchange, thresholdUsd: config.hedge.thresholdUsd },
    everyMs: config.hedge.everyMs,
  };
  return { config, reference: undefined, feeds, hedge, rates: createMarketRates(pool, config) };
}

/** Deposit addresses in the database were derived from one seed: starting with another would orphan them. */
export async function checkSeedFingerprint(pool: pg.Pool, seed: WalletSeed): Promise<void> {
  await pool.query(`INSERT INTO app_setting (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, [SEED_SETTING, { fingerprint: seed.fingerprint }]);
  const stored = await pool.query<{ value: { fingerprint?: string } }>('SELECT value FROM app_setting WHERE key = $1', [SEED_SETTING]);
  const fingerprint = stored.rows[0]?.value.fingerprint;
  if (fingerprint !== seed.fingerprint) {
    throw new SeedError(
      `the wallet seed (fingerprint ${seed.fingerprint}) is not the one this database's deposit addresses come from (${fingerprint}): set WALLET_SEED (or WALLET_SEED_FILE, WALLET_SEED_COMMAND) or DATA_DIR back`,
    );
  }
}

/**
 * Deposit addresses in the database were derived under one CHAIN_ENV (mainnet, testnet or regtest address formats):
 * starting under another would show and watch addresses of another chain. A database from before this check that
 * already holds addresses was on mainnet, the only formats there were.
 */
export async function checkChainEnv(pool: pg.Pool, env: ChainEnv): Promise<void> {
  await pool.query(
    `INSERT INTO app_setting (key, value)
     SELECT $1, jsonb_build_object('env', CASE WHEN EXISTS (SELECT 1 FROM deposit_addresses) THEN 'mainnet' ELSE $2::text END)
     ON CONFLICT (key) DO NOTHING`,
    [CHAIN_ENV_SETTING, env],
  );
  const stored = await pool.query<{ value: { env?: string } }>('SELECT value FROM app_setting WHERE key = $1', [CHAIN_ENV_SETTING]);
  const recorded = stored.rows[0]?.value.env;
  if (recorded !== env) {
    throw new ConfigError(`CHAIN_ENV is ${env} but this database's deposit addresses were derived under CHAIN_ENV=${recorded}: set CHAIN_ENV=${recorded} or use another database`);
  }
}

/**
 * The `custody.hot-cold:<network>` jobs' settings, or none. Their cold sweeps and consolidations are signed by the
 * process's chain port: with the seed here, or by the signer over its channel (remote.ts), which checks them against
 * its own HOT_WALLET_MAX, COLD_WALLET and UTXO_CONSOLIDATE_BELOW (domain/signing.ts).
 */
function hotColdJob(config: CustodyConfig, addresses: ChainAddressing): Omit<HotColdDeps, 'chain' | 'log'> | undefined {
  if (!config.hotCold) return undefined;
  return { settings: config.hotCold, addresses, env: config.chains.env, consolidateBelow: config.chains.utxo.consolidateBelow ?? {} };
}
