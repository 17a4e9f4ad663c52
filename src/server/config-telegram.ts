import { z } from 'zod';
import { DEFAULT_INIT_DATA_MAX_AGE_S, TELEGRAM_PUBLIC_KEYS } from '../lib/telegram.ts';
import { ConfigError } from './config-error.ts';

/** The Telegram part of the configuration (README, Configuration); read by loadConfig with the rest. */
export type TelegramConfig = Readonly<{
  /** The bot's token; undefined means the development mode (outside production) or no Telegram at all. */
  botToken: string | undefined;
  /** No bot token outside production: a generated development token signs and checks init data. */
  devMode: boolean;
  /** Whether the mini app and the bot are on at all: a real token, or the development mode. */
  enabled: boolean;
  botUsername: string;
  /** Hex Ed25519 key the init data's third-party `signature` is checked against. */
  publicKey: string;
  requireSignature: boolean;
  initDataMaxAgeS: number;
  /** Where the bot's calls to the Bot API go: Telegram, or the local stand-in under /sandbox/telegram. */
  apiRoot: string;
  /** The `X-Telegram-Bot-Api-Secret-Token` Telegram sends with each update; derived from the token when unset. */
  webhookSecret: string | undefined;
  setWebhook: boolean;
  /** The address the bot's 'open wallet' button opens. */
  miniAppUrl: string;
}>;

export const TELEGRAM_SANDBOX_PATH = '/sandbox/telegram';
export const DEV_BOT_USERNAME = 'wallet_dev_bot';

export const telegramSchema = {
  TELEGRAM_BOT_TOKEN: z
    .string()
    .regex(/^\d{1,20}:[A-Za-z0-9_-]{20,100}$/, 'must be a bot token from @BotFather, like 123456:ABC-DEF…')
    .optional(),
  TELEGRAM_BOT_USERNAME: z
    .string()
    .regex(/^@?[A-Za-z][A-Za-z0-9_]{3,31}$/, "must be the bot's username, like wallet_bot")
    .optional(),
  TELEGRAM_PUBLIC_KEY: z
    .string()
    .regex(/^(?:production|test|[0-9a-fA-F]{64})$/, 'must be production, test or a 64-digit hex Ed25519 public key')
    .default('production'),
  TELEGRAM_REQUIRE_SIGNATURE: z.enum(['on', 'off']).default('off'),
  TELEGRAM_INIT_DATA_MAX_AGE: z.coerce.number().int().min(10).max(30 * 86_400).default(DEFAULT_INIT_DATA_MAX_AGE_S),
  TELEGRAM_API_ROOT: z.union([z.literal('sandbox'), z.url({ protocol: /^https?$/ })], { error: 'must be an http(s) URL or sandbox' }).optional(),
  TELEGRAM_WEBHOOK_SECRET: z
    .string()
    .regex(/^[A-Za-z0-9_-]{16,256}$/, 'must be 16 to 256 of A-Z, a-z, 0-9, _ and -')
    .optional(),
  TELEGRAM_SET_WEBHOOK: z.enum(['on', 'off']).default('off'),
  TELEGRAM_MINI_APP_URL: z.url({ protocol: /^https?$/ }).optional(),
};

type TelegramEnv = z.infer<z.ZodObject<typeof telegramSchema>>;

export function telegramConfig(e: TelegramEnv, context: { publicUrl: string; production: boolean }): TelegramConfig {
  const devMode = e.TELEGRAM_BOT_TOKEN === undefined && !context.production;
  // The deep links to the bot (account linking) need its name.
  if (e.TELEGRAM_BOT_TOKEN !== undefined && e.TELEGRAM_BOT_USERNAME === undefined) throw new ConfigError('TELEGRAM_BOT_USERNAME is required when TELEGRAM_BOT_TOKEN is set');
  const publicKey = e.TELEGRAM_PUBLIC_KEY === 'production' || e.TELEGRAM_PUBLIC_KEY === 'test' ? TELEGRAM_PUBLIC_KEYS[e.TELEGRAM_PUBLIC_KEY] : e.TELEGRAM_PUBLIC_KEY.toLowerCase();
  // `sandbox` (the development mode's default) is the local stand-in under /sandbox/telegram: nothing leaves the machine.
  const sandboxRoot = `${context.publicUrl}${TELEGRAM_SANDBOX_PATH}`;
  const apiRoot = (e.TELEGRAM_API_ROOT === 'sandbox' || (e.TELEGRAM_API_ROOT === undefined && devMode) ? sandboxRoot : (e.TELEGRAM_API_ROOT ?? 'https://api.telegram.org')).replace(/\/+$/, '');
  // Production has no stand-ins: the bot must talk to the real Bot API (or a real mirror of it).
  if (context.production && apiRoot === sandboxRoot) throw new ConfigError('TELEGRAM_API_ROOT=sandbox is a development stand-in and cannot run in production');
  return Object.freeze({
    botToken: e.TELEGRAM_BOT_TOKEN,
    devMode,
    enabled: devMode || e.TELEGRAM_BOT_TOKEN !== undefined,
    botUsername: (e.TELEGRAM_BOT_USERNAME ?? DEV_BOT_USERNAME).replace(/^@/, ''),
    publicKey,
    requireSignature: e.TELEGRAM_REQUIRE_SIGNATURE === 'on',
    initDataMaxAgeS: e.TELEGRAM_INIT_DATA_MAX_AGE,
    apiRoot,
    webhookSecret: e.TELEGRAM_WEBHOOK_SECRET,
    setWebhook: e.TELEGRAM_SET_WEBHOOK === 'on',
    miniAppUrl: e.TELEGRAM_MINI_APP_URL ?? `${context.publicUrl}/tg`,
  });
}
