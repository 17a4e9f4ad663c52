/**
 * `npm run custody -- fund-desk <currency> <amount> [key]`: books coins the operator sent to the custody (to its hot
 * wallet, outside any user's deposit) as the desk's inventory. Only what the chain shows beyond what the ledger counts
 * can be booked (custody-funding.ts), so the desk never holds coins the custody lacks. The desk's coins are never the
 * gas float's: a network's coin sent for gas is booked by `fund-gas` (gas-float.ts), from the same surplus.
 */
import type pg from 'pg';
import { findCoin } from '../../../lib/currencies.ts';
import { CustodyFundingError, fundFromSurplus, fundingUnits, type Funded, type FundingChain } from '../custody-funding.ts';
import { fundDesk } from './desk.ts';

export async function fundDeskFromChain(pool: pg.Pool, chain: FundingChain, input: { currency: string; amount: string; key?: string | undefined }): Promise<Funded> {
  const coin = findCoin(input.currency.toUpperCase());
  if (!coin) throw new CustodyFundingError('UNKNOWN_CURRENCY', `${input.currency} is not a currency this custody holds`);
  const units = fundingUnits(chain, coin, input.amount);
  const key = `${coin.currency}:${input.key ?? units.toString()}`;
  return fundFromSurplus(pool, chain, coin, units, (db) => fundDesk(db, { currency: coin.currency, units, key }));
}
