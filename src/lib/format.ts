/**
 * What the user reads (SPEC §5, §9): amounts, fiat values, addresses and dates. Exact decimals come from
 * src/lib/amount.ts; this file only adds digit grouping, currency symbols and the calendar.
 */
import dayjs from 'dayjs';
import 'dayjs/locale/ru.js';
import { displayDecimal, displayFiat } from './amount.ts';
import { COINS } from './currencies.ts';
import type { Locale } from './preferences.ts';

/**
 * The one clock of each language (issue 33 item 3), wherever a time of day is shown (history rows, details, a price's
 * age): English reads a 12-hour clock with AM/PM, Russian a 24-hour one. SPEC §9's details pattern 'MMM D, HH:mm A'
 * would put a 24-hour time before AM/PM ("19:05 PM"), so each language writes the date its own way around this clock.
 */
export const CLOCK_FORMAT: Record<Locale, string> = { en: 'h:mm A', ru: 'HH:mm' };
/** A day and month before the clock: "Mar 5" in English, "5 мар." in Russian. */
const SHORT_DATE_FORMAT: Record<Locale, string> = { en: 'MMM D', ru: 'D MMM' };
/** The transaction details' date and time: "Mar 5, 2:07 PM", "5 мар., 14:07". */
export const DETAIL_DATE_FORMAT: Record<Locale, string> = { en: `${SHORT_DATE_FORMAT.en}, ${CLOCK_FORMAT.en}`, ru: `${SHORT_DATE_FORMAT.ru}, ${CLOCK_FORMAT.ru}` };

const SEPARATORS: Record<Locale, { group: string; point: string }> = {
  en: { group: ',', point: '.' },
  // Russian groups by a no-break space and writes a decimal comma.
  ru: { group: '\u00a0', point: ',' },
};

/** "1234567.5" → "1,234,567.5" (en) or "1 234 567,5" (ru); the digits are never changed. */
export function groupDigits(decimal: string, locale: Locale = 'en'): string {
  const { group, point } = SEPARATORS[locale];
  const negative = decimal.startsWith('-');
  const [whole = '0', fraction] = (negative ? decimal.slice(1) : decimal).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, group);
  return `${negative ? '-' : ''}${grouped}${fraction === undefined ? '' : point + fraction}`;
}

/** A crypto amount by the coin's `round` (2 when unknown), trailing zeros trimmed, zero as "0". */
export function formatCrypto(value: string, round: number | undefined = undefined, locale: Locale = 'en'): string {
  return groupDigits(displayDecimal(value, round ?? 2), locale);
}

/** A crypto amount with its ticker: "0.015 BTC". */
export function formatCryptoWithCode(value: string, code: string, round?: number, locale: Locale = 'en'): string {
  return `${formatCrypto(value, round, locale)}\u00a0${tickerOf(code)}`;
}

/** A fiat value with 2 decimals and its symbol, zero as "0": "$1,234.50", in Russian "1 234,50 $". */
export function formatFiat(value: string, symbol: string, locale: Locale = 'en'): string {
  const fixed = displayFiat(value);
  const digits = /^-?0\.00$/.test(fixed) ? '0' : groupDigits(fixed, locale);
  return locale === 'ru' ? `${digits}\u00a0${symbol}` : `${symbol}${digits}`;
}

/** How a network is named beside a ticker that two assets share (USDT on Tron and on Ethereum, BTC and Lightning). */
const NETWORK_TAGS: Record<string, string> = { TRX: 'TRC-20', ETH: 'ERC-20', LNG: 'Lightning' };

/** Tickers more than one coin of the catalogue shares: only these need their network beside them. */
const SHARED_TICKERS = new Set(COINS.map((coin) => coin.baseCurrency).filter((base, index, all) => all.indexOf(base) !== index));

/** The network beside an ambiguous ticker ("TRC-20" for USDT_TRX, "Lightning" for BTC_LNG); undefined where the ticker is enough. */
export function networkTagOf(currency: string): string | undefined {
  const [base = currency, network] = currency.split('_');
  return network && SHARED_TICKERS.has(base) ? (NETWORK_TAGS[network] ?? network) : undefined;
}

/** The ticker users know, with its network where two assets could be confused: "USDT (TRC-20)", "BTC (Lightning)", "USDC", "BTC". */
export function tickerOf(currency: string): string {
  const base = currency.split('_')[0] ?? currency;
  const tag = networkTagOf(currency);
  return tag ? `${base} (${tag})` : base;
}

/**
 * A coin's second line in lists: a token names its chain ("USDT · Tron"), and a coin that shares its ticker with
 * another names its network ("BTC · Lightning", issue 33 item 3: never a bare "BTC" beside Bitcoin); else the ticker.
 */
export function coinSubtitleOf(coin: { currency: string; token: boolean; baseCurrency: string; blockchain: string }): string {
  if (coin.token) return `${coin.baseCurrency} · ${coin.blockchain}`;
  const tag = networkTagOf(coin.currency);
  return tag ? `${coin.baseCurrency} · ${tag}` : coin.baseCurrency;
}

/** The network a user must send on: a coin's own network tag ("Lightning" for BTC_LNG), else its chain ("Tron"). */
export function networkNameOf(coin: { currency: string; token: boolean; blockchain: string }): string {
  return (coin.token ? undefined : networkTagOf(coin.currency)) ?? coin.blockchain;
}

/** The bare ticker, for a place that shows the network on its own line (a currency chip). */
export function baseTickerOf(currency: string): string {
  return currency.split('_')[0] ?? currency;
}

export type DayGroup = { kind: 'today' | 'yesterday' | 'date'; key: string; label: string };

/** The day an item belongs to in a history list: today, yesterday, or its date in the user's language. */
export function dayGroupOf(date: string | number | Date, now: number | Date, locale: Locale = 'en'): DayGroup {
  const day = dayjs(date).locale(locale).startOf('day');
  const today = dayjs(now).startOf('day');
  const key = day.format('YYYY-MM-DD');
  if (day.isSame(today)) return { kind: 'today', key, label: '' };
  if (day.isSame(today.subtract(1, 'day'))) return { kind: 'yesterday', key, label: '' };
  return { kind: 'date', key, label: day.format(day.year() === today.year() ? 'D MMMM' : 'D MMMM YYYY') };
}

/** Items grouped by day, in the order given (the gateway sends them newest first). */
export function groupByDay<T>(items: readonly T[], dateOf: (item: T) => string, now: number | Date, locale: Locale = 'en'): { day: DayGroup; items: T[] }[] {
  const groups: { day: DayGroup; items: T[] }[] = [];
  for (const item of items) {
    const day = dayGroupOf(dateOf(item), now, locale);
    const last = groups.at(-1);
    if (last && last.day.key === day.key) last.items.push(item);
    else groups.push({ day, items: [item] });
  }
  return groups;
}

/** Date and time of a transaction's details: "Mar 5, 2:07 PM", "5 мар., 14:07". */
export function formatDetailDate(date: string | number | Date, locale: Locale = 'en'): string {
  return dayjs(date).locale(locale).format(DETAIL_DATE_FORMAT[locale]);
}

/** Time of day in a history row, by the language's clock: "2:07 PM", "14:07". */
export function formatTime(date: string | number | Date, locale: Locale = 'en'): string {
  return dayjs(date).locale(locale).format(CLOCK_FORMAT[locale]);
}

/** When a rate that is no longer current was last current: its time today ("2:07 PM"), else its day and time. */
export function formatAsOf(date: string | number | Date, now: number | Date, locale: Locale = 'en'): string {
  const when = dayjs(date).locale(locale);
  return when.isSame(dayjs(now), 'day') ? formatTime(date, locale) : formatDetailDate(date, locale);
}
