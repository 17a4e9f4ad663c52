/**
 * Coins the operator sent to the custody's hot wallet outside any user's deposit, booked to one of the custodian's
 * accounts: the swap desk's inventory (`npm run custody -- fund-desk`, market/desk-funding.ts) or the gas float
 * (`fund-gas`, gas-float.ts). Only what the chain shows beyond what the ledger counts can be booked (holdings −
 * position − uncredited deposits − deposits still pending), under one lock for every funding, so two bookings can
 * never both count the same coins, and no funding books a user's deposit waiting for its confirmations.
 */
import type pg from 'pg';
import { AmountError, parseDecimal } from '../../lib/amount.ts';
import type { CoinMeta } from '../../lib/currencies.ts';
import { unitsOf, type Units } from '../../lib/money.ts';
import type { ChainPort, CustodyHoldings } from '../adapters/chains/port.ts';
import { inTransaction } from '../db/transaction.ts';
import { custodyBalances } from './custody-balances.ts';
import { DomainError } from './errors.ts';
import type { PostedEntry, Queryable } from './ledger.ts';

/** The operator's mistake in `custody fund-desk` or `fund-gas`: nothing was booked. */
export class CustodyFundingError extends DomainError<'VALIDATION' | 'UNKNOWN_CURRENCY' | 'NOT_AVAILABLE' | 'INSUFFICIENT_FUNDS'> {}

export type FundingChain = Pick<ChainPort, 'networks'> & CustodyHoldings;
export type Funded = { units: Units; surplus: bigint; replayed: boolean };

/** The amount in the coin's atomic units (up to all its decimals), above zero, on a network that runs. */
export function fundingUnits(chain: FundingChain, coin: Pick<CoinMeta, 'currency' | 'network' | 'decimals'>, amount: string): Units {
  if (!chain.networks.includes(coin.network)) throw new CustodyFundingError('NOT_AVAILABLE', `${coin.network} is off: no chain adapter runs it`);
  let units: Units;
  try {
    // The operator's tool takes the coin's every decimal (a TON top-up arrives less the wallet's fee, to the nanoton).
    units = unitsOf(parseDecimal(amount.trim(), coin.decimals));
  } catch (error) {
    if (error instanceof AmountError) throw new CustodyFundingError('VALIDATION', `${amount} is not an amount of ${coin.currency} (at most ${coin.decimals} decimals)`);
    throw error;
  }
  if (units <= 0n) throw new CustodyFundingError('VALIDATION', 'the amount must be above zero');
  return units;
}

/**
 * Books `units` of the coin by `book` (an entry from WORLD:<network>, once per key) if the chain holds that much the
 * ledger does not count; a replay of a booked key is answered as such whatever the chain holds now.
 */
export async function fundFromSurplus(
  pool: pg.Pool,
  chain: FundingChain,
  coin: Pick<CoinMeta, 'currency' | 'network'>,
  units: Units,
  book: (db: Queryable) => Promise<PostedEntry>,
): Promise<Funded> {
  return inTransaction(pool, async (db) => {
    await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['custody-funding']);
    const rows = await custodyBalances(pool, { networks: [coin.network], holdings: chain.holdings });
    const row = rows.find((r) => r.currency === coin.currency);
    if (row?.holdingsError) throw new CustodyFundingError('NOT_AVAILABLE', `the ${coin.network} node could not say what the custody holds: ${row.holdingsError}`);
    if (!row || row.difference === undefined) throw new CustodyFundingError('NOT_AVAILABLE', `${coin.network} runs on a stand-in that keeps no holdings: fund it on a node`);
    const surplus = row.difference - row.pending;
    const posted = await book(db);
    if (!posted.replayed && units > surplus) {
      throw new CustodyFundingError(
        'INSUFFICIENT_FUNDS',
        `the chain holds ${surplus} units of ${coin.currency} the ledger does not count yet${row.pending > 0n ? ` (besides ${row.pending} of deposits still pending)` : ''}, less than ${units}: send the coins to the hot wallet first`,
      );
    }
    return { units, surplus, replayed: posted.replayed };
  });
}
