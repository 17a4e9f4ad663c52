/**
 * The swap desk (issue 28): the custodian's inventory per currency, on the ledger (SYSTEM_ACCOUNTS.swapDesk). A swap
 * buys the source from the user and sells the destination from the inventory, never below the currency's limit
 * (SWAP_INVENTORY_LIMITS; default 0: the desk sells only what it holds). Coins reach the desk by a funding entry
 * from the world: the devnet's at start in development, and `npm run custody -- fund-desk` against coins the
 * operator sent to the custody (the chain shows them; no user's deposit credits them).
 */
import { parseDecimal, pow10 } from '../../../lib/amount.ts';
import type { Units } from '../../../lib/money.ts';
import { unitsFromRowOrZero } from '../../db/amounts.ts';
import { findCoin } from '../../../lib/currencies.ts';
import { DomainError } from '../errors.ts';
import { SYSTEM_ACCOUNTS, systemAccountId, type PostedEntry, type Queryable } from '../ledger.ts';
import { transferEntry } from '../orders/entries.ts';
import { deskFundingEntry } from '../orders/entry-keys.ts';

export const DESK_ACCOUNT = systemAccountId(SYSTEM_ACCOUNTS.swapDesk());
export { DESK_FUNDING_KIND } from '../orders/entry-keys.ts';

/** The desk cannot sell that much of a currency now: nothing was quoted or moved. */
export class DeskInventoryError extends DomainError<'SWAP_DESK_INVENTORY'> {}

/** The lowest a currency's inventory may go, in its atomic units (a negative limit is a short the operator allows). */
export function inventoryFloor(limits: Readonly<Record<string, string>>, currency: string, decimals: number): bigint {
  const text = limits[currency];
  if (text === undefined) return 0n;
  const negative = text.startsWith('-');
  const places = Math.max(decimals, 18);
  const units = parseDecimal(negative ? text.slice(1) : text, places) / pow10(places - decimals);
  return negative ? -units : units;
}

/** The desk's inventory of a currency (available), read without a lock: for a quote's early answer. */
export async function inventoryOf(db: Queryable, currency: string): Promise<Units> {
  const row = await db.query<{ available: string }>('SELECT available::text AS available FROM ledger_balances WHERE ledger_account_id = $1 AND currency = $2', [DESK_ACCOUNT, currency]);
  return unitsFromRowOrZero(row.rows[0]?.available, 'available');
}

/** Refuses selling `units` when it would take `available` below the currency's floor. */
function refuseBelowFloor(available: Units, currency: string, units: Units, limits: Readonly<Record<string, string>>): void {
  const coin = findCoin(currency);
  if (!coin) throw new Error(`unknown currency ${currency}`);
  if (available - units < inventoryFloor(limits, currency, coin.decimals)) {
    throw new DeskInventoryError('SWAP_DESK_INVENTORY', `The wallet cannot sell that much ${currency} right now: try a smaller amount or later`, { details: { currency } });
  }
}

/** Whether the desk may sell `units` of a currency now by its last known inventory (a quote asks; the swap decides). */
export async function refuseBeyondInventory(db: Queryable, currency: string, units: Units, limits: Readonly<Record<string, string>>): Promise<void> {
  refuseBelowFloor(await inventoryOf(db, currency), currency, units, limits);
}

/**
 * Inside the swap's transaction, before its entry: locks the desk's row of the currency (created empty if it has none
 * yet, so a race on its first sale waits too) and refuses a sale below the floor. The entry that follows updates the
 * same row, so no other swap can pass the check on the same inventory meanwhile.
 */
export async function reserveInventory(db: Queryable, currency: string, units: Units, limits: Readonly<Record<string, string>>): Promise<void> {
  await db.query(
    `INSERT INTO ledger_balances (ledger_account_id, currency, available, on_hold, allow_negative) VALUES ($1, $2, 0, 0, true)
     ON CONFLICT (ledger_account_id, currency) DO NOTHING`,
    [DESK_ACCOUNT, currency],
  );
  const row = await db.query<{ available: string }>('SELECT available::text AS available FROM ledger_balances WHERE ledger_account_id = $1 AND currency = $2 FOR UPDATE', [DESK_ACCOUNT, currency]);
  refuseBelowFloor(unitsFromRowOrZero(row.rows[0]?.available, 'available'), currency, units, limits);
}

/** Coins from outside that become the desk's inventory: WORLD:<network> → desk, once per key. */
export async function fundDesk(db: Queryable, input: { currency: string; units: Units; key: string }): Promise<PostedEntry> {
  const coin = findCoin(input.currency);
  if (!coin) throw new Error(`unknown currency ${input.currency}`);
  if (input.units <= 0n) throw new RangeError('desk funding must be above zero');
  return transferEntry(db, deskFundingEntry(coin.currency, input.key), {
    from: systemAccountId(SYSTEM_ACCOUNTS.world(coin.network)),
    to: DESK_ACCOUNT,
    money: { currency: coin.currency, units: input.units },
  });
}
