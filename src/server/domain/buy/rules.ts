/**
 * The rules of buying that need nothing but numbers: the fiat amount's precision, the coins a fiat amount buys at a
 * rate (and back), the fee on a market price, a method's limits, and the return address a provider may send to.
 */
import { divideUnits, parseDecimal } from '../../../lib/amount.ts';
import { PRICE_SCALE, type PriceTable } from '../../adapters/rates/port.ts';
import { BuyError } from './errors.ts';
import { PriceUnavailableError } from '../rates.ts';
import { unitsOf, type Units } from '../../../lib/money.ts';

export const FIAT_DECIMALS = 2;
const FIAT_SCALE = 10n ** BigInt(FIAT_DECIMALS);
/** Coins are bought in steps of at most 8 decimals, whatever the coin's own precision. */
const MAX_BUY_DECIMALS = 8;

/** SPEC §2 /buy/get: only active crypto currencies whose name contains this are sold. */
export const BUY_CURRENCY_MARK = 'USDC';
/** The payment methods the provider offers; each has its own limits (BUY_LIMITS). */
export const BUY_METHODS: readonly { code: string; name: string }[] = [{ code: 'CARD', name: 'Bank card' }];
/** A method's limits when BUY_LIMITS names none, in USD, converted to the fiat at the reference rate. */
export const DEFAULT_LIMITS_USD = { min: '10', max: '5000' } as const;
/** SPEC §3 fiat availability: the region (geoId) each fiat currency is sold in. */
export const GEO_OF_FIAT: Readonly<Record<string, string>> = { USD: 'US', EUR: 'EU', KZT: 'KZ', UAH: 'UA', AZN: 'AZ', CAD: 'CA' };

/**
 * How far an on-ramp's delivered coins may be from its estimate to still be taken as that purchase while it has
 * reported neither hash nor amount (its price moves between quote and payment; its network fee too).
 */
export const ON_RAMP_AMOUNT_TOLERANCE_BPS = 500;

export const NOT_PAID_IN_TIME = 'The order was not paid in time';
export const CANCELLED_BY_USER = 'The payment was cancelled';
export const BUYING_OFF_MESSAGE = 'Buying with a card is not available on this wallet.';

/** The desk's settings (README, Configuration: BUY_*); money in decimal strings, margins in basis points. */
export type BuySettings = Readonly<{
  /** The fiat currencies a purchase can be paid in, in the order the chooser lists them. */
  fiatCurrencies: readonly string[];
  /** The provider's and our margin on top of the market price, in basis points. */
  feeBps: number;
  /** Limits per payment method (CARD) or method and fiat (CARD/EUR); a method's own limits are in USD and converted. */
  limits: Readonly<Record<string, { min: string; max: string }>>;
  /** How long a quoted rate holds (SPEC §9: the review's 300 s). */
  rateTtlS: number;
  /** How long an order may wait to be paid before it expires. */
  orderTtlS: number;
  /** How far the coin's price may have risen since the rate was fixed for an order and its confirmation to take it. */
  maxSlippageBps: number;
  /** The on-ramp's payment methods on offer (MOONPAY_PAYMENT_METHODS), in the order /buy/method lists them. */
  paymentMethods?: readonly string[];
}>;

const stepOf = (decimals: number): bigint => (decimals > MAX_BUY_DECIMALS ? 10n ** BigInt(decimals - MAX_BUY_DECIMALS) : 1n);

/** Coins (atomic units, rounded down to at most 8 decimals) that `fiatCents` buy at `rate` (fiat per coin, 8 decimals). */
export function cryptoFor(fiatCents: bigint, rate: bigint, decimals: number): Units {
  if (rate <= 0n) return unitsOf(0n);
  const units = (fiatCents * 10n ** BigInt(decimals) * PRICE_SCALE) / (rate * FIAT_SCALE);
  const step = stepOf(decimals);
  return unitsOf((units / step) * step);
}

/** The fiat cents (rounded up) that buy at least `units` coins at `rate`. */
export function fiatFor(units: Units, rate: bigint, decimals: number): Units {
  const denominator = 10n ** BigInt(decimals) * PRICE_SCALE;
  return unitsOf(divideUnits(units * rate * FIAT_SCALE, denominator, 'up'));
}

/** SPEC §5 limit message: 'Min {min} - max {max} {currency}'. */
export function limitMessage(min: string, max: string, currency: string): string {
  return `Min ${min} - max ${max} ${currency}`;
}

/** Fiat per coin, 8 decimals, the fee included (rounded up: the rate never favours the buyer past the fee). */
export function withFee(price: bigint, feeBps: number): bigint {
  return divideUnits(price * BigInt(10_000 + feeBps), 10_000n, 'up');
}

/** A fiat amount typed by the user, in cents; anything else is refused with the field's name. */
export function parseFiat(text: string, field = 'fiatAmount'): Units {
  try {
    const cents = parseDecimal(text, FIAT_DECIMALS);
    if (cents < 0n) throw new Error('negative');
    return unitsOf(cents);
  } catch (error) {
    throw new BuyError('VALIDATION', `${field}: an amount with at most ${FIAT_DECIMALS} decimals`, { cause: error });
  }
}

/** A crypto amount typed by the user, in the coin's atomic units (at most 8 decimals typed). */
export function parseCrypto(text: string, decimals: number): Units {
  const typed = Math.min(decimals, MAX_BUY_DECIMALS);
  try {
    const units = parseDecimal(text, typed);
    if (units < 0n) throw new Error('negative');
    return unitsOf(units * stepOf(decimals));
  } catch (error) {
    throw new BuyError('VALIDATION', `cryptoAmount: an amount with at most ${typed} decimals`, { cause: error });
  }
}

/** A provider's amount in cents, or undefined when it is not one (then it matches no order). */
export function safeCents(amount: string): bigint | undefined {
  try {
    return parseDecimal(amount, FIAT_DECIMALS);
  } catch {
    return undefined;
  }
}

/** A method's limits in cents of `fiat`: BUY_LIMITS by method and fiat, else by method (in USD), else the default. */
export function limitsOf(limits: BuySettings['limits'], code: string, fiat: string, table: PriceTable): { min: bigint; max: bigint } {
  const own = limits[`${code}/${fiat}`];
  if (own) return { min: parseDecimal(own.min, FIAT_DECIMALS), max: parseDecimal(own.max, FIAT_DECIMALS) };
  const usd = limits[code] ?? DEFAULT_LIMITS_USD;
  const perUsd = table.fiatPerUsd[fiat];
  // Limits in USD need the fiat's rate: without one there is no quote to limit (rateOf refuses it first).
  if (perUsd === undefined) throw new PriceUnavailableError('PRICE_UNAVAILABLE', `There is no current rate for ${fiat}`);
  // Whole units of the fiat: the minimum rounded up, the maximum down.
  const min = divideUnits(parseDecimal(usd.min, FIAT_DECIMALS) * perUsd, PRICE_SCALE * FIAT_SCALE, 'up');
  const max = (parseDecimal(usd.max, FIAT_DECIMALS) * perUsd) / (PRICE_SCALE * FIAT_SCALE);
  return { min: min * FIAT_SCALE, max: max * FIAT_SCALE };
}

/** Only back into this wallet: the provider's page must not become an open redirect. */
export function checkReturnUrl(text: string, origin: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch (error) {
    throw new BuyError('B2C_RETURN_URL', 'returnUrl must be an absolute address of this wallet', { cause: error });
  }
  if (url.origin !== origin) throw new BuyError('B2C_RETURN_URL', `returnUrl must be an address on ${origin}`);
  return url.toString();
}
