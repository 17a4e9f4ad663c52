/**
 * What every part of the sell desk works with: its dependencies, and the checks and prices that need them (is
 * selling on, is the coin offered, what does the desk pay for a coin now).
 */
import type pg from 'pg';
import type { CoinMeta } from '../../../lib/currencies.ts';
import type { Logger } from '../../log.ts';
import type { PriceTable, RatesPort } from '../../adapters/rates/port.ts';
import type { PayoutProvider } from '../../adapters/payout/port.ts';
import { requirePrice } from '../rates.ts';
import { SellError } from './errors.ts';
import { PAYOUTS_UNAVAILABLE_MESSAGE, SELL_FIAT, SELLING_OFF_MESSAGE, spreadRate, type SellSettings } from './rules.ts';

export type SellDeps = { pool: pg.Pool; rates: RatesPort; coins: () => readonly CoinMeta[]; provider: PayoutProvider | undefined; settings: SellSettings; log: Logger };

/** The payout provider; without one (PAYOUT_PROVIDER=off, and production until a real one is configured) selling is off. */
export function payoutsOn(deps: Pick<SellDeps, 'provider'>): PayoutProvider {
  if (!deps.provider) throw new SellError('C2F_PAYOUTS_UNAVAILABLE', SELLING_OFF_MESSAGE);
  return deps.provider;
}

export function coinOf(deps: Pick<SellDeps, 'coins'>, currency: string): CoinMeta {
  const coin = deps.coins().find((c) => c.currency === currency && c.active);
  if (!coin) throw new SellError('UNKNOWN_CURRENCY', `${currency} is not a currency this wallet offers`);
  return coin;
}

/** A provider or price source that failed is the payouts being unavailable for now. */
export const unavailable = (error: unknown): never => {
  throw new SellError('C2F_PAYOUTS_UNAVAILABLE', PAYOUTS_UNAVAILABLE_MESSAGE, { cause: error });
};

/** Fiat kopecks the desk pays per one coin now; no current price refuses (PRICE_UNAVAILABLE). */
export async function currentRate(deps: Pick<SellDeps, 'rates' | 'settings'>, coin: CoinMeta, table?: PriceTable): Promise<bigint> {
  return spreadRate(requirePrice(table ?? (await deps.rates.prices().catch(unavailable)), coin, SELL_FIAT), deps.settings.spreadBps);
}
