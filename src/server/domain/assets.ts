/**
 * An account's assets (SPEC §3 balance item, §7 account currency): which currencies it shows, its balance in
 * each from the ledger, and its deposit address per network, derived from the HD seed on first need.
 */
import type pg from 'pg';
import { unitsFromRowOrZero } from '../db/amounts.ts';
import { formatUnits } from '../../lib/amount.ts';
import type { AssetItem } from '../../lib/wire/assets.ts';
import { COINS, findCoin, type CoinMeta, type Network } from '../../lib/currencies.ts';
import { ensureUserLedgerAccount, type Queryable } from './ledger.ts';
import { notifyAccountChanged } from './account-changes.ts';
import type { WalletKeys } from '../adapters/keys/port.ts';
import type { ChainAddressing } from '../adapters/chains/port.ts';
import { DomainError } from './errors.ts';
import type { accountAssets, depositAddresses, ledgerBalances, walletAccountKeys } from '../db/schema.ts';
import { inTransaction } from '../db/transaction.ts';
import type { DepositAddressGuard } from './deposit-address-guard.ts';

/** SPEC §3 account balance item: the wire type itself, so the gateway answers exactly what the browser reads. */
export type { AssetItem };

export class AssetError extends DomainError<'UNKNOWN_CURRENCY' | 'ASSET_NOT_FOUND'> {}

// A balance or an address may be missing (LEFT JOIN): null until the first posting or derivation.
type Nullable<T> = { [K in keyof T]: T[K] | null };
type AssetRow = Pick<typeof accountAssets.$inferSelect, 'currency'> &
  Nullable<Pick<typeof ledgerBalances.$inferSelect, 'available' | 'onHold'> & Pick<typeof depositAddresses.$inferSelect, 'address' | 'derivationIndex' | 'mac'>> & { network: Network };
type AccountKey = Pick<typeof walletAccountKeys.$inferSelect, 'derivationIndex' | 'seedFingerprint'>;

/**
 * The custody's keys (public ones are enough), its address rules under CHAIN_ENV, and the guard that seals and checks
 * the stored addresses (composition's `Custody` is one).
 */
export type AddressKeys = { keys: WalletKeys; addresses: ChainAddressing; addressGuard: DepositAddressGuard };

/** What the gateway offers in this environment (BTC_LNG is not offered in production). */
export type Offer = { coins: readonly CoinMeta[] };

// The currency → network table travels with the query, so one statement joins balances and addresses.
const CURRENCIES = COINS.map((c) => c.currency);
const NETWORK_OF = COINS.map((c) => c.network);

/** The assets an account shows, in catalogue order, with balances and deposit addresses (checked by `guard`): one query. */
export async function listAssets(db: Queryable, walletAccountId: string, offer: Offer, guard: DepositAddressGuard): Promise<AssetItem[]> {
  const result = await db.query<AssetRow>({
    name: 'assets_list',
    text: `SELECT a.currency, m.network, b.available, b.on_hold AS "onHold", d.address, d.derivation_index AS "derivationIndex", d.mac
             FROM account_assets a
             JOIN unnest($2::text[], $3::text[]) WITH ORDINALITY AS m(currency, network, position) ON m.currency = a.currency
             LEFT JOIN ledger_balances b ON b.ledger_account_id = a.wallet_account_id AND b.currency = a.currency
             LEFT JOIN deposit_addresses d ON d.wallet_account_id = a.wallet_account_id AND d.network = m.network
            WHERE a.wallet_account_id = $1 AND a.archived_at IS NULL
            ORDER BY m.position`,
    values: [walletAccountId, CURRENCIES, NETWORK_OF],
  });
  const offered = new Set(offer.coins.map((c) => c.currency));
  const items: AssetItem[] = [];
  for (const row of result.rows) {
    const coin = findCoin(row.currency);
    if (!coin || !offered.has(coin.currency)) continue;
    items.push({
      currency: coin.currency,
      isCrypto: true,
      isToken: coin.token,
      totalAvailable: formatUnits(unitsFromRowOrZero(row.available, 'available'), coin.decimals),
      onHold: formatUnits(unitsFromRowOrZero(row.onHold, 'onHold'), coin.decimals),
      depositAddress: await checkedAddress(db, guard, walletAccountId, row),
    });
  }
  return items;
}

function checkedAddress(db: Queryable, guard: DepositAddressGuard, walletAccountId: string, row: AssetRow): Promise<string | null> | null {
  if (row.address === null || row.derivationIndex === null) return null;
  return guard.check(db, { network: row.network, address: row.address, walletAccountId, derivationIndex: row.derivationIndex, mac: row.mac }).then((address) => address ?? null);
}

/** Adds (or brings back) currencies to an account, with a deposit address on each network they use. */
export async function addAssets(pool: pg.Pool, walletAccountId: string, currencies: readonly string[], offer: Offer, keys: AddressKeys): Promise<void> {
  const coins = currencies.map((currency) => {
    const coin = offer.coins.find((c) => c.currency === currency && c.active);
    if (!coin) throw new AssetError('UNKNOWN_CURRENCY', `${currency} is not a currency this wallet offers`);
    return coin;
  });
  const networks = [...new Set(coins.map((c) => c.network))];
  // Derivation is CPU work outside the transaction; the index it needs is allocated first.
  const index = await derivationIndex(pool, walletAccountId, keys.keys);
  const addresses = await Promise.all(networks.map(async (network) => ({ network, address: await keys.addresses.derive(keys.keys, network, index) })));
  await inTransaction(pool, async (client) => {
    await ensureUserLedgerAccount(client, walletAccountId);
    await client.query(
      `INSERT INTO account_assets (wallet_account_id, currency) SELECT $1, unnest($2::text[])
       ON CONFLICT (wallet_account_id, currency) DO UPDATE SET archived_at = NULL`,
      [walletAccountId, coins.map((c) => c.currency)],
    );
    await insertAddresses(client, walletAccountId, index, addresses, keys.addressGuard);
    await notifyAccountChanged(client, walletAccountId);
  });
}

/** Hides a currency from the account; its balance stays in the ledger and shows again when it is re-added. */
export async function archiveAsset(db: Queryable, walletAccountId: string, currency: string): Promise<void> {
  const result = await db.query(
    `WITH archived AS (
       UPDATE account_assets SET archived_at = coalesce(archived_at, now()) WHERE wallet_account_id = $1 AND currency = $2 RETURNING 1)
     SELECT pg_notify('wallet_account_changed', $1::text) FROM archived`,
    [walletAccountId, currency],
  );
  if (result.rowCount === 0) throw new AssetError('ASSET_NOT_FOUND', `${currency} is not among this account's assets`);
}

/** The account's place in the HD tree: allocated once, in sequence, by the database. */
async function derivationIndex(db: Queryable, walletAccountId: string, seed: Pick<WalletKeys, 'fingerprint'>, retried = false): Promise<number> {
  const result = await db.query<AccountKey>(
    // The insert runs only when the account has no index yet: an insert that meets the conflict would still draw
    // the next identity value, and every added asset would leave a gap a standard wallet's gap limit (20) misses.
    `WITH existing AS (SELECT derivation_index, seed_fingerprint FROM wallet_account_keys WHERE wallet_account_id = $1),
     created AS (
       INSERT INTO wallet_account_keys (wallet_account_id, seed_fingerprint) SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM existing)
       ON CONFLICT (wallet_account_id) DO NOTHING RETURNING derivation_index, seed_fingerprint)
     SELECT derivation_index AS "derivationIndex", seed_fingerprint AS "seedFingerprint" FROM created
     UNION ALL SELECT derivation_index, seed_fingerprint FROM existing
     LIMIT 1`,
    [walletAccountId, seed.fingerprint],
  );
  const row = result.rows[0];
  // A concurrent first request committed its row after this statement's snapshot: read it again.
  if (!row && !retried) return derivationIndex(db, walletAccountId, seed, true);
  if (!row) throw new Error('no derivation index');
  if (row.seedFingerprint !== seed.fingerprint) {
    // Our fault, not the client's: a 500 and an alarm in the log.
    throw new Error('this account was set up under another wallet seed: WALLET_SEED or DATA_DIR changed');
  }
  return row.derivationIndex;
}

async function insertAddresses(db: Queryable, walletAccountId: string, index: number, addresses: readonly { network: Network; address: string }[], guard: DepositAddressGuard): Promise<void> {
  if (addresses.length === 0) return;
  await db.query(
    `INSERT INTO deposit_addresses (network, address, wallet_account_id, derivation_index, mac)
     SELECT n, a, $1, $2, m FROM unnest($3::text[], $4::text[], $5::text[]) AS t(n, a, m)
     ON CONFLICT DO NOTHING`,
    [walletAccountId, index, addresses.map((a) => a.network), addresses.map((a) => a.address), addresses.map((a) => guard.seal({ ...a, walletAccountId, derivationIndex: index }))],
  );
}

/** Reads an account's assets through a per-process cache that account-change notifications keep exact. */
export type AssetReader = {
  /** The asset list as the JSON the gateway sends. */
  json(walletAccountId: string): Promise<string>;
  /** That JSON when memory holds it and may serve it now (what `json` answers without a read), else undefined. */
  cached(walletAccountId: string): string | undefined;
  /** Read from the database now (after a change made by this request), refreshing the cache. */
  fresh(walletAccountId: string): Promise<AssetItem[]>;
  invalidate(walletAccountId: string): void;
  /** A change to the account is under way in this process: read through to the database until `invalidate`. */
  changing(walletAccountId: string): void;
  clear(): void;
};

/** How long an uncommitted local change keeps an account out of the cache if no notification ever confirms it. */
const CHANGING_MS = 5_000;

const CACHE_LIMIT = 100_000;

/**
 * Balances are polled every 10 s by every open app, so they are served from memory. An entry lives at most
 * `ttlMs` (a safety net), is dropped when a notification says the account changed, and nothing is cached while
 * notifications are not known to arrive (`trusted` false). A read that overlapped a change is not stored. Requests
 * that miss while a read of the account is under way, begun after its last change, wait for that read instead of
 * each making its own: a change to a busy account costs one read, not one per request in flight.
 */
export function createAssetReader(pool: pg.Pool, offer: Offer, options: { ttlMs: number; trusted: () => boolean; guard: DepositAddressGuard }): AssetReader {
  const cache = new Map<string, { json: string; until: number }>();
  // A logical clock: a read may fill the cache only if no change to its account (or reset) came after it began.
  const changedAt = new Map<string, number>();
  let clearedAt = 0;
  let clock = 0;
  // Accounts a transaction of this process is changing, until its notification arrives (or CHANGING_MS passes).
  const changing = new Map<string, number>();
  const isChanging = (account: string) => {
    const until = changing.get(account);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    changing.delete(account);
    return false;
  };

  const load = async (account: string) => {
    const ticket = clock;
    const items = await listAssets(pool, account, offer, options.guard);
    const json = JSON.stringify(items);
    if (options.trusted() && !isChanging(account) && Math.max(changedAt.get(account) ?? 0, clearedAt) <= ticket) {
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(account, { json, until: Date.now() + options.ttlMs });
    }
    return { items, json };
  };

  // Reads under way, by account, with the clock when each began.
  const reading = new Map<string, { ticket: number; json: Promise<string> }>();

  const reader: AssetReader = {
    cached(account) {
      const hit = cache.get(account);
      return hit && hit.until > Date.now() && options.trusted() && !isChanging(account) ? hit.json : undefined;
    },
    async json(account) {
      const hit = reader.cached(account);
      if (hit !== undefined) return hit;
      if (!options.trusted() || isChanging(account)) return (await load(account)).json;
      const under = reading.get(account);
      if (under && under.ticket >= Math.max(changedAt.get(account) ?? 0, clearedAt)) return under.json;
      const read = { ticket: clock, json: load(account).then((loaded) => loaded.json) };
      reading.set(account, read);
      try {
        return await read.json;
      } finally {
        if (reading.get(account) === read) reading.delete(account);
      }
    },
    async fresh(account) {
      reader.invalidate(account);
      return (await load(account)).items;
    },
    changing(account) {
      if (changing.size >= CACHE_LIMIT) changing.clear();
      changing.set(account, Date.now() + CHANGING_MS);
      reader.invalidate(account);
    },
    invalidate(account) {
      changing.delete(account);
      cache.delete(account);
      if (changedAt.size >= CACHE_LIMIT) reader.clear();
      changedAt.set(account, ++clock);
    },
    clear() {
      changing.clear();
      cache.clear();
      changedAt.clear();
      clearedAt = ++clock;
    },
  };
  return reader;
}
