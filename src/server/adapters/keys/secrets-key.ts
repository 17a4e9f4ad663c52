/**
 * The key-encryption key of what the database keeps secret: SECRETS_KEY (32 bytes, hex or base64) where given,
 * else, outside production, a key generated once into DATA_DIR (mode 0600) and reused by every process on it.
 * `seal`/`open` (AES-256-GCM) keep secrets the server must read back (signing keys, webhook secrets);
 * `keyedHash` (HMAC-SHA256) keeps values it only has to recognise (refresh tokens, mailed codes). A row read from
 * the database is then of no use without the key, which never enters the database.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import type { Logger } from '../../log.ts';
import type { SealedSettings, SecretsKey } from './port.ts';
import { createFileOnce } from './seed.ts';

export const SECRETS_KEY_FILE = 'secrets-key.txt';
const SEALED = 's1:';
/** How every keyed hash starts (SecretsKey.keyedHashPrefix). */
const KEYED_HASH_PREFIX = 'k1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FINGERPRINT_SETTING = 'secrets.key';

type Queryable = Pick<pg.Pool, 'query'>;

/** A key that cannot be used; its message is one line naming the variable or file to fix. */
export class SecretsKeyError extends Error {
  readonly code = 'SECRETS_KEY';
}

export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(SEALED);
}

/** 64 hex characters, or base64 (or base64url) of exactly 32 bytes; undefined for anything else. */
export function parseSecretsKey(text: string): Buffer | undefined {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) return undefined;
  const bytes = Buffer.from(value.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
  return bytes.length === 32 ? bytes : undefined;
}

type KeyParts = { sealKey: Buffer; hashKey: Buffer; fingerprint: string };

function keyParts(key: Uint8Array): KeyParts {
  // One subkey per use, so a hash never reveals anything about the encryption key and the other way round.
  const derive = (use: string) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `wallet secrets: ${use}`, 32));
  return { sealKey: derive('seal'), hashKey: derive('lookup'), fingerprint: createHmac('sha256', derive('fingerprint')).update('fingerprint').digest('hex').slice(0, 16) };
}

function openWith(parts: KeyParts, raw: Buffer, purpose: string): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', parts.sealKey, raw.subarray(0, IV_BYTES)).setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * The key `key` seals and hashes under; `previous` keys (SECRETS_KEY_PREVIOUS, a rotation under way) still open what
 * they sealed and still match what they hashed, until `npm run secrets:reseal` has moved everything to `key`.
 */
export function secretsKeyFrom(key: Uint8Array, source: SecretsKey['source'], previous: readonly Uint8Array[] = []): SecretsKey {
  const current = keyParts(key);
  const older = previous.map(keyParts).filter((parts) => parts.fingerprint !== current.fingerprint);
  const hashWith = (parts: KeyParts, value: string, purpose: string) => KEYED_HASH_PREFIX + createHmac('sha256', parts.hashKey).update(`${purpose}\0${value}`, 'utf8').digest('base64url');
  const raw = (sealed: string, purpose: string) => {
    if (!isSealed(sealed)) throw new SecretsKeyError(`${purpose} in the database is not sealed`);
    return Buffer.from(sealed.slice(SEALED.length), 'base64url');
  };
  return {
    seal(plaintext, purpose) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current.sealKey, iv).setAAD(Buffer.from(purpose, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return SEALED + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    open(sealed, purpose) {
      const bytes = raw(sealed, purpose);
      for (const parts of [current, ...older]) {
        const plaintext = openWith(parts, bytes, purpose);
        if (plaintext !== undefined) return plaintext;
      }
      const keys = older.length > 0 ? 'SECRETS_KEY nor SECRETS_KEY_PREVIOUS' : 'this SECRETS_KEY';
      throw new SecretsKeyError(`${purpose} in the database cannot be opened with ${keys}`);
    },
    sealedWithCurrent(sealed, purpose) {
      return isSealed(sealed) && openWith(current, raw(sealed, purpose), purpose) !== undefined;
    },
    keyedHash: (value, purpose) => hashWith(current, value, purpose),
    keyedHashes: (value, purpose) => [current, ...older].map((parts) => hashWith(parts, value, purpose)),
    keyedHashPrefix: KEYED_HASH_PREFIX,
    fingerprint: current.fingerprint,
    previousFingerprints: older.map((parts) => parts.fingerprint),
    source,
  };
}

export type SecretsKeyOptions = { value: string | undefined; previous?: string | undefined; dataDir: string; production: boolean };

/**
 * Reads SECRETS_KEY, or outside production the development key in DATA_DIR (generated on first start, loudly), and
 * SECRETS_KEY_PREVIOUS (comma-separated keys a rotation moves away from).
 */
export async function loadSecretsKey(options: SecretsKeyOptions, log: Logger): Promise<SecretsKey> {
  const previous = (options.previous ?? '')
    .split(',')
    .map((text) => text.trim())
    .filter((text) => text.length > 0)
    .map((text, index) => {
      const key = parseSecretsKey(text);
      if (!key) throw new SecretsKeyError(`SECRETS_KEY_PREVIOUS is invalid (key ${index + 1}): each comma-separated key is 32 bytes as 64 hex characters or base64`);
      return key;
    });
  if (options.value !== undefined) {
    const key = parseSecretsKey(options.value);
    if (!key) throw new SecretsKeyError('SECRETS_KEY is invalid: it must be 32 random bytes as 64 hex characters or base64 (openssl rand -base64 32)');
    return secretsKeyFrom(key, 'env', previous);
  }
  if (options.production) throw new SecretsKeyError('SECRETS_KEY must be set in production: 32 random bytes, base64 (openssl rand -base64 32), from your key store');
  const file = join(options.dataDir, SECRETS_KEY_FILE);
  let text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) {
    text = await createFileOnce(options.dataDir, file, `${randomBytes(32).toString('base64')}\n`);
    log.warn({ file }, 'development SECRETS_KEY generated into DATA_DIR: set SECRETS_KEY from a key store in production');
  }
  const key = parseSecretsKey(text);
  if (!key) throw new SecretsKeyError(`${file} does not hold a valid SECRETS_KEY (32 bytes, hex or base64)`);
  return secretsKeyFrom(key, 'file', previous);
}

type KeyRecord = { fingerprint?: string; next?: string };

async function readKeyRecord(pool: Queryable): Promise<KeyRecord> {
  return (await pool.query<{ value: KeyRecord }>('SELECT value FROM app_setting WHERE key = $1', [FINGERPRINT_SETTING])).rows[0]?.value ?? {};
}

/**
 * The database remembers the fingerprint of its key: starting with another key would leave its secrets unreadable.
 * A rotation: the new key with the remembered one among SECRETS_KEY_PREVIOUS starts, and is remembered as the key
 * under way (`next`), so no third key seals beside it and a start with the old key alone is refused until
 * `finishSecretsKeyRotation` (the re-seal's last step) makes it the database's key.
 */
export async function checkSecretsKey(pool: Queryable, key: SecretsKey): Promise<void> {
  await pool.query('INSERT INTO app_setting (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [FINGERPRINT_SETTING, { fingerprint: key.fingerprint }]);
  let stored = await readKeyRecord(pool);
  const where = key.source === 'file' ? ` (read from DATA_DIR's ${SECRETS_KEY_FILE}: set SECRETS_KEY or DATA_DIR back)` : ': set SECRETS_KEY back';
  if (stored.fingerprint === key.fingerprint) {
    // A rotation turned back (the new key now among the previous ones) goes on towards this key.
    if (stored.next === undefined || key.previousFingerprints.includes(stored.next)) return;
    throw new SecretsKeyError(
      `this database is being moved to another SECRETS_KEY (fingerprint ${stored.next}): start with that key as SECRETS_KEY and this one (${key.fingerprint}) in SECRETS_KEY_PREVIOUS until npm run secrets:reseal has finished`,
    );
  }
  if (stored.fingerprint === undefined || !key.previousFingerprints.includes(stored.fingerprint)) {
    const rotating = key.previousFingerprints.length > 0 ? ` nor one of SECRETS_KEY_PREVIOUS (${key.previousFingerprints.join(', ')})` : '';
    const hint = stored.next === key.fingerprint ? ': the re-seal has not finished, so give the old key in SECRETS_KEY_PREVIOUS' : where;
    throw new SecretsKeyError(`SECRETS_KEY (fingerprint ${key.fingerprint})${rotating} is not the key this database's secrets were sealed with (${stored.fingerprint})${hint}`);
  }
  // The database's key is among the previous ones: a rotation to this key starts, or goes on.
  if (stored.next === undefined) {
    await pool.query(`UPDATE app_setting SET value = value || jsonb_build_object('next', $2::text), updated_at = now() WHERE key = $1 AND NOT value ? 'next'`, [FINGERPRINT_SETTING, key.fingerprint]);
    stored = await readKeyRecord(pool);
  }
  if (stored.next !== key.fingerprint) {
    throw new SecretsKeyError(`another new SECRETS_KEY (fingerprint ${stored.next}) is already sealing in this database: finish that rotation (npm run secrets:reseal) before starting another`);
  }
}

/** The re-seal's last step: every sealed value is under the current key, which becomes the database's only key. */
export async function finishSecretsKeyRotation(pool: Queryable, key: SecretsKey): Promise<void> {
  await pool.query('UPDATE app_setting SET value = $2, updated_at = now() WHERE key = $1', [FINGERPRINT_SETTING, { fingerprint: key.fingerprint }]);
}

/** Loads the key and checks it against the database: what every process calls once at its start. */
export async function openSecretsKey(options: SecretsKeyOptions, log: Logger, pool: Queryable): Promise<SecretsKey> {
  const key = await loadSecretsKey(options, log);
  await checkSecretsKey(pool, key);
  return key;
}

/**
 * Moves every sealed app_setting row (`{ sealed }`) to the current key. Each row moves alone and only from the value
 * it was read with, so the re-seal can stop anywhere and run again; a row already under the key is left. `onMoved`
 * is told of each row moved. Returns how many moved.
 */
export async function resealSettings(pool: Queryable, key: SecretsKey, onMoved: (name: string) => void = () => {}): Promise<number> {
  const rows = await pool.query<{ key: string; value: { sealed: string } }>(`SELECT key, value FROM app_setting WHERE jsonb_typeof(value->'sealed') = 'string' ORDER BY key`);
  let moved = 0;
  for (const row of rows.rows) {
    if (!isSealed(row.value.sealed) || key.sealedWithCurrent(row.value.sealed, row.key)) continue;
    const resealed = { ...row.value, sealed: key.seal(key.open(row.value.sealed, row.key), row.key) };
    const result = await pool.query('UPDATE app_setting SET value = $2, updated_at = now() WHERE key = $1 AND value = $3::jsonb', [row.key, resealed, JSON.stringify(row.value)]);
    moved += result.rowCount ?? 0;
    if (result.rowCount) onMoved(row.key);
  }
  return moved;
}

/**
 * A value kept sealed in app_setting under `name`. Unset, `fresh` makes it once, whichever process comes first; a
 * plaintext value from before sealing (`parse` accepts it) is sealed in place. `parse` checks the value's shape.
 */
export async function loadSealedSetting<T>(
  pool: Queryable,
  key: SecretsKey,
  name: string,
  options: { parse: (value: unknown) => T | undefined; fresh: () => T | Promise<T> },
): Promise<T> {
  const read = async () => (await pool.query<{ value: unknown }>('SELECT value FROM app_setting WHERE key = $1', [name])).rows[0]?.value;
  let stored = await read();
  if (stored === undefined) {
    const fresh = await options.fresh();
    await pool.query('INSERT INTO app_setting (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [name, { sealed: key.seal(JSON.stringify(fresh), name) }]);
    stored = await read();
  }
  const sealed = (stored as { sealed?: unknown } | undefined)?.sealed;
  const value = options.parse(isSealed(sealed) ? JSON.parse(key.open(sealed, name)) : stored);
  if (value === undefined) throw new Error(`app_setting ${name} does not hold what it should`);
  if (!isSealed(sealed)) {
    // Only the plaintext row as read is replaced: a process that sealed it first keeps its (equal) value.
    await pool.query('UPDATE app_setting SET value = $2, updated_at = now() WHERE key = $1 AND value = $3::jsonb', [
      name,
      { sealed: key.seal(JSON.stringify(value), name) },
      JSON.stringify(stored),
    ]);
  }
  return value;
}

/** Replaces the sealed value under `name` (a rotation). */
export async function saveSealedSetting(pool: Queryable, key: SecretsKey, name: string, value: unknown): Promise<void> {
  await pool.query(
    `INSERT INTO app_setting (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now()`,
    [name, { sealed: key.seal(JSON.stringify(value), name) }],
  );
}

/** The sealed settings of one database, for those who must not know the pool or the key's sealing. */
export function createSealedSettings(pool: Queryable, key: SecretsKey): SealedSettings {
  return {
    load: (name, options) => loadSealedSetting(pool, key, name, options),
    save: (name, value) => saveSealedSetting(pool, key, name, value),
  };
}
