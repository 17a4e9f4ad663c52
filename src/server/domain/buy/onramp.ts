/**
 * The buy screens on an on-ramp's data (issue 32): which of our coins it sells (/buy/get), the fiats it takes for
 * the buyer's country (/buy/pay, its IP check), and per payment method its limits and an estimate from its buy
 * quote (/buy/method), stored under one fixedRateId as any quote. The provider fixes its price only when the buyer
 * pays on its page: the crypto amount is an estimate, and the quote says which fees are in it.
 */
import { randomUUID } from 'node:crypto';
import { formatUnits, pow10 } from '../../../lib/amount.ts';
import type { CoinMeta } from '../../../lib/currencies.ts';
import { OnRampRefusedError, OnRampUnavailableError, type OnRampProvider } from '../../adapters/onramp/port.ts';
import { PRICE_DECIMALS, PRICE_SCALE } from '../../adapters/rates/port.ts';
import type { BuyQuoteItem } from '../../db/schema/buy.ts';
import type { BuyQuote, FiatAvailability, PaymentMethodItem } from '../../../lib/wire/buy.ts';
import { checkAccount, checkFiat, coinOf, type BuyDeps } from './context.ts';
import { BuyError } from './errors.ts';
import { BUY_CURRENCY_MARK, FIAT_DECIMALS, GEO_OF_FIAT, parseCrypto, parseFiat } from './rules.ts';

/** The methods when MOONPAY_PAYMENT_METHODS names none: a bank card. */
const DEFAULT_METHODS = ['credit_debit_card'] as const;

/** MoonPay's method names as the gateway sends them (SPEC §3 paymentMethodName); the browser shows its own words. */
const METHOD_NAMES: Readonly<Record<string, string>> = {
  credit_debit_card: 'Bank card',
  apple_pay: 'Apple Pay',
  google_pay: 'Google Pay',
  paypal: 'PayPal',
  sepa_bank_transfer: 'SEPA bank transfer',
  gbp_bank_transfer: 'UK bank transfer',
  ach_bank_transfer: 'ACH bank transfer',
  venmo: 'Venmo',
  revolut_pay: 'Revolut Pay',
};

/** The euro area's countries: a buyer there sees EUR first. */
const EURO_COUNTRIES = new Set(['AT', 'BE', 'HR', 'CY', 'EE', 'FI', 'FR', 'DE', 'GR', 'IE', 'IT', 'LV', 'LT', 'LU', 'MT', 'NL', 'PT', 'SK', 'SI', 'ES']);
/** A country the IP check could not place: geoId of the fiat options then. */
export const UNKNOWN_COUNTRY = 'XX';

/** The provider's failure as the buyer's refusal: down (503, try later) or refused with its own words (400). */
export async function fromOnRamp<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof OnRampRefusedError) throw new BuyError('B2C_PROVIDER_REFUSED', error.message, { cause: error });
    if (error instanceof OnRampUnavailableError) throw new BuyError('B2C_PROVIDER_DOWN', 'The card provider is not answering right now. Please try again later.', { cause: error });
    throw error;
  }
}

export type OnRampCoin = { coin: CoinMeta; code: string };

/**
 * Our active USDC coins (SPEC §2 /buy/get) that the provider sells on the same network: its code is the coin's
 * ticker (usdc, or usdc_<network>), not suspended, and on mainnet the same token contract the chain adapter watches.
 */
export async function onRampCoins(deps: BuyDeps, onRamp: OnRampProvider): Promise<OnRampCoin[]> {
  const offered = (await fromOnRamp(onRamp.cryptoCurrencies())).filter((c) => !c.suspended);
  return deps.coins().flatMap((coin) => {
    if (!coin.active || !coin.currency.includes(BUY_CURRENCY_MARK)) return [];
    const ticker = coin.baseCurrency.toLowerCase();
    const contract = deps.tokenContracts?.[coin.currency]?.toLowerCase();
    const candidates = offered.filter(
      (c) => c.network === coin.network && (c.code === ticker || c.code.startsWith(`${ticker}_`)) && (!contract || c.contractAddress?.toLowerCase() === contract),
    );
    const found = candidates.find((c) => c.code === ticker) ?? candidates[0];
    return found ? [{ coin, code: found.code }] : [];
  });
}

export async function onRampCoinOf(deps: BuyDeps, onRamp: OnRampProvider, currency: string): Promise<OnRampCoin> {
  const coin = coinOf(deps, currency);
  const found = (await onRampCoins(deps, onRamp)).find((c) => c.coin.currency === coin.currency);
  if (!found) throw new BuyError('UNKNOWN_CURRENCY', `${currency} cannot be bought with a card on this wallet`);
  return found;
}

/** The fiat a country pays in, where it is one of ours. */
function homeFiat(country: string): string | undefined {
  if (EURO_COUNTRIES.has(country)) return 'EUR';
  return Object.entries(GEO_OF_FIAT).find(([, geo]) => geo === country)?.[0];
}

/**
 * /buy/pay: the fiats of BUY_FIAT_CURRENCIES the provider takes, the buyer's own first, each with the country its IP
 * check found as geoId; a country where it does not sell is refused with that reason.
 */
export async function onRampAvailability(deps: BuyDeps, onRamp: OnRampProvider, clientAddress: string | undefined): Promise<FiatAvailability[]> {
  const [where, fiats] = await Promise.all([clientAddress ? fromOnRamp(onRamp.country(clientAddress)) : undefined, fromOnRamp(onRamp.fiatCurrencies())]);
  if (where && !where.buyAllowed) throw new BuyError('B2C_REGION', 'Buying with a card is not available in your country.');
  const country = where?.country ?? UNKNOWN_COUNTRY;
  const taken = new Set(fiats.map((f) => f.code));
  const home = homeFiat(country);
  const offered = deps.settings.fiatCurrencies.filter((fiat) => taken.has(fiat));
  if (offered.length === 0) throw new BuyError('B2C_FIAT_UNSUPPORTED', `The card provider takes none of ${deps.settings.fiatCurrencies.join(', ')}`);
  return offered.toSorted((a, b) => Number(b === home) - Number(a === home)).map((fiatCurrency) => ({ fiatCurrency, geoId: country }));
}

/** A method request's fiat when only the geoId came: the country's own, else the first offered. */
export function onRampFiatOfGeo(deps: BuyDeps, geoId: string): string {
  const home = homeFiat(geoId);
  const fiat = home && deps.settings.fiatCurrencies.includes(home) ? home : deps.settings.fiatCurrencies.find((f) => f === geoId) ?? deps.settings.fiatCurrencies[0];
  if (!fiat) throw new BuyError('B2C_FIAT_UNSUPPORTED', `No purchases are offered in the region ${geoId}`);
  return fiat;
}

/** A decimal string in units of `decimals`, rounded (the provider may write more digits than the coin has). */
export function roundedUnits(text: string, decimals: number, mode: 'down' | 'up'): bigint {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new BuyError('B2C_PROVIDER_DOWN', `The card provider sent an amount that is not one: ${JSON.stringify(text)}`);
  const [, whole = '0', fraction = ''] = match;
  const kept = BigInt(whole + fraction.slice(0, decimals).padEnd(decimals, '0'));
  return mode === 'up' && /[1-9]/.test(fraction.slice(decimals)) ? kept + 1n : kept;
}

/** Fiat per coin (8 decimals) of `cents` for `units`, rounded up: the price the estimate stands for, fees included. */
function effectiveRate(cents: bigint, units: bigint, decimals: number): bigint {
  if (units <= 0n) return 0n;
  const numerator = cents * PRICE_SCALE * pow10(decimals);
  const denominator = units * pow10(FIAT_DECIMALS);
  return (numerator + denominator - 1n) / denominator;
}

export type OnRampQuoteInput = { account: string; currency: string; fiatCurrency: string; fiatAmount?: string | undefined; cryptoAmount?: string | undefined };

/**
 * SPEC §3 rate quote on the provider's data: per method its limits and, inside them, its estimate for the amount
 * typed (the other side filled from it). An amount outside a method's limits is not asked about: the method then
 * answers 0 coins, so the screen shows the limit message and the review stays off.
 */
export async function onRampQuote(deps: BuyDeps, onRamp: OnRampProvider, input: OnRampQuoteInput): Promise<BuyQuote> {
  checkFiat(deps, input.fiatCurrency);
  const { coin, code } = await onRampCoinOf(deps, onRamp, input.currency);
  if ((input.fiatAmount === undefined) === (input.cryptoAmount === undefined)) throw new BuyError('VALIDATION', 'Give either fiatAmount or cryptoAmount');
  const typedUnits = input.cryptoAmount !== undefined ? parseCrypto(input.cryptoAmount, coin.decimals) : undefined;
  const typedCents = input.fiatAmount !== undefined ? parseFiat(input.fiatAmount) : undefined;
  await checkAccount(deps, input.account);
  const fiat = input.fiatCurrency;
  const methods = deps.settings.paymentMethods ?? DEFAULT_METHODS;
  const items = await Promise.all(
    methods.map(async (method): Promise<BuyQuoteItem> => {
      const limits = await fromOnRamp(onRamp.limits(code, fiat, method));
      const min = roundedUnits(limits.min, FIAT_DECIMALS, 'up');
      const max = roundedUnits(limits.max, FIAT_DECIMALS, 'down');
      const base = { itemId: randomUUID(), code: method, name: METHOD_NAMES[method] ?? method, minLimit: min.toString(), maxLimit: max.toString() };
      const outside = typedCents !== undefined && (typedCents < min || typedCents > max);
      if (outside || typedCents === 0n || typedUnits === 0n) {
        return { ...base, rate: '0', estimate: '0', fiatCents: (typedCents ?? 0n).toString(), fees: { provider: '0', network: '0', partner: '0' } };
      }
      const asked = typedCents !== undefined ? { fiatAmount: formatUnits(typedCents, FIAT_DECIMALS) } : { cryptoAmount: formatUnits(typedUnits ?? 0n, coin.decimals) };
      const estimate = await fromOnRamp(onRamp.quote({ code, fiat, method, ...asked }));
      const cents = typedCents ?? roundedUnits(estimate.fiatAmount, FIAT_DECIMALS, 'up');
      const units = roundedUnits(estimate.cryptoAmount, coin.decimals, 'down');
      return { ...base, rate: effectiveRate(cents, units, coin.decimals).toString(), estimate: units.toString(), fiatCents: cents.toString(), fees: estimate.fees };
    }),
  );
  const stored = await deps.pool.query<{ id: string; expiresAt: Date }>(
    `INSERT INTO buy_rate_quotes (wallet_account_id, currency, fiat_currency, items, expires_at)
     VALUES ($1, $2, $3, $4, now() + $5 * interval '1 second') RETURNING id, expires_at AS "expiresAt"`,
    [input.account, coin.currency, fiat, JSON.stringify(items), deps.settings.rateTtlS],
  );
  const row = stored.rows[0];
  if (!row) throw new Error('the quote was not stored');
  const methodsShown = items.map(
    (item): PaymentMethodItem => ({
      paymentMethodCode: item.code,
      paymentMethodName: item.name,
      fiatAmount: formatUnits(BigInt(item.fiatCents ?? '0'), FIAT_DECIMALS),
      fiatCurrency: fiat,
      cryptoAmount: formatUnits(BigInt(item.estimate ?? '0'), coin.decimals),
      minLimit: formatUnits(BigInt(item.minLimit), FIAT_DECIMALS),
      maxLimit: formatUnits(BigInt(item.maxLimit), FIAT_DECIMALS),
      itemId: item.itemId,
      rate: formatUnits(BigInt(item.rate), PRICE_DECIMALS),
      estimate: true,
      ...(item.fees ? { fees: item.fees } : {}),
    }),
  );
  return { methods: methodsShown, fixedRateId: row.id, currency: coin.currency, fiatCurrency: fiat, expiresInSeconds: deps.settings.rateTtlS, expiresAt: row.expiresAt.toISOString() };
}

/** POST /b2c/rate on the provider's data: its price, fees included, of the smallest purchase its card takes. */
export async function onRampRate(deps: BuyDeps, onRamp: OnRampProvider, currency: string, fiat: string): Promise<{ currency: string; fiatCurrency: string; rate: string }> {
  checkFiat(deps, fiat);
  const { coin, code } = await onRampCoinOf(deps, onRamp, currency);
  const method = (deps.settings.paymentMethods ?? DEFAULT_METHODS)[0] ?? DEFAULT_METHODS[0];
  const limits = await fromOnRamp(onRamp.limits(code, fiat, method));
  const estimate = await fromOnRamp(onRamp.quote({ code, fiat, method, fiatAmount: limits.min }));
  const rate = effectiveRate(roundedUnits(estimate.fiatAmount, FIAT_DECIMALS, 'up'), roundedUnits(estimate.cryptoAmount, coin.decimals, 'down'), coin.decimals);
  return { currency: coin.currency, fiatCurrency: fiat, rate: formatUnits(rate, PRICE_DECIMALS) };
}
