/**
 * The rules of selling that need nothing but numbers: the one fiat and bank, the limits, the desk's spread on the
 * market price, and the coins an amount of roubles takes at a fixed rate.
 */
import { divideUnits, formatUnits, parseDecimal, pow10 } from '../../../lib/amount.ts';
import { PRICE_DECIMALS } from '../../adapters/rates/port.ts';
import { SellError } from './errors.ts';

export const SELL_FIAT = 'RUB';
/** SPEC §5: only this bank's cards take RUB payouts. */
export const SELL_BANK_CODE = 'SBR';
export const FIAT_DECIMALS = 2;

export const ONLY_SBER_MESSAGE = "RUB payouts are available only to one specific domestic bank's cards. Please provide a different card.";
export const PAYOUTS_UNAVAILABLE_MESSAGE = 'Payouts are temporarily unavailable. Please try again later.';
export const SELLING_OFF_MESSAGE = 'Selling to a card is not available on this wallet.';

/** The desk's settings (README, Configuration: SELL_*); money in decimal strings, margins in basis points. */
export type SellSettings = { minRub: string; maxRub: string; spreadBps: number; rateTtlS: number; maxSlippageBps: number };
export const DEFAULT_SELL_SETTINGS: SellSettings = { minRub: '1000', maxRub: '300000', spreadBps: 150, rateTtlS: 300, maxSlippageBps: 100 };

export type KopeckLimits = { min: bigint; max: bigint };

export function limitsOf(settings: SellSettings): KopeckLimits {
  return { min: parseDecimal(settings.minRub, FIAT_DECIMALS), max: parseDecimal(settings.maxRub, FIAT_DECIMALS) };
}

export function checkFiat(fiat: string): void {
  if (fiat !== SELL_FIAT) throw new SellError('C2F_FIAT_UNSUPPORTED', `Payouts are made in ${SELL_FIAT} only`);
}

/** Fiat kopecks per one coin: the market price (8 decimals) less the spread, rounded down to the kopeck. */
export function spreadRate(price: bigint, spreadBps: number): bigint {
  return (price * BigInt(10_000 - spreadBps)) / 10_000n / 10n ** BigInt(PRICE_DECIMALS - FIAT_DECIMALS);
}

/** The roubles of an order in kopecks, within the limits. */
export function orderKopecks(fiatAmount: string, limits: KopeckLimits): bigint {
  let kopecks: bigint;
  try {
    kopecks = parseDecimal(fiatAmount, FIAT_DECIMALS);
  } catch (error) {
    throw new SellError('C2F_LIMIT', 'fiatAmount: a RUB amount has at most 2 decimals', { cause: error });
  }
  if (kopecks < limits.min || kopecks > limits.max) {
    throw new SellError('C2F_LIMIT', `The amount must be between ${formatUnits(limits.min, FIAT_DECIMALS)} and ${formatUnits(limits.max, FIAT_DECIMALS)} ${SELL_FIAT}`);
  }
  return kopecks;
}

/** The coins that buy this many kopecks at the fixed rate, rounded up to the coin's smallest unit. */
export function coinsFor(kopecks: bigint, rateKopecks: bigint, decimals: number): bigint {
  const amount = divideUnits(kopecks * pow10(decimals), rateKopecks, 'up');
  if (amount <= 0n) throw new SellError('C2F_LIMIT', 'The amount is too small');
  return amount;
}
