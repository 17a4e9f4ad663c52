/**
 * `npm run custody -- balances`: per network and currency, what the ledger owes users, what the swap desk holds, the
 * fees earned and the gas float left (the position is their sum with the other custodian accounts), the custody's
 * position on the ledger (−WORLD: what the chain should show the hot outputs holding), what the chain shows (`holdings`), and the
 * outputs the chain holds that the ledger does not credit (deposits below MIN_DEPOSIT). They must match once nothing
 * is in flight (deposits waiting for confirmations, withdrawals and cold sweeps not completed).
 */
import type pg from 'pg';
import { unitsFromRowOrZero } from '../db/amounts.ts';
import { COINS, type Network } from '../../lib/currencies.ts';
import { ChainUnsupportedError, type ChainPort, type CustodyHoldings } from '../adapters/chains/port.ts';
import { SYSTEM_ACCOUNTS, systemAccountId } from './ledger.ts';
import { negateUnits, subtractUnits, unitsOf, type Units } from '../../lib/money.ts';

export type CustodyBalance = {
  network: Network;
  currency: string;
  /** What users own (available and on hold). */
  liability: Units;
  /** The swap desk's inventory (market/desk.ts). */
  desk: Units;
  /** Fee income the custodian has earned in the currency. */
  fees: Units;
  /** The hot wallet's gas float left (GAS_FLOAT:<network>, domain/gas-float.ts): 0 but for a float network's coin. */
  gasFloat: Units;
  /** −WORLD:<network>: what left the world into the custody's hot outputs, as the ledger counts it. */
  position: Units;
  /** −COLD_STORAGE:<network>: what was swept to cold storage. */
  cold: Units;
  /** What the chain shows the custody's outputs holding; undefined where the adapter keeps none (the devnet). */
  holdings: Units | undefined;
  /** Outputs the custody holds that the ledger does not credit (deposits below the minimum). */
  uncredited: Units;
  /** Deposits (pending, or credited and put in doubt or on hold by a reorganisation), withdrawals and cold sweeps not settled yet: a difference may be theirs. */
  inFlight: number;
  /** What deposits still waiting for their confirmations bring (a node may count them in its holdings already). */
  pending: Units;
  /** holdings − position − uncredited: what the chain holds that the ledger does not count (negative: lacks); undefined without holdings. */
  difference: Units | undefined;
  /** difference = 0; undefined without holdings. */
  matches: boolean | undefined;
  /** Why the node could not say what it holds (unreachable, a token contract it does not know); undefined when it could. */
  holdingsError?: string | undefined;
};

const balanceOf = async (db: pg.Pool, code: string, currency: string) => {
  const row = await db.query<{ total: string | null }>(
    'SELECT (available + on_hold)::text AS total FROM ledger_balances WHERE ledger_account_id = $1 AND currency = $2',
    [systemAccountId(code), currency],
  );
  return unitsFromRowOrZero(row.rows[0]?.total, 'total');
};

export async function custodyBalances(pool: pg.Pool, chain: Pick<ChainPort, 'networks'> & CustodyHoldings): Promise<CustodyBalance[]> {
  const result: CustodyBalance[] = [];
  for (const network of chain.networks) {
    let holdings: Record<string, Units> | undefined;
    let holdingsError: string | undefined;
    try {
      holdings = await chain.holdings(network);
    } catch (error) {
      // One network's node failing is that network's row, not the end of the report (issue 30 item 7).
      if (!(error instanceof ChainUnsupportedError)) holdingsError = error instanceof Error ? error.message : String(error);
    }
    for (const coin of COINS.filter((c) => c.network === network)) {
      const currency = coin.currency;
      const users = await pool.query<{ total: string | null }>(
        `SELECT sum(b.available + b.on_hold)::text AS total FROM ledger_balances b JOIN ledger_accounts a ON a.id = b.ledger_account_id
          WHERE a.kind = 'USER' AND b.currency = $1`,
        [currency],
      );
      const deposits = await pool.query<{ uncredited: string | null; pending: string | null }>(
        `SELECT (sum(amount) FILTER (WHERE state = 'BELOW_MINIMUM'))::text AS uncredited, (sum(amount) FILTER (WHERE state = 'PENDING'))::text AS pending
           FROM chain_deposits WHERE network = $1 AND currency = $2 AND state IN ('BELOW_MINIMUM', 'PENDING')`,
        [network, currency],
      );
      const flight = await pool.query<{ n: number }>(
        // A credited deposit a reorganisation put in doubt or on hold is not settled either: the chain may not hold it now.
        `SELECT ((SELECT count(*) FROM chain_deposits WHERE network = $1 AND currency = $2
                   AND (state IN ('PENDING', 'HELD', 'REVERSAL_DUE') OR (state = 'CREDITED' AND in_doubt_since IS NOT NULL)))
               + (SELECT count(*) FROM withdrawals WHERE network = $1 AND currency = $2 AND state IN ('PENDING', 'SIGNED', 'BROADCAST'))
               + (SELECT count(*) FROM custody_movements WHERE network = $1 AND currency = $2 AND state IN ('SIGNED', 'BROADCAST')))::int AS n`,
        [network, currency],
      );
      const position = negateUnits(await balanceOf(pool, SYSTEM_ACCOUNTS.world(network).code, currency));
      const desk = await balanceOf(pool, SYSTEM_ACCOUNTS.swapDesk().code, currency);
      const fees = await balanceOf(pool, SYSTEM_ACCOUNTS.feeIncome().code, currency);
      const held = holdings ? (holdings[currency] ?? unitsOf(0n)) : undefined;
      const notCredited = unitsFromRowOrZero(deposits.rows[0]?.uncredited, 'uncredited');
      const difference = held === undefined ? undefined : subtractUnits(subtractUnits(held, position), notCredited);
      result.push({
        network,
        currency,
        liability: unitsFromRowOrZero(users.rows[0]?.total, 'total'),
        desk,
        fees,
        gasFloat: await balanceOf(pool, SYSTEM_ACCOUNTS.gasFloat(network).code, currency),
        position,
        cold: negateUnits(await balanceOf(pool, SYSTEM_ACCOUNTS.coldStorage(network).code, currency)),
        holdings: held,
        uncredited: notCredited,
        inFlight: flight.rows[0]?.n ?? 0,
        pending: unitsFromRowOrZero(deposits.rows[0]?.pending, 'pending'),
        difference,
        matches: difference === undefined ? undefined : difference === 0n,
        holdingsError,
      });
    }
  }
  return result;
}
