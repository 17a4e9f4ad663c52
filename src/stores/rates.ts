import { computed } from 'nanostores';
import { getRatesMap, type RatesMap } from '../api/wallet.ts';
import { compareDecimals, multiplyDecimals } from '../lib/amount.ts';
import { formatFiat } from '../lib/format.ts';
import type { Locale } from '../lib/preferences.ts';
import { $fiatSymbol } from './account.ts';
import { $activeCoins } from './catalogue.ts';
import { createQuery } from './query.ts';
import { $locale, $selectedCurrency } from './settings.ts';

type RatesArgs = { fiat: string; currencies: string[] };

/** The gateway's rates: current ones, and the last known value of a coin with no current price with its time (`asOf`). */
type RatesAnswer = { ratesMap: RatesMap; asOf: Record<string, string> };

/** Rates of every active coin in the chosen fiat (SPEC §3 ratesMap); read again when the fiat or the catalogue changes. */
export const ratesQuery = createQuery<RatesArgs, RatesAnswer>({
  key: ({ fiat, currencies }) => `${fiat}:${currencies.join(',')}`,
  load: async ({ fiat, currencies }) => {
    const answer = await getRatesMap(currencies, [fiat]);
    return { ratesMap: answer.ratesMap, asOf: answer.asOf ?? {} };
  },
});

const $ratesArgs = computed([$selectedCurrency, $activeCoins], (fiat, coins): RatesArgs | null =>
  coins.length === 0 ? null : { fiat, currencies: coins.map((coin) => coin.currency) },
);

const $ratesAnswer = ratesQuery.watch($ratesArgs);

export const $rates = computed($ratesAnswer, (answer) => ({ ...answer, data: answer.data?.ratesMap }));

/** Per coin, when its shown rate was last current (ISO time); absent for current rates. */
export const $ratesAsOf = computed($ratesAnswer, (answer): Readonly<Record<string, string>> => answer.data?.asOf ?? {});

/** The price of one unit of `currency` in `fiat`, if the gateway quoted it. */
export function rateOf(rates: RatesMap | undefined, currency: string, fiat: string): string | undefined {
  return rates?.[currency]?.[fiat];
}

/** Digits kept in fiat values before display rounds them to 2, so sums and sorting stay exact enough. */
const FIAT_PRECISION = 8;

/** An amount's value in fiat, exact to 8 decimals; undefined without a rate. */
export function fiatValue(amount: string, rate: string | undefined): string | undefined {
  return rate === undefined ? undefined : multiplyDecimals(amount, rate, FIAT_PRECISION);
}

/**
 * "≈ $12.34" beside a crypto amount the user types or reviews (issue 33 item 3), in the chosen fiat; nothing for an
 * empty or zero amount or without a rate (a guess would be worse than no figure).
 */
export function fiatEquivalentText(amount: string, rate: string | undefined, symbol: string, locale: Locale): string | undefined {
  const typed = amount.replace(/\.$/, '');
  if (typed === '' || !/^\d+(\.\d+)?$/.test(typed) || compareDecimals(typed, '0') <= 0) return undefined;
  const value = fiatValue(typed, rate);
  return value === undefined ? undefined : `≈\u00a0${formatFiat(value, symbol, locale)}`;
}

/** The fiat equivalent of an amount of `currency` at the current rates, in the chosen fiat and language. */
export const $fiatEquivalent = computed([$rates, $selectedCurrency, $fiatSymbol, $locale], (rates, fiat, symbol, locale) => (amount: string, currency: string) =>
  fiatEquivalentText(amount, rateOf(rates.data, currency, fiat), symbol, locale),
);
