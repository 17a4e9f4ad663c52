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

export function secretsKeyFrom(key: Uint8Array, source: SecretsKey['source']): SecretsKey {
  // One subkey per use, so a hash never reveals anything about the encryption key and the other way round.
  const derive = (use: string) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `wallet secrets: ${use}`, 32));
  const sealKey = derive('seal');
  const hashKey = derive('lookup');
  return {
    seal(plaintext, purpose) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', sealKey, iv).setAAD(Buffer.from(purpose, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return SEALED + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    open(sealed, purpose) {
      if (!isSealed(sealed)) throw new SecretsKeyError(`${purpose} in the database is not sealed`);
      const raw = Buffer.from(sealed.slice(SEALED.length), 'base64url');
      try {
        const decipher = createDecipheriv('aes-256-gcm', sealKey, raw.subarray(0, IV_BYTES)).setAAD(Buffer.from(purpose, 'utf8'));
        decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch (cause) {
        throw new SecretsKeyError(`${purpose} in the database cannot be opened with this SECRETS_KEY`, { cause });
      }
    },
    keyedHash(value, purpose) {
      return KEYED_HASH_PREFIX + createHmac('sha256', hashKey).update(`${purpose}\0${value}`, 'utf8').digest('base64url');
    },
    keyedHashPrefix: KEYED_HASH_PREFIX,
    fingerprint: createHmac('sha256', derive('fingerprint')).update('fingerprint').digest('hex').slice(0, 16),
    source,
  };
}

/** Reads SECRETS_KEY, or outside production the development key in DATA_DIR (generated on first start, loudly). */
export async function loadSecretsKey(options: { value: string | undefined; dataDir: string; production: boolean }, log: Logger): Promise<SecretsKey> {
  if (options.value !== undefined) {
    const key = parseSecretsKey(options.value);
    if (!key) throw new SecretsKeyError('SECRETS_KEY is invalid: it must be 32 random bytes as 64 hex characters or base64 (openssl rand -base64 32)');
    return secretsKeyFrom(key, 'env');
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
  return secretsKeyFrom(key, 'file');
}

/** The database remembers the fingerprint of its key: starting with another key would leave its secrets unreadable. */
export async function checkSecretsKey(pool: Queryable, key: SecretsKey): Promise<void> {
  await pool.query('INSERT INTO app_setting (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [FINGERPRINT_SETTING, { fingerprint: key.fingerprint }]);
  const stored = await pool.query<{ value: { fingerprint?: string } }>('SELECT value FROM app_setting WHERE key = $1', [FINGERPRINT_SETTING]);
  const fingerprint = stored.rows[0]?.value.fingerprint;
  if (fingerprint === key.fingerprint) return;
  const where = key.source === 'file' ? ` (read from DATA_DIR's ${SECRETS_KEY_FILE}: set SECRETS_KEY or DATA_DIR back)` : ': set SECRETS_KEY back';
  throw new SecretsKeyError(`SECRETS_KEY (fingerprint ${key.fingerprint}) is not the key this database's secrets were sealed with (${fingerprint})${where}`);
}

/** Loads the key and checks it against the database: what every process calls once at its start. */
export async function openSecretsKey(options: { value: string | undefined; dataDir: string; production: boolean }, log: Logger, pool: Queryable): Promise<SecretsKey> {
  const key = await loadSecretsKey(options, log);
  await checkSecretsKey(pool, key);
  return key;
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
