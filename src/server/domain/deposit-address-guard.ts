/**
 * A stored deposit address is only shown, handed to the card on-ramp as where the coins go, or credited for what it
 * receives (deposits.ts) when it is the one the custody's keys give its account: each row carries a MAC under
 * SECRETS_KEY (`keyedHash`, which a rotation keeps valid) over its network, address, account and derivation index,
 * set when the address is derived. Someone who can
 * write to the database but holds no SECRETS_KEY cannot put their own address before a user, or move an address to
 * another account: a MAC that does not hold withholds the address (logged as an error). A rotation's re-seal
 * (`npm run secrets:reseal`) moves the MACs to the new key (`rekeyDepositAddresses`). A row made before the MAC (none
 * stored) is sealed only when it is both the address the public keys give at its index and at the index its account
 * was given (wallet_account_keys, unique per account): a swapped address fails the first, a row moved to another
 * account with its MAC cleared the second (README, "Keys and the signer").
 */
import type { Network } from '../../lib/currencies.ts';
import type { ChainAddressing } from '../adapters/chains/port.ts';
import type { SecretsKey, WalletKeys } from '../adapters/keys/port.ts';
import type { Logger } from '../log.ts';
import type { Queryable } from './ledger.ts';

const PURPOSE = 'deposit-address';

/** What the MAC is over: the row's network, address, account and derivation index. */
const text = (row: StoredAddress) => `${row.network}\0${row.address}\0${row.walletAccountId}\0${row.derivationIndex}`;

export type StoredAddress = { network: string; address: string; walletAccountId: string; derivationIndex: number };

export type DepositAddressGuard = {
  /** The MAC to store beside an address just derived from the keys. */
  seal(row: StoredAddress): string;
  /**
   * The stored address when it is the custody's for that account, else undefined (logged). A row from before the MAC
   * whose keys cannot be read now is withheld too, unless `uncheckable: 'throw'`: then the error is thrown, for a
   * caller that must try again later rather than pass the row by (the deposit scanner, whose cursor moves on).
   */
  check(db: Queryable, row: StoredAddress & { mac: string | null }, options?: { uncheckable?: 'withhold' | 'throw' }): Promise<string | undefined>;
};

export function createDepositAddressGuard(deps: { secrets: SecretsKey; keys: WalletKeys; addresses: Pick<ChainAddressing, 'derive'>; log: Pick<Logger, 'error'> }): DepositAddressGuard {
  const seal = (row: StoredAddress) => deps.secrets.keyedHash(text(row), PURPOSE);
  return {
    seal,
    async check(db, row, options) {
      if (row.mac === seal(row)) return row.address;
      const where = { network: row.network, account: row.walletAccountId, index: row.derivationIndex };
      if (row.mac !== null) {
        if (deps.secrets.keyedHashes(text(row), PURPOSE).includes(row.mac)) return row.address;
        deps.log.error(where, "a stored deposit address's MAC does not hold: withheld");
        return undefined;
      }
      let derived: string;
      try {
        derived = await deps.addresses.derive(deps.keys, row.network as Network, row.derivationIndex);
      } catch (error) {
        if (options?.uncheckable === 'throw') throw new Error(`the deposit address ${row.network}/${row.derivationIndex} could not be checked against the keys`, { cause: error });
        deps.log.error({ ...where, err: error }, 'a stored deposit address could not be checked against the keys: withheld');
        return undefined;
      }
      if (derived !== row.address) {
        deps.log.error(where, 'a stored deposit address is not the one the keys give: withheld');
        return undefined;
      }
      const owner = await db.query('SELECT 1 FROM wallet_account_keys WHERE wallet_account_id = $1 AND derivation_index = $2', [row.walletAccountId, row.derivationIndex]);
      if (owner.rowCount === 0) {
        deps.log.error(where, 'a stored deposit address is not at the index its account was given: withheld');
        return undefined;
      }
      await db.query('UPDATE deposit_addresses SET mac = $3 WHERE network = $1 AND address = $2 AND mac IS NULL', [row.network, row.address, seal(row)]);
      return row.address;
    },
  };
}

const REKEY_PAGE = 5_000;

/**
 * A SECRETS_KEY rotation's step for deposit addresses: every MAC made under a previous key is made again under the
 * current one (one that holds under no key is left as it is: it stays withheld). Returns how many moved.
 */
export async function rekeyDepositAddresses(pool: Pick<Queryable, 'query'>, secrets: SecretsKey): Promise<number> {
  if (secrets.previousFingerprints.length === 0) return 0;
  let moved = 0;
  let after: [string, string] = ['', ''];
  for (;;) {
    const page = await pool.query<StoredAddress & { mac: string }>(
      `SELECT network, address, wallet_account_id AS "walletAccountId", derivation_index AS "derivationIndex", mac FROM deposit_addresses
        WHERE mac IS NOT NULL AND (network, address) > ($1, $2) ORDER BY network, address LIMIT ${REKEY_PAGE}`,
      after,
    );
    for (const row of page.rows) {
      const current = secrets.keyedHash(text(row), PURPOSE);
      if (row.mac === current || !secrets.keyedHashes(text(row), PURPOSE).includes(row.mac)) continue;
      const updated = await pool.query('UPDATE deposit_addresses SET mac = $4 WHERE network = $1 AND address = $2 AND mac = $3', [row.network, row.address, row.mac, current]);
      moved += updated.rowCount ?? 0;
    }
    const last = page.rows.at(-1);
    if (!last || page.rows.length < REKEY_PAGE) return moved;
    after = [last.network, last.address];
  }
}
