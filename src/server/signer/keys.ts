/**
 * The public side of the custody's keys, kept in the database by the signer: the account extended public keys
 * (app_setting `wallet.xpubs`), written at the signer's start, and TON's public keys ahead of need
 * (custody_public_keys), a batch past the highest derivation index in use. The gateway and the worker build their
 * WalletKeys from them (`publicKeysFromDatabase`) and never see a private key.
 *
 * Each is authenticated (issue 31 review): the signer MACs what it records (HMAC-SHA256 under a key of its own purpose
 * derived from SIGNER_TOKEN, which the database does not hold), and the keyless processes, which share SIGNER_TOKEN
 * to talk to the signer anyway, verify before they derive: the gateway and the worker refuse to start on xpubs that
 * do not verify, and no TON address comes from a key that does not (the signer is asked to record it again, from
 * the seed; if it still does not verify, nothing is handed out). So whoever writes the database cannot swap the keys
 * and have users deposit to an address of theirs. SIGNER_TOKEN rather than asking the signer for the keys at each
 * start: the same check then covers TON's keys read one by one, and a gateway starts with the signer down.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type pg from 'pg';
import type { ChainEnv } from '../../lib/currencies.ts';
import type { WalletKeys, WalletSeed } from '../adapters/keys/port.ts';
import { accountXpubs, publicKeys } from '../adapters/keys/wallet-keys.ts';
import { HOT_WALLET_INDEX } from '../adapters/chains/devnet-signer.ts';
import { accountPaths } from '../domain/addresses.ts';
import type { Logger } from '../log.ts';

const XPUBS_SETTING = 'wallet.xpubs';
/** TON public keys derived past the highest index in use, so a new account's address needs no call to the signer. */
export const TON_POOL_AHEAD = 100;

type XpubRecord = { fingerprint: string; env: ChainEnv; xpubs: Record<string, string>; mac?: string };

const MAC_CONTEXT = 'wallet/custody-public-keys/v1';

/** MACs and checks what the signer records, under a key derived from SIGNER_TOKEN for this purpose alone. */
export type PublicKeyMac = {
  xpubs: (record: Omit<XpubRecord, 'mac'>) => string;
  key: (row: { network: string; index: number; publicKey: string; fingerprint: string }) => string;
};

export function publicKeyMac(token: string): PublicKeyMac {
  const key = createHmac('sha256', token).update(MAC_CONTEXT).digest();
  const mac = (value: unknown) => createHmac('sha256', key).update(JSON.stringify(value)).digest('hex');
  return {
    xpubs: (r) => mac(['xpubs', r.fingerprint, r.env, Object.entries(r.xpubs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]),
    key: (r) => mac(['key', r.network, r.index, r.publicKey.toLowerCase(), r.fingerprint]),
  };
}

const sameMac = (found: unknown, expected: string) => {
  const a = Buffer.from(typeof found === 'string' && /^[0-9a-f]{64}$/.test(found) ? found : '', 'hex');
  const b = Buffer.from(expected, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
};

/** The signer's start: the account xpubs of this seed under CHAIN_ENV, recorded (with their MAC) for everyone else. */
export async function recordXpubs(pool: pg.Pool, seed: WalletSeed, env: ChainEnv, mac: PublicKeyMac): Promise<void> {
  const figures = { fingerprint: seed.fingerprint, env, xpubs: accountXpubs(seed.bytes, accountPaths(env)) };
  const record: XpubRecord = { ...figures, mac: mac.xpubs(figures) };
  await pool.query(`INSERT INTO app_setting (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [XPUBS_SETTING, record]);
}

/**
 * Derives TON's public keys of the window of 2 × TON_POOL_AHEAD up to the newest account's index + TON_POOL_AHEAD
 * (and the hot wallet's, and `through` itself) that the pool lacks, each with its MAC; a row there whose key or MAC
 * is not this seed's (written before MACs, under another SIGNER_TOKEN, or changed in the database) is recorded
 * again from the seed. `repairAll`: every row is checked (the
 * signer's start), else only the ones derived now.
 */
export async function topUpTonKeys(pool: pg.Pool, keys: WalletKeys, mac: PublicKeyMac, options: { through?: number; repairAll?: boolean; log?: Pick<Logger, 'error'> } = {}): Promise<number> {
  const { through } = options;
  const used = await pool.query<{ high: number | null; have: number | null }>(
    `SELECT (SELECT max(derivation_index) FROM wallet_account_keys) AS high,
            (SELECT max(derivation_index) FROM custody_public_keys WHERE network = 'TON' AND derivation_index < $1) AS have`,
    [HOT_WALLET_INDEX],
  );
  const wanted = through !== undefined && through < HOT_WALLET_INDEX ? through : 0;
  const target = Math.max(wanted, used.rows[0]?.high ?? 0) + TON_POOL_AHEAD;
  if (!Number.isInteger(target) || target < 0 || target >= HOT_WALLET_INDEX) throw new RangeError(`no TON key pool up to ${target}`);
  // Only a window up to the newest account is kept ready: a wallet of a million accounts would otherwise derive a
  // million keys at the signer's first start. An older account's key is derived when it is asked for (`through`).
  const from = Math.max((used.rows[0]?.have ?? -1) + 1, target - 2 * TON_POOL_AHEAD);
  const wantedIndexes = new Set([HOT_WALLET_INDEX, ...Array.from({ length: Math.max(0, target - from + 1) }, (_, i) => from + i)]);
  if (through !== undefined && Number.isInteger(through) && through >= 0 && through <= HOT_WALLET_INDEX) wantedIndexes.add(through);
  // What is there already: kept when it verifies, else derived again (and said, when the key itself was not ours).
  const present = await pool.query<{ index: number; key: string; fingerprint: string; mac: string | null }>(
    `SELECT derivation_index AS index, public_key AS key, seed_fingerprint AS fingerprint, mac FROM custody_public_keys
      WHERE network = 'TON' AND ($1 OR derivation_index = ANY($2::int[]))`,
    [options.repairAll ?? false, [...wantedIndexes]],
  );
  const verified = new Set<number>();
  const suspect = new Map<number, string>();
  for (const row of present.rows) {
    if (row.fingerprint === keys.fingerprint && sameMac(row.mac, mac.key({ network: 'TON', index: row.index, publicKey: row.key, fingerprint: row.fingerprint }))) verified.add(row.index);
    else suspect.set(row.index, row.key);
  }
  const indexes = [...new Set([...wantedIndexes, ...suspect.keys()])].filter((index) => !verified.has(index));
  const rows = await Promise.all(indexes.map(async (index) => ({ index, key: Buffer.from((await keys.ed25519(index)).publicKey).toString('hex') })));
  for (const row of rows) {
    const stored = suspect.get(row.index);
    if (stored !== undefined && stored.toLowerCase() !== row.key) options.log?.error({ network: 'TON', index: row.index, stored, derived: row.key }, 'a custody public key in the database was not the seed\'s: recorded again from the seed');
  }
  const added = await pool.query(
    `INSERT INTO custody_public_keys (network, derivation_index, public_key, seed_fingerprint, mac)
     SELECT 'TON', unnest($1::int[]), unnest($2::text[]), $3, unnest($4::text[])
     ON CONFLICT (network, derivation_index) DO UPDATE SET public_key = EXCLUDED.public_key, seed_fingerprint = EXCLUDED.seed_fingerprint, mac = EXCLUDED.mac`,
    [rows.map((r) => r.index), rows.map((r) => r.key), keys.fingerprint, rows.map((r) => mac.key({ network: 'TON', index: r.index, publicKey: r.key, fingerprint: keys.fingerprint }))],
  );
  return added.rowCount ?? 0;
}

/** The recorded public keys do not verify: nothing is derived from them. */
export class PublicKeysUnverifiedError extends Error {}

/**
 * The keys of a process without the seed: the xpubs the signer recorded (this seed's, under this CHAIN_ENV, their
 * MAC verified), TON's from the pool (each MAC verified), asking `topUp` for a batch when one is missing or does not
 * verify. `mac` is made from the SIGNER_TOKEN this process shares with the signer.
 */
export async function publicKeysFromDatabase(pool: pg.Pool, env: ChainEnv, mac: PublicKeyMac, topUp: (through: number) => Promise<void>): Promise<WalletKeys> {
  const stored = await pool.query<{ value: XpubRecord }>('SELECT value FROM app_setting WHERE key = $1', [XPUBS_SETTING]);
  const record = stored.rows[0]?.value;
  if (!record) throw new Error('the signer has not recorded the wallet\'s public keys yet: start it first (npm run signer, or SIGNER=embedded outside production)');
  if (!record.xpubs || typeof record.xpubs !== 'object' || !sameMac(record.mac, mac.xpubs({ fingerprint: record.fingerprint, env: record.env, xpubs: record.xpubs }))) {
    throw new PublicKeysUnverifiedError(
      'the wallet\'s public keys in the database (app_setting wallet.xpubs) do not verify: changed in the database, recorded before they were authenticated, or under another SIGNER_TOKEN. Not started: no deposit address is derived from them. Start the signer (it records them again from the seed) with the same SIGNER_TOKEN as this process',
    );
  }
  const seed = await pool.query<{ value: { fingerprint?: string } }>(`SELECT value FROM app_setting WHERE key = 'wallet.seed'`);
  if (seed.rows[0]?.value.fingerprint !== record.fingerprint) throw new Error(`the recorded public keys (seed ${record.fingerprint}) are not of this database's seed (${seed.rows[0]?.value.fingerprint})`);
  if (record.env !== env) throw new Error(`the signer recorded public keys under CHAIN_ENV=${record.env}, this process runs CHAIN_ENV=${env}`);
  const read = async (index: number) => {
    const row = (
      await pool.query<{ key: string; mac: string | null }>(`SELECT public_key AS key, mac FROM custody_public_keys WHERE network = 'TON' AND derivation_index = $1 AND seed_fingerprint = $2`, [
        index,
        record.fingerprint,
      ])
    ).rows[0];
    if (!row) return undefined;
    return { key: row.key, verified: sameMac(row.mac, mac.key({ network: 'TON', index, publicKey: row.key, fingerprint: record.fingerprint })) };
  };
  return publicKeys(record, async (index) => {
    let key = await read(index);
    if (key === undefined || !key.verified) {
      await topUp(index);
      key = await read(index);
    }
    if (key === undefined) throw new Error(`the signer has no TON public key for derivation ${index}`);
    if (!key.verified) throw new PublicKeysUnverifiedError(`the TON public key of derivation ${index} in the database (custody_public_keys) does not verify, even after asking the signer: no address is derived from it`);
    return Buffer.from(key.key, 'hex');
  });
}
