import { z } from 'zod';
import { MAX_SLIPPAGE_BPS } from '../lib/slippage.ts';
import { decimalLimits, jsonSetting } from './config-schema.ts';
import type { BuySettings } from './domain/buy/rules.ts';

/** Buying crypto with a card (README, Configuration), read by loadConfig with the rest: the provider's settings and the desk's. */
export type BuyConfig = BuySettings & Readonly<{
  /** The card payment provider: `sandbox` is the embedded hosted page under /sandbox/card (never in production); `off` turns buying off. */
  provider: 'sandbox' | 'off';
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
  CARD_PROVIDER: z.enum(['sandbox', 'off']).optional(),
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

/** `provider` is CARD_PROVIDER as loadConfig resolved it for the environment (unset: sandbox, or off in production). */
export function buyConfig(e: BuyEnv, provider: BuyConfig['provider']): BuyConfig {
  return Object.freeze({
    provider,
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

export const DEFAULT_BUY_CONFIG: BuyConfig = buyConfig(z.object(buySchema).parse({}), 'sandbox');
