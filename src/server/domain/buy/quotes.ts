/**
 * SPEC §3 buy quotes: where purchases are offered, the current rate, and the rate quote that fixes, per payment
 * method, the fiat price of one coin and the method's limits for BUY_RATE_TTL_S under one fixedRateId.
 */
import { randomUUID } from 'node:crypto';
import { formatUnits } from '../../../lib/amount.ts';
import { PRICE_DECIMALS } from '../../adapters/rates/port.ts';
import type { BuyQuoteItem, buyRateQuotes } from '../../db/schema/buy.ts';
import { BuyError } from './errors.ts';
import { checkAccount, checkFiat, coinOf, paymentsOn, prices, rateOf, type BuyDeps } from './context.ts';
import { BUY_METHODS, cryptoFor, FIAT_DECIMALS, fiatFor, GEO_OF_FIAT, limitsOf, parseCrypto, parseFiat } from './rules.ts';
import type { FiatAvailability, PaymentMethodItem, BuyQuote } from '../../../lib/wire/buy.ts';
export type { FiatAvailability, PaymentMethodItem, BuyQuote };

export type QuoteInput = { account: string; currency: string; fiatCurrency: string; fiatAmount?: string | undefined; cryptoAmount?: string | undefined };

export function availability(deps: BuyDeps): FiatAvailability[] {
  paymentsOn(deps);
  return deps.settings.fiatCurrencies.map((fiatCurrency) => ({ fiatCurrency, geoId: GEO_OF_FIAT[fiatCurrency] ?? fiatCurrency }));
}

export function fiatOfGeo(deps: BuyDeps, geoId: string): string {
  const found = availability(deps).find((a) => a.geoId === geoId || a.fiatCurrency === geoId);
  if (!found) throw new BuyError('B2C_FIAT_UNSUPPORTED', `No purchases are offered in the region ${geoId}`);
  return found.fiatCurrency;
}

/** POST /b2c/rate: the current price of one coin in the fiat, fee included; nothing is fixed. */
export async function currentRate(deps: BuyDeps, currency: string, fiat: string): Promise<{ currency: string; fiatCurrency: string; rate: string }> {
  paymentsOn(deps);
  checkFiat(deps, fiat);
  const coin = coinOf(deps, currency);
  return { currency, fiatCurrency: fiat, rate: formatUnits(await rateOf(deps, coin, fiat), PRICE_DECIMALS) };
}

type StoredQuote = Pick<typeof buyRateQuotes.$inferSelect, 'id' | 'expiresAt'>;

/** SPEC §3 rate quote: every method with the amounts for the side given, under one fixedRateId good for 300 s. */
export async function quote(deps: BuyDeps, input: QuoteInput): Promise<BuyQuote> {
  paymentsOn(deps);
  checkFiat(deps, input.fiatCurrency);
  const coin = coinOf(deps, input.currency);
  if ((input.fiatAmount === undefined) === (input.cryptoAmount === undefined)) throw new BuyError('VALIDATION', 'Give either fiatAmount or cryptoAmount');
  const units = input.cryptoAmount !== undefined ? parseCrypto(input.cryptoAmount, coin.decimals) : undefined;
  const typedCents = input.fiatAmount !== undefined ? parseFiat(input.fiatAmount) : undefined;
  await checkAccount(deps, input.account);
  const table = await prices(deps);
  const base = await rateOf(deps, coin, input.fiatCurrency, table);
  const items: BuyQuoteItem[] = BUY_METHODS.map((method) => {
    const limits = limitsOf(deps.settings.limits, method.code, input.fiatCurrency, table);
    return { itemId: randomUUID(), code: method.code, name: method.name, rate: base.toString(), minLimit: limits.min.toString(), maxLimit: limits.max.toString() };
  });
  const stored = await deps.pool.query<StoredQuote>(
    `INSERT INTO buy_rate_quotes (wallet_account_id, currency, fiat_currency, items, expires_at)
     VALUES ($1, $2, $3, $4, now() + $5 * interval '1 second') RETURNING id, expires_at AS "expiresAt"`,
    [input.account, coin.currency, input.fiatCurrency, JSON.stringify(items), deps.settings.rateTtlS],
  );
  const row = stored.rows[0];
  if (!row) throw new Error('the quote was not stored');
  const methods = items.map((item): PaymentMethodItem => {
    const itemRate = BigInt(item.rate);
    const cents = typedCents ?? fiatFor(units ?? 0n, itemRate, coin.decimals);
    return {
      paymentMethodCode: item.code,
      paymentMethodName: item.name,
      fiatAmount: formatUnits(cents, FIAT_DECIMALS),
      fiatCurrency: input.fiatCurrency,
      cryptoAmount: formatUnits(cryptoFor(cents, itemRate, coin.decimals), coin.decimals),
      minLimit: formatUnits(BigInt(item.minLimit), FIAT_DECIMALS),
      maxLimit: formatUnits(BigInt(item.maxLimit), FIAT_DECIMALS),
      itemId: item.itemId,
      rate: formatUnits(itemRate, PRICE_DECIMALS),
    };
  });
  return { methods, fixedRateId: row.id, currency: coin.currency, fiatCurrency: input.fiatCurrency, expiresInSeconds: deps.settings.rateTtlS, expiresAt: row.expiresAt.toISOString() };
}
