import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { SecretsKey } from '../adapters/keys/port.ts';

/** How long a mailed code stays usable. */
export const CODE_TTL_MS = { confirm_email: 24 * 60 * 60 * 1000, reset_password: 60 * 60 * 1000 } as const;
export type CodePurpose = keyof typeof CODE_TTL_MS;

/** 256 random bits, URL-safe: the code travels in a link path. */
export function newCode(): string {
  return randomBytes(32).toString('base64url');
}

/** The sha256 the codes were stored as before keyed hashing; the keyed hash is taken over it (see `storedCode`). */
function digest(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

/**
 * What is stored and looked up for a mailed code: a keyed hash under SECRETS_KEY, so neither a leaked table nor a
 * guess checked against it (the 4-character codes) gives a usable code. It is taken over the code's sha256, so
 * rows stored before keyed hashing are migrated in place (`migrateCodeHashes`). `kind` keeps the kinds apart.
 */
export function storedCode(key: SecretsKey, kind: 'link' | 'verification', code: string): string {
  return key.keyedHash(digest(code), `code:${kind}`);
}

/** What a presented code may be stored as: under the current key, then each previous key of a rotation. */
export function storedCodes(key: SecretsKey, kind: 'link' | 'verification', code: string): string[] {
  return key.keyedHashes(digest(code), `code:${kind}`);
}

export function codeExpiry(purpose: CodePurpose, now: Date): Date {
  return new Date(now.getTime() + CODE_TTL_MS[purpose]);
}

/**
 * Rows written before keyed hashing hold a bare sha256: each becomes the keyed hash over it, so the codes already
 * mailed keep working. Idempotent and safe to run from several processes at once (each row moves once).
 */
export async function migrateCodeHashes(pool: Pick<pg.Pool, 'query'>, key: SecretsKey): Promise<number> {
  const columns = [
    { table: 'user_codes', column: 'code_hash', kind: 'link' },
    { table: 'telegram_link_codes', column: 'code_hash', kind: 'link' },
    { table: 'user_pincodes', column: 'reset_code_hash', kind: 'verification' },
    { table: 'email_changes', column: 'code_hash', kind: 'verification' },
  ] as const;
  let moved = 0;
  for (const { table, column, kind } of columns) {
    const legacy = await pool.query<{ hash: string }>(`SELECT ${column} AS hash FROM ${table} WHERE ${column} ~ '^[0-9a-f]{64}$'`);
    for (const { hash } of legacy.rows) {
      const result = await pool.query(`UPDATE ${table} SET ${column} = $2 WHERE ${column} = $1`, [hash, key.keyedHash(hash, `code:${kind}`)]);
      moved += result.rowCount ?? 0;
    }
  }
  return moved;
}
