import { z } from 'zod';
import { resolve } from 'node:path';
import { telegramConfig, telegramSchema, type TelegramConfig } from './config-telegram.ts';
import { chainsConfig, chainsSchema, type ChainsConfig } from './config-chains.ts';
import { alertFloors, hotColdConfig, hotColdSchema, signerDailyMax, type HotColdConfig } from './config-hot-cold.ts';
import { withdrawalConfig, withdrawalSchema, type WithdrawalConfig } from './config-withdrawals.ts';
import { buyConfig, buySchema, type BuyConfig } from './config-buy.ts';
import { analyticsConfig, analyticsSchema, type AnalyticsConfig } from './config-analytics.ts';
import { marketConfig, marketSchema, type MarketConfig } from './config-market.ts';
import { operatingConfig, operatingSchema, type OperatingConfig } from './config-operating.ts';
import { MAX_SLIPPAGE_BPS } from '../lib/slippage.ts';
import { ConfigError } from './config-error.ts';
import { decimalLimits, jsonSetting } from './config-schema.ts';
import { parseTrustProxy, type TrustProxy } from './net/client-address.ts';

export { ConfigError };

const postgresUrl = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be a postgres:// URL with a host, like postgres://user@127.0.0.1:5432/wallet');

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4321),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATABASE_URL: postgresUrl.optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  SUPPORT_EMAIL: z.email().default('support@wallet.example'),
  // The support chat inside Telegram: a username (@wallet_support, wallet_support) or its https://t.me/ link.
  SUPPORT_TELEGRAM: z
    .string()
    .trim()
    .regex(/^(?:@|https:\/\/t\.me\/)?[A-Za-z][A-Za-z0-9_]{3,31}$/, 'SUPPORT_TELEGRAM is a Telegram username (@name) or its https://t.me/name link')
    .optional(),
  WORKERS: z.enum(['on', 'off']).default('on'),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  APP_ENV: z.enum(['development', 'test', 'production']).optional(),
  NODE_ENV: z.string().optional(),
  WALLET_SEED: z.string().min(1).optional(),
  WALLET_SEED_FILE: z.string().min(1).optional(),
  WALLET_SEED_PASSPHRASE_FD: z.coerce.number().int().min(0).optional(),
  WALLET_SEED_COMMAND: z.string().min(1).optional(),
  SIGNER: z.enum(['embedded', 'external']).optional(),
  SIGNER_SOCKET: z.string().min(1).max(100).optional(),
  SIGNER_TOKEN: z.string().min(32, 'SIGNER_TOKEN is at least 32 characters (e.g. openssl rand -hex 32)').optional(),
  SIGNER_DAILY_MAX: z.string().regex(/^(?:[A-Z_]+:\d{1,12}(?:\.\d{1,18})?)(?:,[A-Z_]+:\d{1,12}(?:\.\d{1,18})?)*$/, 'must look like LITECOIN:10,ETHEREUM:5,USDT_TRX:20000 (in the network’s coin, or a token’s own units)').optional(),
  SECRETS_KEY: z.string().min(1).optional(),
  SECRETS_KEY_PREVIOUS: z.string().min(1).optional(),
  WORKER_POLL_MS: z.coerce.number().int().min(20).max(60_000).default(500),
  CHAIN_REQUEST_BUDGET_MS: z.coerce.number().int().min(100).max(20_000).default(3_500),
  RATES_WALK_MS: z.coerce.number().int().min(0).max(86_400_000).default(10_000),
  OIDC_ISSUER: z.url({ protocol: /^https?$/ }).optional(),
  OIDC_CLIENT_ID: z.string().min(1).max(200).default('wallet-web'),
  OIDC_AUDIENCE: z.url({ protocol: /^https?$/ }).optional(),
  OIDC_ACCESS_TOKEN_TTL: z.coerce.number().int().min(5).max(86_400).default(900),
  OIDC_ID_TOKEN_TTL: z.coerce.number().int().min(5).max(86_400).default(3600),
  OIDC_REFRESH_TOKEN_TTL: z.coerce.number().int().min(30).max(31_536_000).default(2_592_000),
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  MAIL_FROM: z.string().min(3).max(200).optional(),
  TRUST_PROXY: z
    .string()
    .default('off')
    .transform((text, ctx) => {
      const trust = parseTrustProxy(text);
      if (typeof trust !== 'string') return trust;
      ctx.addIssue({ code: 'custom', message: `must be off, on, a hop count or proxy addresses/CIDRs: ${trust}` });
      return z.NEVER;
    }),
  PUBLIC_RATE_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(120),
  AUTH_RATE_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(20),
  MAIL_RATE_LIMIT: z.coerce.number().int().min(0).max(1000).default(5),
  SWAP_SPREAD_BPS: z.coerce.number().int().min(0).max(2000).default(50),
  SWAP_LIMITS: jsonSetting(
    decimalLimits(z.string().regex(/^[A-Z0-9_]+(?:\/[A-Z0-9_]+)?$/, 'keys are a source currency (BTC) or a pair (BTC/USDT_TRX)'), z.string().regex(/^\d{1,12}(?:\.\d{1,18})?$/)),
  ).optional(),
  SWAP_MAX_SLIPPAGE_BPS: z.coerce.number().int().min(0).max(MAX_SLIPPAGE_BPS).default(50),
  PAYOUT_PROVIDER: z.enum(['sandbox', 'off']).optional(),
  PAYOUT_WEBHOOK_SECRET: z.string().min(16).max(200).optional(),
  PAYOUT_SANDBOX_DELAY_MS: z.coerce.number().int().min(0).max(3_600_000).default(5000),
  PAYOUT_BIN_TABLE: z.string().min(1).optional(),
  SELL_MIN_RUB: z.string().regex(/^\d{1,9}(?:\.\d{1,2})?$/, 'must be an amount in roubles, like 1000').default('1000'),
  SELL_MAX_RUB: z.string().regex(/^\d{1,9}(?:\.\d{1,2})?$/, 'must be an amount in roubles, like 300000').default('300000'),
  SELL_SPREAD_BPS: z.coerce.number().int().min(0).max(5000).default(150),
  SELL_RATE_TTL_S: z.coerce.number().int().min(10).max(3600).default(300),
  SELL_MAX_SLIPPAGE_BPS: z.coerce.number().int().min(0).max(MAX_SLIPPAGE_BPS).default(100),
  ...telegramSchema,
  ...withdrawalSchema,
  ...chainsSchema,
  ...hotColdSchema,
  SELL_ENABLED: z.enum(['on', 'off']).default('off'),
  ...buySchema,
  ...analyticsSchema,
  ...marketSchema,
  ...operatingSchema,
});

export type ChainsMode = 'devnet' | 'off';

export type Config = Readonly<{
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  logLevel: z.infer<typeof schema>['LOG_LEVEL'];
  supportEmail: string;
  /** The support chat's link (https://t.me/name) offered by 'Leave feedback' inside Telegram; undefined when unset. */
  supportTelegram: string | undefined;
  workers: boolean;
  shutdownTimeoutMs: number;
  version: string;
  /** APP_ENV, else production when NODE_ENV=production, else development: production hides BTC_LNG and needs WALLET_SEED. */
  appEnv: 'development' | 'test' | 'production';
  production: boolean;
  /** The BIP39 mnemonic of the custody's HD seed, read by the signer alone; unset outside production means a generated one in DATA_DIR. */
  walletSeed: string | undefined;
  /** WALLET_SEED_FILE: the mnemonic sealed under a passphrase (adapters/keys/sealed-seed.ts), as an absolute path. */
  walletSeedFile: string | undefined;
  /** WALLET_SEED_PASSPHRASE_FD: the descriptor the sealed file's passphrase is read from; unset, a terminal prompt. */
  walletSeedPassphraseFd: number | undefined;
  /** WALLET_SEED_COMMAND: a shell command whose standard output is the mnemonic (a secret store's client). */
  walletSeedCommand: string | undefined;
  /**
   * The signer (issue 31), the only process that holds the seed: `embedded` (outside production only) starts it in
   * this command beside the gateway, which still asks it over the channel; `external` (production): `npm run signer`
   * runs apart. `socket` (SIGNER_SOCKET, default DATA_DIR/signer.sock) and `token` (SIGNER_TOKEN, else one in DATA_DIR
   * outside production) make the channel. `dailyMax` (SIGNER_DAILY_MAX): per currency, the most the signer signs out
   * in any 24 hours (domain/signing-cap.ts); a currency without one is uncapped.
   */
  signer: Readonly<{ mode: 'embedded' | 'external'; socket: string | undefined; token: string | undefined; dailyMax?: Readonly<Record<string, bigint>> }>;
  /** The key that seals the database's secrets (adapters/keys/secrets-key.ts); unset outside production means one in DATA_DIR. */
  secretsKey: string | undefined;
  /** SECRETS_KEY_PREVIOUS: comma-separated keys a rotation moves away from, still opening until the re-seal is done. */
  secretsKeyPrevious: string | undefined;
  /** Which adapter runs the networks: the simulated devnet (never in production) or none (every network off). */
  chains: ChainsConfig;
  /** The hot wallet's ceiling and floor per network and the operator's cold wallets (config-hot-cold.ts). */
  hotCold: HotColdConfig;
  workerPollMs: number;
  /** CHAIN_REQUEST_BUDGET_MS: what one gateway request may spend on chain nodes and APIs, all its calls together. */
  chainRequestBudgetMs: number;
  /** How often the reference rates take a random-walk step; 0 keeps them fixed. */
  ratesWalkMs: number;
  /** Where prices come from, when one is current, the swap desk's limits and its hedge account (config-market.ts). */
  market: MarketConfig;
  /** Metrics, the shutdown drain and the hot-wallet floors (config-operating.ts). */
  operating: OperatingConfig;
  oidc: Readonly<{
    /** The issuer the gateway trusts; the embedded provider at `${publicUrl}/oidc` unless OIDC_ISSUER names another. */
    issuer: string;
    embedded: boolean;
    clientId: string;
    /** The resource (JWT `aud`) of access tokens for the gateway. */
    audience: string;
    accessTokenTtl: number;
    idTokenTtl: number;
    refreshTokenTtl: number;
  }>;
  smtpUrl: string | undefined;
  mailFrom: string;
  /** Which hops in front are our proxies: the client is the right-most hop that is not one (client-address.ts). */
  trustProxy: TrustProxy;
  /** Requests a minute per client address on the public endpoints that write (buy quotes and orders); 0 is off. */
  publicRateLimit: number;
  /** Requests an hour per client address on each of sign-up, password reset and the code mails; 0 is off. */
  authRateLimit: number;
  /** Mails an hour to one address, of every kind together; 0 is off. */
  mailRateLimit: number;
  /**
   * Swaps (SPEC §5): the spread in basis points taken in the destination currency, limits per source or pair, and how
   * far the market may move against the desk before a quote or order is refused as expired.
   */
  swap: Readonly<{ spreadBps: number; limits: Readonly<Record<string, { min: string; max: string }>>; maxSlippageBps: number }>;
  /** The payout bank of sells: `sandbox` is the embedded one under /sandbox/payout (never in production); `off` turns selling off. */
  payout: Readonly<{ provider: 'sandbox' | 'off'; webhookSecret: string | undefined; sandboxDelayMs: number; binTable: string | undefined }>;
  /** Sell limits in RUB (decimal strings), the margin under the market rate, how long a quoted rate holds and how far it may fall meanwhile. */
  sell: Readonly<{ minRub: string; maxRub: string; spreadBps: number; rateTtlS: number; maxSlippageBps: number }>;
  /** The mini app, its sign-in and the bot (config-telegram.ts). */
  telegram: TelegramConfig;
  /** Withdrawal fees per currency and blocked addresses (config-withdrawals.ts). */
  withdrawals: WithdrawalConfig;
  /** Whether the buy/sell screen's sell entry is on (SPEC §1: off by default). */
  sellEnabled: boolean;
  /** Buying crypto with a card (config-buy.ts). */
  buy: BuyConfig;
  /** The analytics SDK's source and the embedded data plane (config-analytics.ts). */
  analytics: AnalyticsConfig;
}>;

/** Reads the environment once; an empty variable counts as unset. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, version = '0.0.0'): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? 'environment');
    const shown = present[name] === undefined ? '' : ` (got ${JSON.stringify(redact(name, present[name]))})`;
    throw new ConfigError(`${name} is invalid${shown}: ${issue?.message ?? 'unknown problem'}`);
  }
  const e = parsed.data;
  const appEnv = e.APP_ENV ?? (e.NODE_ENV === 'production' ? 'production' : 'development');
  const production = appEnv === 'production';
  // Production never runs on a stand-in: what has no real adapter is off there, and asking for a stand-in is a mistake.
  const chainsMode = standIn('CHAINS', e.CHAINS, 'devnet', production);
  const hotCold = hotColdConfig(e, production);
  const operating = operatingConfig(e, e.PORT);
  const payoutProvider = standIn('PAYOUT_PROVIDER', e.PAYOUT_PROVIDER, 'sandbox', production);
  const cardProvider = standIn('CARD_PROVIDER', e.CARD_PROVIDER, 'sandbox', production);
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  const embeddedIssuer = `${publicUrl}/oidc`;
  const issuer = (e.OIDC_ISSUER ?? embeddedIssuer).replace(/\/+$/, '');
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    publicUrl,
    databaseUrl: e.DATABASE_URL,
    dataDir: resolve(e.DATA_DIR),
    logLevel: e.LOG_LEVEL,
    supportEmail: e.SUPPORT_EMAIL,
    supportTelegram: e.SUPPORT_TELEGRAM ? `https://t.me/${e.SUPPORT_TELEGRAM.replace(/^(?:@|https:\/\/t\.me\/)/, '')}` : undefined,
    workers: e.WORKERS === 'on',
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    version,
    appEnv,
    production,
    walletSeed: e.WALLET_SEED,
    walletSeedFile: e.WALLET_SEED_FILE === undefined ? undefined : resolve(e.WALLET_SEED_FILE),
    walletSeedPassphraseFd: e.WALLET_SEED_PASSPHRASE_FD,
    walletSeedCommand: e.WALLET_SEED_COMMAND,
    signer: Object.freeze({ mode: signerMode(e.SIGNER, production), socket: e.SIGNER_SOCKET, token: e.SIGNER_TOKEN, dailyMax: signerDailyMax(e.SIGNER_DAILY_MAX) }),
    secretsKey: e.SECRETS_KEY,
    secretsKeyPrevious: e.SECRETS_KEY_PREVIOUS,
    chains: chainsConfig(e, chainsMode),
    hotCold,
    workerPollMs: e.WORKER_POLL_MS,
    chainRequestBudgetMs: e.CHAIN_REQUEST_BUDGET_MS,
    ratesWalkMs: e.RATES_WALK_MS,
    market: marketConfig(e, production),
    // HOT_WALLET_MIN's floors join HOT_WALLET_MINIMUM's for the HotWalletLow alert.
    operating: Object.freeze({ ...operating, hotWalletMinimum: alertFloors(operating.hotWalletMinimum, hotCold) }),
    oidc: Object.freeze({
      issuer,
      embedded: issuer === embeddedIssuer,
      clientId: e.OIDC_CLIENT_ID,
      audience: (e.OIDC_AUDIENCE ?? `${publicUrl}/api`).replace(/\/+$/, ''),
      accessTokenTtl: e.OIDC_ACCESS_TOKEN_TTL,
      idTokenTtl: e.OIDC_ID_TOKEN_TTL,
      refreshTokenTtl: e.OIDC_REFRESH_TOKEN_TTL,
    }),
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM ?? `Wallet <no-reply@${new URL(publicUrl).hostname}>`,
    trustProxy: e.TRUST_PROXY,
    publicRateLimit: e.PUBLIC_RATE_LIMIT,
    authRateLimit: e.AUTH_RATE_LIMIT,
    mailRateLimit: e.MAIL_RATE_LIMIT,
    swap: Object.freeze({ spreadBps: e.SWAP_SPREAD_BPS, limits: Object.freeze(e.SWAP_LIMITS ?? {}), maxSlippageBps: e.SWAP_MAX_SLIPPAGE_BPS }),
    payout: Object.freeze({ provider: payoutProvider, webhookSecret: e.PAYOUT_WEBHOOK_SECRET, sandboxDelayMs: e.PAYOUT_SANDBOX_DELAY_MS, binTable: e.PAYOUT_BIN_TABLE }),
    sell: Object.freeze({ minRub: e.SELL_MIN_RUB, maxRub: e.SELL_MAX_RUB, spreadBps: e.SELL_SPREAD_BPS, rateTtlS: e.SELL_RATE_TTL_S, maxSlippageBps: e.SELL_MAX_SLIPPAGE_BPS }),
    telegram: telegramConfig(e, { publicUrl, production }),
    withdrawals: withdrawalConfig(e),
    sellEnabled: e.SELL_ENABLED === 'on',
    buy: buyConfig(e, cardProvider),
    analytics: analyticsConfig(e, { publicUrl }),
  });
}

/**
 * A third party's setting: unset is the embedded stand-in outside production and `off` in production, where the
 * stand-in is refused (a simulated chain or a test card would move real balances).
 */
function standIn<S extends string>(name: string, value: S | 'off' | undefined, stub: S, production: boolean): S | 'off' {
  if (!production) return value ?? stub;
  if (value === stub) throw new ConfigError(`${name}=${stub} is a development stand-in and cannot run in production: configure a real one or set ${name}=off`);
  return 'off';
}

/** The signer runs in the command outside production unless told otherwise; in production always apart. */
function signerMode(value: 'embedded' | 'external' | undefined, production: boolean): 'embedded' | 'external' {
  if (production && value === 'embedded') throw new ConfigError('SIGNER=embedded keeps the seed beside the gateway: production runs the signer apart (npm run signer, SIGNER=external)');
  return value ?? (production ? 'external' : 'embedded');
}

function redact(name: string, value: string | undefined): string | undefined {
  if ((name === 'WALLET_SEED' || name === 'WALLET_SEED_COMMAND' || name === 'SIGNER_TOKEN' || name === 'SECRETS_KEY' || name === 'SECRETS_KEY_PREVIOUS' || name === 'PAYOUT_WEBHOOK_SECRET' || name === 'CARD_WEBHOOK_SECRET' || name.startsWith('HEDGE_API_')) && value !== undefined) return '***';
  if ((name === 'MOONPAY_SECRET_KEY' || name === 'MOONPAY_WEBHOOK_KEY') && value !== undefined) return '***';
  if ((name === 'TELEGRAM_BOT_TOKEN' || name === 'ANALYTICS_WRITE_KEY' || name === 'TELEGRAM_WEBHOOK_SECRET' || name.endsWith('_API_KEY')) && value !== undefined) return '***';
  if (value === undefined || (name !== 'DATABASE_URL' && name !== 'SMTP_URL' && !name.endsWith('_RPC_URL'))) return value;
  try {
    const url = new URL(value);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return value;
  }
}
