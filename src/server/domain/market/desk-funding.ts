/**
 * `npm run custody -- fund-desk <currency> <amount> [key]`: books coins the operator sent to the custody (to its hot
 * wallet, outside any user's deposit) as the desk's inventory. Only what the chain shows beyond the ledger's position
 * can be booked (holdings − position − uncredited deposits), so the desk never holds coins the custody lacks.
 */
import type pg from 'pg';
import { AmountError, parseAmount } from '../../../lib/amount.ts';
import { findCoin } from '../../../lib/currencies.ts';
import type { ChainPort, CustodyHoldings } from '../../adapters/chains/port.ts';
import { inTransaction } from '../../db/transaction.ts';
import { custodyBalances } from '../custody-balances.ts';
import { DeskFundingError, fundDesk } from './desk.ts';

export async function fundDeskFromChain(pool: pg.Pool, chain: Pick<ChainPort, 'networks'> & CustodyHoldings, input: { currency: string; amount: string; key?: string | undefined }): Promise<{ units: bigint; surplus: bigint; replayed: boolean }> {
  const coin = findCoin(input.currency.toUpperCase());
  if (!coin) throw new DeskFundingError('UNKNOWN_CURRENCY', `${input.currency} is not a currency this custody holds`);
  if (!chain.networks.includes(coin.network)) throw new DeskFundingError('NOT_AVAILABLE', `${coin.network} is off: no chain adapter runs it`);
  let units: bigint;
  try {
    units = parseAmount(input.amount, coin.decimals);
  } catch (error) {
    if (error instanceof AmountError) throw new DeskFundingError('VALIDATION', `${input.amount} is not an amount of ${coin.currency} (at most ${coin.decimals} decimals)`);
    throw error;
  }
  if (units <= 0n) throw new DeskFundingError('VALIDATION', 'the amount must be above zero');
  const key = `${coin.currency}:${input.key ?? units.toString()}`;
  // One funding at a time: two at once must not both count the same surplus.
  return inTransaction(pool, async (db) => {
    await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['desk-funding']);
    const rows = await custodyBalances(pool, { networks: [coin.network], holdings: chain.holdings });
    const row = rows.find((r) => r.currency === coin.currency);
    if (row?.holdingsError) throw new DeskFundingError('NOT_AVAILABLE', `the ${coin.network} node could not say what the custody holds: ${row.holdingsError}`);
    if (!row || row.holdings === undefined) throw new DeskFundingError('NOT_AVAILABLE', `${coin.network} runs on a stand-in that keeps no holdings: fund the desk on a node`);
    const surplus = row.holdings - row.position - row.uncredited;
    const posted = await fundDesk(db, { currency: coin.currency, units, key });
    if (!posted.replayed && units > surplus) throw new DeskFundingError('INSUFFICIENT_FUNDS', `the chain holds ${surplus} units of ${coin.currency} the ledger does not count yet, less than ${units}: send the coins to the hot wallet first`);
    return { units, surplus, replayed: posted.replayed };
  });
}
