/** SPEC §3 sell limits and rates: what one order may be, and a rate fixed for SELL_RATE_TTL_S under a rateId. */
import { formatUnits } from '../../../lib/amount.ts';
import type { sellRateQuotes } from '../../db/schema/sell.ts';
import { coinOf, currentRate, payoutsOn, unavailable, type SellDeps } from './context.ts';
import { quotePrices } from '../rates.ts';
import { checkFiat, FIAT_DECIMALS, limitsOf, SELL_FIAT } from './rules.ts';
import type { SellLimits, SellQuote } from '../../../lib/wire/sell.ts';
export type { SellLimits, SellQuote };


export function limits(deps: SellDeps, fiat: string): SellLimits {
  payoutsOn(deps);
  checkFiat(fiat);
  const { min, max } = limitsOf(deps.settings);
  return { minLimit: formatUnits(min, FIAT_DECIMALS), maxLimit: formatUnits(max, FIAT_DECIMALS), limitCurrency: SELL_FIAT };
}

type StoredQuote = Pick<typeof sellRateQuotes.$inferSelect, 'id' | 'expiresAt'>;

export async function quote(deps: SellDeps, account: string, fiat: string, currency: string): Promise<SellQuote> {
  payoutsOn(deps);
  checkFiat(fiat);
  const coin = coinOf(deps, currency);
  const table = await deps.rates.prices().catch(unavailable);
  const rate = formatUnits(await currentRate(deps, coin, table), FIAT_DECIMALS);
  const row = await deps.pool.query<StoredQuote>(
    `INSERT INTO sell_rate_quotes (wallet_account_id, currency, fiat_currency, rate, prices, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 second') RETURNING id, expires_at AS "expiresAt"`,
    [account, currency, fiat, rate, quotePrices(table, [coin.baseCurrency, fiat]), deps.settings.rateTtlS],
  );
  const stored = row.rows[0];
  if (!stored) throw new Error('the quote was not stored');
  return { rate, rateId: stored.id, currency, fiatCurrency: fiat, expiresAt: stored.expiresAt.toISOString(), expiresInSeconds: deps.settings.rateTtlS };
}
