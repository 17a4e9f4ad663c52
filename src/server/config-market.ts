import { z } from 'zod';
import { ConfigError } from './config-error.ts';
import { jsonSetting } from './config-schema.ts';

/**
 * The market (README, Configuration, "Prices, the desk and hedging"): where prices come from, when a price counts
 * as current, the swap desk's inventory limits and the hedge account. Read by loadConfig with the rest.
 */
export type MarketConfig = Readonly<{
  /**
   * `exchanges`: crypto from RATES_SOURCES through ccxt, fiat from the central banks; `reference`: the shipped table
   * and its random walk (development only); `off`: no price at all (production without RATES_SOURCES).
   */
  source: 'exchanges' | 'reference' | 'off';
  /** ccxt exchange ids (binance, kraken...), with `source: 'exchanges'`. */
  exchanges: readonly string[];
  /** Per exchange id, a base URL that replaces its API hosts (a proxy; the tests' stand-in). */
  exchangeUrls: Readonly<Record<string, string>>;
  /** Per central bank (ecb, boc, nbk, nbu, cbar, cbr), a base URL that replaces its host. */
  fiatUrls: Readonly<Record<string, string>>;
  pollMs: number;
  fiatPollMs: number;
  maxAgeMs: number;
  maxDeviationBps: number;
  minSources: number;
  fiatMaxAgeMs: number;
  /** How long a price that is no longer current is still shown (with its age) beside a balance. */
  lastKnownMaxAgeMs: number;
  /** Per currency (ETH, USDT_TRX), the lowest the desk's inventory may go, a decimal (negative: a short it may hold). */
  inventoryLimits: Readonly<Record<string, string>>;
  /** The desk's exchange account for hedges; undefined without HEDGE_EXCHANGE. */
  hedge: Readonly<{ exchange: string; apiKey: string; secret: string; password: string | undefined; url: string | undefined; thresholdUsd: string; everyMs: number }> | undefined;
}>;

const exchangeId = z.string().regex(/^[a-z][a-z0-9]{1,30}$/, 'an exchange id as ccxt names it, like binance or kraken');
const urls = (what: string) => jsonSetting(z.record(z.string().regex(/^[a-z][a-z0-9]{1,30}$/), z.url({ protocol: /^https?$/ })), `must be JSON like {"${what}":"https://proxy.example/${what}"}`);

export const marketSchema = {
  RATES_SOURCES: z
    .string()
    .transform((text) => [...new Set(text.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== ''))])
    .pipe(z.array(exchangeId).min(1).max(20))
    .optional(),
  RATES_SOURCE_URLS: urls('binance').optional(),
  RATES_FIAT_URLS: urls('ecb').optional(),
  RATES_POLL_MS: z.coerce.number().int().min(1000).max(3_600_000).default(15_000),
  RATES_FIAT_POLL_MS: z.coerce.number().int().min(60_000).max(86_400_000).default(3_600_000),
  RATES_MAX_AGE_SECONDS: z.coerce.number().int().min(5).max(86_400).default(120),
  RATES_MAX_DEVIATION_BPS: z.coerce.number().int().min(1).max(5000).default(300),
  RATES_MIN_SOURCES: z.coerce.number().int().min(1).max(20).default(2),
  RATES_FIAT_MAX_AGE_DAYS: z.coerce.number().int().min(1).max(30).default(4),
  RATES_LAST_KNOWN_MAX_AGE_SECONDS: z.coerce.number().int().min(0).max(30 * 86_400).default(86_400),
  SWAP_INVENTORY_LIMITS: jsonSetting(
    z.record(z.string().regex(/^[A-Z0-9_]+$/, 'keys are currency codes like ETH or USDT_TRX'), z.string().regex(/^-?\d{1,12}(?:\.\d{1,18})?$/, 'limits are decimal strings like "0" or "-0.5"')),
    'must be JSON like {"ETH":"0.5","BTC":"0"}',
  ).optional(),
  HEDGE_EXCHANGE: exchangeId.optional(),
  HEDGE_API_KEY: z.string().min(1).max(500).optional(),
  HEDGE_API_SECRET: z.string().min(1).max(500).optional(),
  HEDGE_API_PASSWORD: z.string().min(1).max(500).optional(),
  HEDGE_URL: z.url({ protocol: /^https?$/ }).optional(),
  HEDGE_THRESHOLD_USD: z.string().regex(/^\d{1,12}(?:\.\d{1,2})?$/, 'an amount in USD like 10000').default('10000'),
  HEDGE_EVERY_MS: z.coerce.number().int().min(1000).max(3_600_000).default(30_000),
};

type MarketEnv = z.infer<z.ZodObject<typeof marketSchema>>;

/** The reference walk is a development stand-in: production names real exchanges or quotes nothing. */
export function marketConfig(e: MarketEnv, production: boolean): MarketConfig {
  const named = e.RATES_SOURCES ?? [];
  const reference = named.includes('reference');
  if (reference && named.length > 1) throw new ConfigError('RATES_SOURCES is either reference (the development walk) or a list of exchanges, not both');
  if (reference && production) throw new ConfigError('RATES_SOURCES=reference is a development stand-in and cannot run in production: name real exchanges (binance,kraken,...) or leave it unset');
  const source = named.length === 0 ? (production ? 'off' : 'reference') : reference ? 'reference' : 'exchanges';
  const exchanges = source === 'exchanges' ? named : [];
  if (source === 'exchanges' && e.RATES_MIN_SOURCES > exchanges.length) {
    throw new ConfigError(`RATES_MIN_SOURCES is ${e.RATES_MIN_SOURCES} but RATES_SOURCES names ${exchanges.length}: no asset could ever have a price`);
  }
  const hedgeNamed = [e.HEDGE_EXCHANGE, e.HEDGE_API_KEY, e.HEDGE_API_SECRET].filter((v) => v !== undefined).length;
  if (hedgeNamed > 0 && hedgeNamed < 3) throw new ConfigError('HEDGE_EXCHANGE, HEDGE_API_KEY and HEDGE_API_SECRET go together: set all three or none');
  const hedge =
    e.HEDGE_EXCHANGE && e.HEDGE_API_KEY && e.HEDGE_API_SECRET
      ? Object.freeze({ exchange: e.HEDGE_EXCHANGE, apiKey: e.HEDGE_API_KEY, secret: e.HEDGE_API_SECRET, password: e.HEDGE_API_PASSWORD, url: e.HEDGE_URL, thresholdUsd: e.HEDGE_THRESHOLD_USD, everyMs: e.HEDGE_EVERY_MS })
      : undefined;
  return Object.freeze({
    source,
    exchanges: Object.freeze(exchanges),
    exchangeUrls: Object.freeze(e.RATES_SOURCE_URLS ?? {}),
    fiatUrls: Object.freeze(e.RATES_FIAT_URLS ?? {}),
    pollMs: e.RATES_POLL_MS,
    fiatPollMs: e.RATES_FIAT_POLL_MS,
    maxAgeMs: e.RATES_MAX_AGE_SECONDS * 1000,
    maxDeviationBps: e.RATES_MAX_DEVIATION_BPS,
    minSources: e.RATES_MIN_SOURCES,
    fiatMaxAgeMs: e.RATES_FIAT_MAX_AGE_DAYS * 86_400_000,
    lastKnownMaxAgeMs: e.RATES_LAST_KNOWN_MAX_AGE_SECONDS * 1000,
    inventoryLimits: Object.freeze(e.SWAP_INVENTORY_LIMITS ?? {}),
    hedge,
  });
}

export const DEFAULT_MARKET_CONFIG: MarketConfig = marketConfig(z.object(marketSchema).parse({}), false);
