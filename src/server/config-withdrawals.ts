import { z } from 'zod';
import { parseDecimal } from '../lib/amount.ts';
import { PRICE_DECIMALS } from './adapters/rates/port.ts';
import { jsonSetting } from './config-schema.ts';

/** The withdrawal part of the configuration (README, Configuration); read by loadConfig with the rest. */
export type WithdrawalConfig = Readonly<{
  /** Per currency, the fee a withdrawal to an outside address pays, a decimal string in that currency. */
  fees: Readonly<Record<string, string>>;
  /** Addresses no withdrawal may go to (sanctions, known fraud): check-address answers BLOCKED. */
  blockedAddresses: readonly string[];
  /** WITHDRAWAL_FEE_MARGIN_BPS: what an on-chain withdrawal pays above the network's current estimate (`fees` stay the floor). */
  feeMarginBps: number;
  /**
   * Withdrawal limits and review in USD scaled by PRICE_SCALE (domain/withdrawals/limits.ts); 0 is off.
   * WITHDRAWAL_DAILY_LIMIT_USD, WITHDRAWAL_REVIEW_ABOVE_USD, WITHDRAWAL_REVIEW_NEW_ADDRESS_ABOVE_USD.
   */
  limits: Readonly<{ dailyUsd: bigint; reviewAboveUsd: bigint; reviewNewAddressAboveUsd: bigint }>;
}>;

/** Development defaults of the limits, in whole USD (README, Configuration): production sets its own. */
export const DEFAULT_WITHDRAWAL_LIMITS_USD = { daily: '50000', reviewAbove: '10000', reviewNewAddressAbove: '2000' } as const;

/** 20 %: room for the network's fee to rise between the quote and the mined transaction. */
export const DEFAULT_WITHDRAWAL_FEE_MARGIN_BPS = 2000;

/**
 * The least a withdrawal to an outside address costs, in its own currency: about what the network charges the hot
 * wallet, rounded up. Above it the fee follows the network's estimate plus WITHDRAWAL_FEE_MARGIN_BPS
 * (domain/withdrawals/fees.ts). A transfer to another user of this wallet is free.
 */
export const DEFAULT_WITHDRAWAL_FEES: Readonly<Record<string, string>> = {
  BTC: '0.0001',
  BTC_LNG: '0.000001',
  ETH: '0.001',
  USDT_ETH: '5',
  USDC_ETH: '5',
  TRX: '1',
  USDT_TRX: '1',
  LTC: '0.001',
  DOGE: '2',
  TON: '0.05',
};

const DECIMAL = /^\d{1,12}(?:\.\d{1,18})?$/;

/** A USD amount: whole dollars and cents at most; 0 turns the rule off (empty, as everywhere, means the default). */
const usdSetting = z
  .string()
  .trim()
  .regex(/^\d{1,12}(?:\.\d{1,2})?$/, 'must be a USD amount like 10000 or 2500.50 (0: off)')
  .optional();

export const withdrawalSchema = {
  WITHDRAWAL_FEES: jsonSetting(
    z.record(z.string().regex(/^[A-Z0-9_]+$/, 'keys are currency codes like BTC or USDT_TRX'), z.string().regex(DECIMAL, 'fees are decimal strings like "0.0002"')),
    'must be JSON like {"BTC":"0.0002","USDT_TRX":"1.5"}',
  ).optional(),
  WITHDRAWAL_BLOCKED_ADDRESSES: z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((a) => a.trim())
        .filter((a) => a !== ''),
    )
    .optional(),
  WITHDRAWAL_FEE_MARGIN_BPS: z.coerce.number().int().min(0).max(10_000).default(DEFAULT_WITHDRAWAL_FEE_MARGIN_BPS),
  WITHDRAWAL_DAILY_LIMIT_USD: usdSetting,
  WITHDRAWAL_REVIEW_ABOVE_USD: usdSetting,
  WITHDRAWAL_REVIEW_NEW_ADDRESS_ABOVE_USD: usdSetting,
};

type Parsed = {
  WITHDRAWAL_FEES?: Record<string, string> | undefined;
  WITHDRAWAL_BLOCKED_ADDRESSES?: string[] | undefined;
  WITHDRAWAL_FEE_MARGIN_BPS?: number | undefined;
  WITHDRAWAL_DAILY_LIMIT_USD?: string | undefined;
  WITHDRAWAL_REVIEW_ABOVE_USD?: string | undefined;
  WITHDRAWAL_REVIEW_NEW_ADDRESS_ABOVE_USD?: string | undefined;
};

const usd = (text: string) => parseDecimal(text, PRICE_DECIMALS);

export function withdrawalConfig(e: Parsed): WithdrawalConfig {
  return Object.freeze({
    fees: Object.freeze({ ...DEFAULT_WITHDRAWAL_FEES, ...e.WITHDRAWAL_FEES }),
    blockedAddresses: Object.freeze([...(e.WITHDRAWAL_BLOCKED_ADDRESSES ?? [])]),
    feeMarginBps: e.WITHDRAWAL_FEE_MARGIN_BPS ?? DEFAULT_WITHDRAWAL_FEE_MARGIN_BPS,
    limits: Object.freeze({
      dailyUsd: usd(e.WITHDRAWAL_DAILY_LIMIT_USD ?? DEFAULT_WITHDRAWAL_LIMITS_USD.daily),
      reviewAboveUsd: usd(e.WITHDRAWAL_REVIEW_ABOVE_USD ?? DEFAULT_WITHDRAWAL_LIMITS_USD.reviewAbove),
      reviewNewAddressAboveUsd: usd(e.WITHDRAWAL_REVIEW_NEW_ADDRESS_ABOVE_USD ?? DEFAULT_WITHDRAWAL_LIMITS_USD.reviewNewAddressAbove),
    }),
  });
}

export const DEFAULT_WITHDRAWAL_CONFIG: WithdrawalConfig = withdrawalConfig({});
