import type pg from 'pg';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { SecretsKey } from '../adapters/keys/port.ts';

type Row = { payload: AdapterPayload; consumed_at: Date | null };

const LOOKUP = 'oidc';
const SEALED_ID = 'oidc.jti';

/**
 * oidc-provider's storage in one PostgreSQL table (oidc_payload), keyed by model name and id. Expired rows are
 * invisible at once and deleted by `pruneOidcPayloads`.
 *
 * An id is what a client presents (a refresh token, an authorization code, a session cookie), so the table holds
 * only its keyed hash under SECRETS_KEY, and the grant id and user code likewise; the payload's own copy of the id
 * (`jti`) is sealed, as a session found by its uid needs it back. A row read from the database is no credential.
 */
/** How an id is stored in oidc_payload (and so in revoked_grants): its keyed hash, never the id itself. */
export function storedOidcId(key: SecretsKey, id: string): string {
  return key.keyedHash(id, LOOKUP);
}

/** What an id may be stored as: its keyed hash under the current key, then under each previous one (a rotation). */
export function storedOidcIds(key: SecretsKey, id: string): string[] {
  return key.keyedHashes(id, LOOKUP);
}

export function createPostgresAdapter(pool: pg.Pool, key: SecretsKey): new (name: string) => Adapter {
  const lookup = (value: string) => storedOidcId(key, value);
  const lookups = (value: string) => storedOidcIds(key, value);
  // Every statement is prepared once per connection (named): a sign-in runs several, and PostgreSQL's share of a
  // login's CPU (bench:login) was as large as the server's own beside argon2id.
  return class PostgresAdapter implements Adapter {
    readonly name: string;
    constructor(name: string) {
      this.name = name;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
      const stored = { ...payload, jti: key.seal(id, SEALED_ID) };
      const [current = '', ...previous] = lookups(id);
      if (previous.length > 0) {
        // A row from before a rotation moves to the current key in place (deleting a Grant would revoke it).
        await pool.query('UPDATE oidc_payload SET id = $3 WHERE type = $1 AND id = ANY($2::text[])', [this.name, previous, current]);
      }
      await pool.query({
        name: 'oidc_upsert',
        text: `INSERT INTO oidc_payload (id, type, payload, grant_id, user_code, uid, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (type, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
           user_code = excluded.user_code, uid = excluded.uid, expires_at = excluded.expires_at`,
        values: [lookup(id), this.name, JSON.stringify(stored), payload.grantId ? lookup(payload.grantId) : null, payload.userCode ? lookup(payload.userCode) : null, payload.uid ?? null, expiresAt],
      });
    }

    /** `id` is known when looking up by it; by uid or user code the sealed copy gives it back. */
    private async findBy(column: 'id' | 'uid' | 'user_code', values: string[], id?: string): Promise<AdapterPayload | undefined> {
      const result = await pool.query<Row>({
        name: `oidc_find_by_${column}`,
        text: `SELECT payload, consumed_at FROM oidc_payload
         WHERE type = $1 AND ${column} = ANY($2::text[]) AND (expires_at IS NULL OR expires_at > now()) LIMIT 1`,
        values: [this.name, values],
      });
      const row = result.rows[0];
      if (!row) return undefined;
      const jti = id ?? (typeof row.payload.jti === 'string' ? key.open(row.payload.jti, SEALED_ID) : undefined);
      const payload = { ...row.payload, jti };
      return row.consumed_at ? { ...payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : payload;
    }

    find(id: string): Promise<AdapterPayload | undefined> {
      return this.findBy('id', lookups(id), id);
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.findBy('uid', [uid]);
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.findBy('user_code', lookups(userCode));
    }

    async consume(id: string): Promise<void> {
      await pool.query({ name: 'oidc_consume', text: 'UPDATE oidc_payload SET consumed_at = now() WHERE type = $1 AND id = ANY($2::text[])', values: [this.name, lookups(id)] });
    }

    async destroy(id: string): Promise<void> {
      await pool.query({ name: 'oidc_destroy', text: 'DELETE FROM oidc_payload WHERE type = $1 AND id = ANY($2::text[])', values: [this.name, lookups(id)] });
    }

    /** Every artefact of the grant goes, whatever its model: this is what a reused refresh token triggers. */
    async revokeByGrantId(grantId: string): Promise<void> {
      await pool.query({ name: 'oidc_revoke_grant', text: 'DELETE FROM oidc_payload WHERE grant_id = ANY($1::text[]) OR (type = $2 AND id = ANY($1::text[]))', values: [lookups(grantId), 'Grant'] });
    }
  };
}

/**
 * Rows stored before keyed lookups hold the id itself: each is rewritten to the hashed form (id, grant id, user
 * code, sealed jti), so signed-in users stay signed in. Safe beside another process doing the same: a row moves
 * once, as its old id is gone after the first rewrite.
 */
export async function migrateOidcPayloads(pool: pg.Pool, key: SecretsKey): Promise<number> {
  await pruneOidcPayloads(pool);
  const lookup = (value: string) => key.keyedHash(value, LOOKUP);
  let moved = 0;
  for (;;) {
    const legacy = await pool.query<{ id: string; type: string; payload: AdapterPayload; grant_id: string | null; user_code: string | null }>(
      `SELECT id, type, payload, grant_id, user_code FROM oidc_payload WHERE id NOT LIKE $1 LIMIT 500`,
      [`${key.keyedHashPrefix}%`],
    );
    for (const row of legacy.rows) {
      const result = await pool.query('UPDATE oidc_payload SET id = $3, payload = $4, grant_id = $5, user_code = $6 WHERE type = $1 AND id = $2', [
        row.type,
        row.id,
        lookup(row.id),
        JSON.stringify({ ...row.payload, jti: key.seal(row.id, SEALED_ID) }),
        row.grant_id === null ? null : lookup(row.grant_id),
        row.user_code === null ? null : lookup(row.user_code),
      ]);
      moved += result.rowCount ?? 0;
    }
    if (legacy.rows.length < 500) return moved;
  }
}

/**
 * A SECRETS_KEY rotation: every row whose sealed id is not under the current key is rewritten under it (id, grant id,
 * user code as keyed hashes, the sealed id), from its sealed copy, so refresh tokens and sessions issued before go on
 * working with the new key alone. A row moves only from what it was read as: it can stop anywhere and run again.
 */
export async function resealOidcPayloads(pool: Pick<pg.Pool, 'query'>, key: SecretsKey, onMoved: () => void = () => {}): Promise<number> {
  const lookup = (value: unknown) => (typeof value === 'string' ? key.keyedHash(value, LOOKUP) : null);
  let moved = 0;
  let after = ['', ''];
  for (;;) {
    const page = await pool.query<{ id: string; type: string; payload: AdapterPayload }>(
      'SELECT type, id, payload FROM oidc_payload WHERE (type, id) > ($1, $2) AND (expires_at IS NULL OR expires_at > now()) ORDER BY type, id LIMIT 500',
      after,
    );
    for (const row of page.rows) {
      const sealed = row.payload.jti;
      if (typeof sealed !== 'string' || key.sealedWithCurrent(sealed, SEALED_ID)) continue;
      const id = key.open(sealed, SEALED_ID);
      const result = await pool.query(`UPDATE oidc_payload SET id = $3, payload = $4, grant_id = $5, user_code = $6 WHERE type = $1 AND id = $2 AND payload->>'jti' = $7`, [
        row.type,
        row.id,
        lookup(id),
        JSON.stringify({ ...row.payload, jti: key.seal(id, SEALED_ID) }),
        lookup(row.payload.grantId),
        lookup(row.payload.userCode),
        sealed,
      ]);
      moved += result.rowCount ?? 0;
      if (result.rowCount) onMoved();
    }
    const last = page.rows.at(-1);
    if (!last || page.rows.length < 500) return moved;
    after = [last.type, last.id];
  }
}

/** Deletes expired artefacts; the provider never sees them anyway, this only keeps the table small. */
export async function pruneOidcPayloads(pool: pg.Pool): Promise<number> {
  const result = await pool.query('DELETE FROM oidc_payload WHERE expires_at < now()');
  return result.rowCount ?? 0;
}

/** Ends everything the provider holds for a user: sessions, grants and every token issued under them. */
export async function revokeUserSessions(pool: pg.Pool, userId: string): Promise<void> {
  await pool.query(
    `WITH grants AS (
       DELETE FROM oidc_payload WHERE type = 'Grant' AND payload->>'accountId' = $1 RETURNING id
     )
     DELETE FROM oidc_payload
     WHERE grant_id IN (SELECT id FROM grants) OR (type = 'Session' AND payload->>'accountId' = $1)`,
    [userId],
  );
}
