import { z } from 'zod';
import { MAX_SLIPPAGE_BPS } from '../lib/slippage.ts';
import { ConfigError } from './config-error.ts';
import { decimalLimits, jsonSetting } from './config-schema.ts';
import type { BuySettings } from './domain/buy/rules.ts';

/** MoonPay's keys and where it is reached (README, Configuration: MOONPAY_*). */
export type MoonPayConfig = Readonly<{
  apiKey: string;
  secretKey: string;
  webhookKey: string;
  /** Unset: MoonPay's own API and widget (the widget of its sandbox for test keys); tests point them at a stand-in. */
  apiUrl: string | undefined;
  widgetUrl: string | undefined;
  timeoutMs: number;
}>;

/** Buying crypto with a card (README, Configuration), read by loadConfig with the rest: the provider's settings and the desk's. */
export type BuyConfig = BuySettings & Readonly<{
  /**
   * The card payment provider: `sandbox` is the embedded hosted page under /sandbox/card (never in production);
   * `moonpay` the MoonPay on-ramp, which sends the coins on chain itself; `off` turns buying off.
   */
  provider: 'sandbox' | 'moonpay' | 'off';
  /** Set when the provider is MoonPay. */
  moonpay: MoonPayConfig | undefined;
  /** The secret the provider signs its webhooks with; unset with the sandbox means one generated once into the database. */
  webhookSecret: string | undefined;
  /** The merchant name the provider's payment page shows. */
  merchantName: string;
  /** How long the sandbox provider takes to report a payment's outcome by webhook. */
  sandboxDelayMs: number;
}>;

export const BUY_FIAT_OPTIONS = ['USD', 'EUR', 'KZT', 'UAH', 'AZN', 'CAD'] as const;

const amount = z.string().regex(/^\d{1,12}(?:\.\d{1,2})?$/, 'an amount with at most 2 decimals');

export const buySchema = {
  CARD_PROVIDER: z.enum(['sandbox', 'moonpay', 'off']).optional(),
  MOONPAY_API_KEY: z.string().trim().regex(/^pk_(?:live|test)_\w+$/, 'a publishable key, pk_live_… or pk_test_…').optional(),
  MOONPAY_SECRET_KEY: z.string().trim().regex(/^sk_(?:live|test)_\w+$/, 'a secret key, sk_live_… or sk_test_…').optional(),
  MOONPAY_WEBHOOK_KEY: z.string().trim().min(8).max(200).optional(),
  MOONPAY_API_URL: z.url({ protocol: /^https?$/ }).optional(),
  MOONPAY_WIDGET_URL: z.url({ protocol: /^https?$/ }).optional(),
  MOONPAY_PAYMENT_METHODS: z.string().regex(/^[a-z_]{2,40}(?:,[a-z_]{2,40}){0,7}$/, 'a comma-separated list of MoonPay payment methods (credit_debit_card,apple_pay)').default('credit_debit_card'),
  MOONPAY_TIMEOUT_MS: z.coerce.number().int().min(500).max(60_000).default(8000),
  CARD_WEBHOOK_SECRET: z.string().min(16).max(200).optional(),
  CARD_MERCHANT_NAME: z.string().trim().min(1).max(80).default('Wallet'),
  CARD_SANDBOX_DELAY_MS: z.coerce.number().int().min(0).max(3_600_000).default(1000),
  BUY_FIAT_CURRENCIES: z
    .string()
    .regex(new RegExp(`^(?:${BUY_FIAT_OPTIONS.join('|')})(?:,(?:${BUY_FIAT_OPTIONS.join('|')}))*$`), `must be a comma-separated list of ${BUY_FIAT_OPTIONS.join(', ')}`)
    .default('USD,EUR'),
  BUY_FEE_BPS: z.coerce.number().int().min(0).max(5000).default(150),
  BUY_LIMITS: jsonSetting(decimalLimits(z.string().regex(/^[A-Z0-9_]+(?:\/[A-Z]{3})?$/, 'keys are a payment method (CARD) or a method and fiat (CARD/EUR)'), amount)).optional(),
  BUY_RATE_TTL_S: z.coerce.number().int().min(10).max(3600).default(300),
  BUY_ORDER_TTL_S: z.coerce.number().int().min(60).max(7 * 86_400).default(1800),
  BUY_MAX_SLIPPAGE_BPS: z.coerce.number().int().min(0).max(MAX_SLIPPAGE_BPS).default(100),
};

type BuyEnv = z.infer<z.ZodObject<typeof buySchema>>;

/**
 * `provider` is CARD_PROVIDER as loadConfig resolved it for the environment (unset: sandbox, or off in production,
 * where a stand-in is refused); MoonPay is a real provider, so it stays chosen in production too.
 */
export function buyConfig(e: BuyEnv, provider: BuyConfig['provider']): BuyConfig {
  const chosen = e.CARD_PROVIDER === 'moonpay' ? 'moonpay' : provider;
  return Object.freeze({
    provider: chosen,
    moonpay: chosen === 'moonpay' ? moonPayConfig(e) : undefined,
    paymentMethods: Object.freeze([...new Set(e.MOONPAY_PAYMENT_METHODS.split(','))]),
    webhookSecret: e.CARD_WEBHOOK_SECRET,
    merchantName: e.CARD_MERCHANT_NAME,
    sandboxDelayMs: e.CARD_SANDBOX_DELAY_MS,
    fiatCurrencies: Object.freeze([...new Set(e.BUY_FIAT_CURRENCIES.split(','))]),
    feeBps: e.BUY_FEE_BPS,
    limits: Object.freeze(e.BUY_LIMITS ?? {}),
    rateTtlS: e.BUY_RATE_TTL_S,
    orderTtlS: e.BUY_ORDER_TTL_S,
    maxSlippageBps: e.BUY_MAX_SLIPPAGE_BPS,
  });
}

function moonPayConfig(e: BuyEnv): MoonPayConfig {
  const missing = (['MOONPAY_API_KEY', 'MOONPAY_SECRET_KEY', 'MOONPAY_WEBHOOK_KEY'] as const).filter((name) => e[name] === undefined);
  if (missing.length > 0) {
    throw new ConfigError(`CARD_PROVIDER=moonpay needs ${missing.join(', ')}: the keys of MoonPay's dashboard, Developers page (README, "Buying with MoonPay")`);
  }
  const live = (key: string | undefined) => key?.includes('_live_') === true;
  if (live(e.MOONPAY_API_KEY) !== live(e.MOONPAY_SECRET_KEY)) throw new ConfigError('MOONPAY_API_KEY and MOONPAY_SECRET_KEY must both be live keys or both test keys');
  return Object.freeze({
    apiKey: e.MOONPAY_API_KEY ?? '',
    secretKey: e.MOONPAY_SECRET_KEY ?? '',
    webhookKey: e.MOONPAY_WEBHOOK_KEY ?? '',
    apiUrl: e.MOONPAY_API_URL,
    widgetUrl: e.MOONPAY_WIDGET_URL,
    timeoutMs: e.MOONPAY_TIMEOUT_MS,
  });
}

export const DEFAULT_BUY_CONFIG: BuyConfig = buyConfig(z.object(buySchema).parse({}), 'sandbox');
