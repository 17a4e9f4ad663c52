/**
 * `npm run custody -- exposure`: the desk's net position per asset (what swaps moved its inventory since it was
 * funded, less what hedges covered) in units and USD, and what networks charged the custody for withdrawals against
 * the fees users paid for them, per currency (issue 28 items 5 to 7). The hedge job (hedge.ts) reads the same figures.
 */
import type pg from 'pg';
import { unitsFromRow } from '../../db/amounts.ts';
import { unitsOf, type Units } from '../../../lib/money.ts';
import { formatUnits, parseDecimal, pow10 } from '../../../lib/amount.ts';
import { COINS, findCoin } from '../../../lib/currencies.ts';
import { PRICE_SCALE, type PriceTable } from '../../adapters/rates/port.ts';
import { SYSTEM_ACCOUNTS, systemAccountId } from '../ledger.ts';
import { DESK_ACCOUNT, DESK_FUNDING_KIND } from './desk.ts';
import { GAS_FUNDING_KIND } from '../gas-float.ts';

/** An amount of a base asset at 18 decimals (the most any coin has), so networks of one asset add up exactly. */
export const ASSET_DECIMALS = 18;

declare const assetBrand: unique symbol;
/**
 * An amount of a base asset at ASSET_DECIMALS, summed over its networks: a unit of its own, so it mixes neither with
 * the atomic units of one currency (`Units`) nor with a plain bigint without `toAsset` or `assetAmount`.
 */
export type AssetAmount = bigint & { readonly [assetBrand]: true };

/** A bigint known to be an AssetAmount (a sum of them, a parsed hedge fill). */
export const assetAmount = (value: bigint): AssetAmount => value as AssetAmount;

export type AssetExposure = {
  asset: string;
  /** What the desk holds now, over every network of the asset. */
  inventory: AssetAmount;
  /** What funding entries brought in. */
  funded: AssetAmount;
  /** Net of filled hedges: bought (+) and sold (−) on the exchange. */
  hedged: AssetAmount;
  /** inventory − funded + hedged: long (+) or short (−) against the market; ASSET_DECIMALS. */
  net: AssetAmount;
  /** `net` at the current price in USD, scaled by PRICE_SCALE; undefined without a current price. */
  usd: bigint | undefined;
};

/** Atomic units of a coin as an amount of its asset at ASSET_DECIMALS. */
export const toAsset = (units: Units, decimals: number): AssetAmount => assetAmount(units * pow10(ASSET_DECIMALS - decimals));

/** USD value of an amount at ASSET_DECIMALS, scaled by PRICE_SCALE, rounded toward zero. */
export function usdValue(amount: AssetAmount, price: bigint): bigint {
  return (amount * price) / pow10(ASSET_DECIMALS);
}

export async function deskExposure(pool: pg.Pool, table: PriceTable): Promise<AssetExposure[]> {
  const inventory = await pool.query<{ currency: string; available: string }>('SELECT currency, available::text AS available FROM ledger_balances WHERE ledger_account_id = $1', [DESK_ACCOUNT]);
  const funded = await pool.query<{ currency: string; total: string }>(
    `SELECT p.currency, sum(p.amount)::text AS total FROM ledger_postings p JOIN ledger_entries e ON e.id = p.entry_id
      WHERE e.kind = $2 AND p.ledger_account_id = $1 GROUP BY p.currency`,
    [DESK_ACCOUNT, DESK_FUNDING_KIND],
  );
  const hedges = await pool.query<{ asset: string; side: 'buy' | 'sell'; filled: string }>(`SELECT asset, side, filled FROM desk_hedges WHERE state = 'FILLED' AND filled IS NOT NULL`);
  const byAsset = new Map<string, AssetExposure>();
  const entry = (asset: string) => {
    let found = byAsset.get(asset);
    if (!found) {
      const zero = assetAmount(0n);
      found = { asset, inventory: zero, funded: zero, hedged: zero, net: zero, usd: undefined };
      byAsset.set(asset, found);
    }
    return found;
  };
  for (const row of inventory.rows) {
    const coin = findCoin(row.currency);
    if (!coin) continue;
    const item = entry(coin.baseCurrency);
    item.inventory = assetAmount(item.inventory + toAsset(unitsFromRow(row.available, 'available'), coin.decimals));
  }
  for (const row of funded.rows) {
    const coin = findCoin(row.currency);
    if (!coin) continue;
    const item = entry(coin.baseCurrency);
    item.funded = assetAmount(item.funded + toAsset(unitsFromRow(row.total, 'total'), coin.decimals));
  }
  for (const row of hedges.rows) {
    const units = parseDecimal(row.filled, ASSET_DECIMALS);
    const item = entry(row.asset);
    item.hedged = assetAmount(item.hedged + (row.side === 'buy' ? units : -units));
  }
  for (const item of byAsset.values()) {
    item.net = assetAmount(item.inventory - item.funded + item.hedged);
    const price = table.usd[item.asset];
    item.usd = price === undefined ? undefined : usdValue(item.net, price);
  }
  return [...byAsset.values()].sort((a, b) => a.asset.localeCompare(b.asset));
}

export type FeeCoverage = {
  currency: string;
  /** Withdrawal fees users paid (fee income of withdrawal entries), in the currency's units. */
  paid: Units;
  /** What the networks charged the custody for its transactions (booked from NETWORK_FEES or the gas float of the currency's network). */
  cost: Units;
};

/** Per currency, what users paid in withdrawal fees and what networks cost; a token's cost is in its network's coin. */
export async function feeCoverage(pool: pg.Pool): Promise<FeeCoverage[]> {
  const paid = await pool.query<{ currency: string; total: string }>(
    `SELECT p.currency, sum(p.amount)::text AS total FROM ledger_postings p JOIN ledger_entries e ON e.id = p.entry_id
      WHERE e.kind = 'WITHDRAWAL' AND p.ledger_account_id = $1 GROUP BY p.currency`,
    [systemAccountId(SYSTEM_ACCOUNTS.feeIncome())],
  );
  const networks = [...new Set(COINS.map((coin) => coin.network))];
  // NETWORK_FEES holds nothing but fees; a gas float also its fundings, left out.
  const cost = await pool.query<{ currency: string; total: string }>(
    `SELECT p.currency, (-sum(p.amount))::text AS total FROM ledger_postings p JOIN ledger_entries e ON e.id = p.entry_id
      WHERE p.ledger_account_id = ANY($1::uuid[]) AND e.kind <> $2 GROUP BY p.currency`,
    [[...networks.map((network) => systemAccountId(SYSTEM_ACCOUNTS.networkFees(network))), ...networks.map((network) => systemAccountId(SYSTEM_ACCOUNTS.gasFloat(network)))], GAS_FUNDING_KIND],
  );
  const rows = new Map<string, FeeCoverage>();
  for (const row of paid.rows) rows.set(row.currency, { currency: row.currency, paid: unitsFromRow(row.total, 'total'), cost: unitsOf(0n) });
  for (const row of cost.rows) rows.set(row.currency, { ...(rows.get(row.currency) ?? { currency: row.currency, paid: unitsOf(0n) }), cost: unitsFromRow(row.total, 'total') });
  return [...rows.values()].sort((a, b) => a.currency.localeCompare(b.currency));
}

/** A USD figure scaled by PRICE_SCALE, to cents. */
export function formatUsd(value: bigint): string {
  const cents = (value * 100n) / PRICE_SCALE;
  return formatUnits(cents, 2);
}

/** An asset amount at ASSET_DECIMALS as its coins show it. */
export function formatAsset(amount: AssetAmount): string {
  return formatUnits(amount, ASSET_DECIMALS);
}

