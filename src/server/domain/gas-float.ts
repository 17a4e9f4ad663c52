/**
 * The hot wallet's gas float (issue 29 item 5): on ETHEREUM, TRON and TON (GAS_FLOAT_NETWORKS) the hot wallet keeps
 * some of the network's coin to pay the fees of token withdrawals, sweeps and the gas top-ups of deposit addresses.
 * It is on the ledger: GAS_FLOAT:<network>, funded WORLD → GAS_FLOAT by a recorded top-up, and every fee the network
 * charges the custodian there (withdrawals, sweeps, top-ups, cold sweeps) booked GAS_FLOAT → WORLD (ledger.ts,
 * networkFeePayer). So −WORLD is what the chain holds and `npm run custody -- balances` matches when nothing is wrong.
 *
 * A top-up is recorded, not guessed: `npm run custody -- fund-gas <network> <amount> [key]` after the operator sent
 * the coins, only as far as the chain shows coins the ledger does not count (custody-funding.ts). Coins arriving on
 * the hot wallet unrecorded stay a difference in the balances: they may be a user's misdirected deposit. In
 * development the devnet's float is booked once at the first start (the devnet's hot wallet has no balance to check).
 */
import type pg from 'pg';
import { NETWORK_INFO, NETWORKS, findCoin, type Network } from '../../lib/currencies.ts';
import type { Units } from '../../lib/money.ts';
import { CustodyFundingError, fundFromSurplus, fundingUnits, type Funded, type FundingChain } from './custody-funding.ts';
import { GAS_FLOAT_NETWORKS, SYSTEM_ACCOUNTS, systemAccountId, type PostedEntry, type Queryable } from './ledger.ts';
import { transferEntry } from './orders/entries.ts';
import { gasFundingEntry } from './orders/entry-keys.ts';

export { GAS_FUNDING_KIND } from './orders/entry-keys.ts';

/** The network's coin from outside becomes the gas float: WORLD:<network> → GAS_FLOAT:<network>, once per key. */
export async function fundGas(db: Queryable, input: { network: Network; units: Units; key: string }): Promise<PostedEntry> {
  if (!GAS_FLOAT_NETWORKS.includes(input.network)) throw new RangeError(`${input.network} keeps no gas float`);
  if (input.units <= 0n) throw new RangeError('a gas funding must be above zero');
  const currency = NETWORK_INFO[input.network].coin;
  return transferEntry(db, gasFundingEntry(input.network, input.key), {
    from: systemAccountId(SYSTEM_ACCOUNTS.world(input.network)),
    to: systemAccountId(SYSTEM_ACCOUNTS.gasFloat(input.network)),
    money: { currency, units: input.units },
  });
}

/** The network a `fund-gas` argument names: the network (ETHEREUM) or its coin (ETH), in any case. */
function gasNetwork(name: string): Network {
  const upper = name.trim().toUpperCase();
  const network = NETWORKS.find((n) => n === upper) ?? NETWORKS.find((n) => NETWORK_INFO[n].coin === upper);
  if (!network) throw new CustodyFundingError('UNKNOWN_CURRENCY', `${name} is not a network this custody runs`);
  if (!GAS_FLOAT_NETWORKS.includes(network)) throw new CustodyFundingError('VALIDATION', `${network} keeps no gas float (its fees come out of the outputs it spends): gas floats are on ${GAS_FLOAT_NETWORKS.join(', ')}`);
  return network;
}

/** `npm run custody -- fund-gas <network> <amount> [key]`: books coins the operator sent to the hot wallet as its gas float. */
export async function fundGasFromChain(pool: pg.Pool, chain: FundingChain, input: { network: string; amount: string; key?: string | undefined }): Promise<Funded & { network: Network; currency: string }> {
  const network = gasNetwork(input.network);
  const coin = findCoin(NETWORK_INFO[network].coin);
  if (!coin) throw new Error(`no coin for ${network}`);
  const units = fundingUnits(chain, coin, input.amount);
  const funded = await fundFromSurplus(pool, chain, coin, units, (db) => fundGas(db, { network, units, key: input.key ?? units.toString() }));
  return { ...funded, network, currency: coin.currency };
}
