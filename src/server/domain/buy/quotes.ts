/**
 * SPEC §3 buy quotes: where purchases are offered, the current rate, and the rate quote that fixes, per payment
 * method, the fiat price of one coin and the method's limits for BUY_RATE_TTL_S under one fixedRateId.
 */
import { randomUUID } from 'node:crypto';
import { formatUnits } from '../../../lib/amount.ts';
import { PRICE_DECIMALS } from '../../adapters/rates/port.ts';
import type { BuyQuoteItem, buyRateQuotes } from '../../db/schema/buy.ts';
import { BuyError } from './errors.ts';
import { quotePrices } from '../rates.ts';
import { buyingOn, checkAccount, checkFiat, coinOf, prices, rateOf, type BuyDeps } from './context.ts';
import { onRampAvailability, onRampCoins, onRampFiatOfGeo, onRampQuote, onRampRate } from './onramp.ts';
import { BUY_CURRENCY_MARK, BUY_METHODS, cryptoFor, FIAT_DECIMALS, fiatFor, GEO_OF_FIAT, limitsOf, parseCrypto, parseFiat } from './rules.ts';
import type { BuyCurrencies, FiatAvailability, PaymentMethodItem, BuyQuote } from '../../../lib/wire/buy.ts';
import { unitsOf } from '../../../lib/money.ts';
export type { BuyCurrencies, FiatAvailability, PaymentMethodItem, BuyQuote };

export type QuoteInput = { account: string; currency: string; fiatCurrency: string; fiatAmount?: string | undefined; cryptoAmount?: string | undefined };

/** The acquirer's fiats, each sold in its own region. */
function cardAvailability(deps: BuyDeps): FiatAvailability[] {
  return deps.settings.fiatCurrencies.map((fiatCurrency) => ({ fiatCurrency, geoId: GEO_OF_FIAT[fiatCurrency] ?? fiatCurrency }));
}

/** SPEC §3 fiat availability; an on-ramp's for the country of `clientAddress` (its IP check). */
export async function availability(deps: BuyDeps, clientAddress?: string): Promise<FiatAvailability[]> {
  buyingOn(deps);
  if (deps.onRamp) return onRampAvailability(deps, deps.onRamp, clientAddress);
  return cardAvailability(deps);
}

/**
 * GET /b2c/currencies: the coins on sale (SPEC §2 /buy/get), an on-ramp's as it sells them on our networks and only
 * where it sells to the buyer's country. Its IP check is asked every time (its list is kept a while): a provider that
 * is down makes this fail, and the buy entry shows why.
 */
export async function buyCurrencies(deps: BuyDeps, clientAddress?: string): Promise<BuyCurrencies> {
  buyingOn(deps);
  if (deps.onRamp) {
    const [coins] = await Promise.all([onRampCoins(deps, deps.onRamp), onRampAvailability(deps, deps.onRamp, clientAddress)]);
    return { provider: deps.onRamp.name, currencies: coins.map((c) => c.coin.currency) };
  }
  const currencies = deps.coins().filter((coin) => coin.active && coin.currency.includes(BUY_CURRENCY_MARK));
  return { provider: deps.provider?.name ?? '', currencies: currencies.map((coin) => coin.currency) };
}

export function fiatOfGeo(deps: BuyDeps, geoId: string): string {
  buyingOn(deps);
  if (deps.onRamp) return onRampFiatOfGeo(deps, geoId);
  const found = cardAvailability(deps).find((a) => a.geoId === geoId || a.fiatCurrency === geoId);
  if (!found) throw new BuyError('B2C_FIAT_UNSUPPORTED', `No purchases are offered in the region ${geoId}`);
  return found.fiatCurrency;
}

/** POST /b2c/rate: the current price of one coin in the fiat, fee included; nothing is fixed. */
export async function currentRate(deps: BuyDeps, currency: string, fiat: string): Promise<{ currency: string; fiatCurrency: string; rate: string }> {
  buyingOn(deps);
  if (deps.onRamp) return onRampRate(deps, deps.onRamp, currency, fiat);
  checkFiat(deps, fiat);
  const coin = coinOf(deps, currency);
  return { currency, fiatCurrency: fiat, rate: formatUnits(await rateOf(deps, coin, fiat), PRICE_DECIMALS) };
}

type StoredQuote = Pick<typeof buyRateQuotes.$inferSelect, 'id' | 'expiresAt'>;

/** SPEC §3 rate quote: every method with the amounts for the side given, under one fixedRateId good for 300 s. */
export async function quote(deps: BuyDeps, input: QuoteInput): Promise<BuyQuote> {
  buyingOn(deps);
  if (deps.onRamp) return onRampQuote(deps, deps.onRamp, input);
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
    `INSERT INTO buy_rate_quotes (wallet_account_id, currency, fiat_currency, items, prices, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 second') RETURNING id, expires_at AS "expiresAt"`,
    [input.account, coin.currency, input.fiatCurrency, JSON.stringify(items), quotePrices(table, [coin.baseCurrency, input.fiatCurrency]), deps.settings.rateTtlS],
  );
  const row = stored.rows[0];
  if (!row) throw new Error('the quote was not stored');
  const methods = items.map((item): PaymentMethodItem => {
    const itemRate = BigInt(item.rate);
    const cents = typedCents ?? fiatFor(units ?? unitsOf(0n), itemRate, coin.decimals);
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
