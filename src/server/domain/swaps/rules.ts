/**
 * The rules of a swap (SPEC §3 swap quote, limits; §5 swap rules): a quote fixes a rate from the rates port less a
 * spread; the user pays `source` and gets `destination`, the spread (`fee`) is taken in the destination currency.
 * The two sides' units carry distinct brands (`SourceUnits`, `DestinationUnits`), so adding one to the other, or
 * passing one where the other belongs, does not compile.
 * A quote is no free option (issue 14 item 11): it may be swapped only while the market has not moved against the
 * desk by more than SWAP_MAX_SLIPPAGE_BPS since it was taken.
 */
import { AmountError, divideUnits, formatUnits, parseDecimal, pow10 } from '../../../lib/amount.ts';
import { addUnits, parseMoney, subtractUnits, unitsOf, type Units } from '../../../lib/money.ts';
import type { CoinMeta } from '../../../lib/currencies.ts';
import { PRICE_DECIMALS } from '../../adapters/rates/port.ts';
import { DomainError } from '../errors.ts';
import { honoursFixedRate } from '../slippage.ts';
import type { SwapPair } from '../../../lib/wire/swaps.ts';
export type { SwapPair };

/** SPEC §9: swap review validity. Fixed by the product, not configuration. */
export const SWAP_QUOTE_TTL_SECONDS = 300;

/** At most this many digits after the point in any amount a user sees or types (SPEC §5). */
const SHOWN_DECIMALS = 8;

/**
 * Default limits per source asset (by base currency, so USDT_TRX and USDT_ETH share one), in source units:
 * about 10 USD to 100 000 USD at the reference prices. SWAP_LIMITS overrides them per source or per pair.
 */
export const DEFAULT_SWAP_LIMITS: Readonly<Record<string, { min: string; max: string }>> = {
  BTC: { min: '0.0002', max: '1.5' },
  ETH: { min: '0.004', max: '30' },
  USDT: { min: '10', max: '100000' },
  USDC: { min: '10', max: '100000' },
  TRX: { min: '100', max: '800000' },
  LTC: { min: '0.15', max: '1300' },
  DOGE: { min: '70', max: '650000' },
  TON: { min: '2', max: '18000' },
};

/** The wire exceptionCodes of a refused swap (http/errors.ts maps them to statuses). */
export type SwapCode =
  | 'SWAP_UNSUPPORTED_PAIR'
  | 'SWAP_AMOUNT_TOO_SMALL'
  | 'SWAP_MIN_LIMIT'
  | 'SWAP_MAX_LIMIT'
  | 'SWAP_NOT_ENOUGH'
  | 'SWAP_QUOTE_NOT_FOUND'
  | 'SWAP_QUOTE_EXPIRED'
  | 'SWAP_QUOTE_USED'
  | 'SWAP_QUOTE_MISMATCH'
  | 'SWAP_ORDER_NOT_FOUND'
  | 'SWAP_ORDER_EXPIRED'
  | 'SWAP_ORDER_CANCELLED'
  | 'SWAP_ORDER_CLOSED';

export class SwapError extends DomainError<SwapCode> {}

/**
 * Units of what the user pays (the source currency) and of what they get (the destination currency, the spread's
 * too). Both currencies are known only at run time, so the brands name the side: the two do not mix.
 */
export type SourceUnits = Units<'source'>;
export type DestinationUnits = Units<'destination'>;

export type SwapLimit = { minLimit: SourceUnits; maxLimit: SourceUnits };

/** One computed quote in atomic units: the user pays `source`, gets `destination`; `fee` (destination units) is the spread. */
export type QuoteAmounts = { source: SourceUnits; destination: DestinationUnits; fee: DestinationUnits; rate: string };

export type Side = { price: bigint; decimals: number };

const ceilDiv = (a: bigint, b: bigint) => divideUnits(a, b, 'up');
/** Places an amount of a currency may have on screen: its decimals, at most 8. */
const placesOf = (decimals: number) => Math.min(decimals, SHOWN_DECIMALS);
const floorTo = <S extends string>(units: Units<S>, decimals: number): Units<S> => {
  const step = pow10(decimals - placesOf(decimals));
  return unitsOf((units / step) * step);
};
const ceilTo = <S extends string>(units: Units<S>, decimals: number): Units<S> => {
  const step = pow10(decimals - placesOf(decimals));
  return unitsOf(ceilDiv(units, step) * step);
};

/** What `source` units buy before the spread, in destination units, rounded down (the custodian never pays more). */
function grossOf(source: SourceUnits, from: Side, to: Side): DestinationUnits {
  return unitsOf((source * from.price * pow10(to.decimals)) / (to.price * pow10(from.decimals)));
}

/** Destination units per one source unit, to 8 decimals, rounded down. */
function rateOf(source: SourceUnits, destination: DestinationUnits, from: Side, to: Side): string {
  const scaled = (destination * pow10(from.decimals) * pow10(PRICE_DECIMALS)) / (source * pow10(to.decimals));
  return formatUnits(scaled, PRICE_DECIMALS);
}

/** The user typed the source amount: the destination is what it buys less the spread, rounded down to 8 places. */
export function quoteBySource(source: SourceUnits, from: Side, to: Side, spreadBps: number): QuoteAmounts {
  const gross = grossOf(source, from, to);
  const destination = floorTo(unitsOf<'destination'>((gross * BigInt(10_000 - spreadBps)) / 10_000n), to.decimals);
  if (source <= 0n || destination <= 0n) throw new SwapError('SWAP_AMOUNT_TOO_SMALL', 'The amount is too small to swap');
  return { source, destination, fee: subtractUnits(gross, destination), rate: rateOf(source, destination, from, to) };
}

/** The user typed the destination amount: the source is what buys it and the spread, rounded up; they get exactly it. */
export function quoteByDestination(destination: DestinationUnits, from: Side, to: Side, spreadBps: number): QuoteAmounts {
  if (destination <= 0n) throw new SwapError('SWAP_AMOUNT_TOO_SMALL', 'The amount is too small to swap');
  const grossNeeded = ceilDiv(destination * 10_000n, BigInt(10_000 - spreadBps));
  const source = ceilTo(unitsOf<'source'>(ceilDiv(grossNeeded * to.price * pow10(from.decimals), from.price * pow10(to.decimals))), from.decimals);
  const gross = grossOf(source, from, to);
  return { source, destination, fee: subtractUnits(gross, destination), rate: rateOf(source, destination, from, to) };
}

/** An amount from the wire to units of a currency (of the side `S` of the swap): at most 8 decimals, above zero. */
export function amountUnits<S extends 'source' | 'destination'>(text: string, coin: CoinMeta): Units<S> {
  try {
    const { units } = parseMoney(coin.currency, text, { places: placesOf(coin.decimals) });
    if (units <= 0n) throw new SwapError('SWAP_AMOUNT_TOO_SMALL', 'The amount must be above 0');
    return unitsOf<S>(units);
  } catch (error) {
    if (error instanceof AmountError) throw new SwapError('SWAP_AMOUNT_TOO_SMALL', `${coin.currency} amounts have at most ${placesOf(coin.decimals)} decimals`, { cause: error });
    throw error;
  }
}

export type SwapSettings = {
  spreadBps: number;
  limits: Readonly<Record<string, { min: string; max: string }>>;
  maxSlippageBps: number;
  /** SWAP_INVENTORY_LIMITS: per currency, the lowest the desk's inventory may go (market/desk.ts). */
  inventoryLimits: Readonly<Record<string, string>>;
};

/**
 * Whether a quote (or the order that took it) may still be swapped at its amounts: what its source is worth now in
 * the destination, before the spread, against what it was worth when quoted (destination + spread). Without a
 * current price for either side it may not.
 */
export function quoteHolds(quoted: Omit<QuoteAmounts, 'rate'>, from: Side, to: Side, maxSlippageBps: number): boolean {
  if (from.price <= 0n || to.price <= 0n) return false;
  return honoursFixedRate(addUnits(quoted.destination, quoted.fee), grossOf(quoted.source, from, to), maxSlippageBps);
}

export const QUOTE_MOVED = 'The rate has moved since this quote: request a new one';
export const ORDER_MOVED = 'The rate of this order has moved: update the rate and try again';

/** The limits of a pair in source units: SWAP_LIMITS for the pair, else for the source, else the default of its asset. */
export function limitOf(settings: Pick<SwapSettings, 'limits'>, from: CoinMeta, to: CoinMeta): SwapLimit | undefined {
  const chosen =
    settings.limits[`${from.currency}/${to.currency}`] ?? settings.limits[from.currency] ?? settings.limits[from.baseCurrency] ?? DEFAULT_SWAP_LIMITS[from.baseCurrency];
  if (!chosen) return undefined;
  const toUnits = (value: string) => unitsOf<'source'>(parseDecimal(value, Math.max(from.decimals, 18)) / pow10(Math.max(from.decimals, 18) - from.decimals));
  return { minLimit: toUnits(chosen.min), maxLimit: toUnits(chosen.max) };
}
