import type pg from 'pg';
import type { Adapter, AdapterPayload } from 'oidc-provider';

/** Models whose artefacts belong to a grant and die with it. */
type Row = { payload: AdapterPayload; consumed_at: Date | null };

/**
 * oidc-provider's storage in one PostgreSQL table (oidc_payload), keyed by model name and id. Expired rows are
 * invisible at once and deleted by `pruneOidcPayloads`.
 */
export function createPostgresAdapter(pool: pg.Pool): new (name: string) => Adapter {
  return class PostgresAdapter implements Adapter {
    readonly name: string;
    constructor(name: string) {
      this.name = name;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
      await pool.query(
        `INSERT INTO oidc_payload (id, type, payload, grant_id, user_code, uid, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (type, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
           user_code = excluded.user_code, uid = excluded.uid, expires_at = excluded.expires_at`,
        [id, this.name, JSON.stringify(payload), payload.grantId ?? null, payload.userCode ?? null, payload.uid ?? null, expiresAt],
      );
    }

    private async findBy(column: 'id' | 'uid' | 'user_code', value: string): Promise<AdapterPayload | undefined> {
      const result = await pool.query<Row>(
        `SELECT payload, consumed_at FROM oidc_payload
         WHERE type = $1 AND ${column} = $2 AND (expires_at IS NULL OR expires_at > now()) LIMIT 1`,
        [this.name, value],
      );
      const row = result.rows[0];
      if (!row) return undefined;
      return row.consumed_at ? { ...row.payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : row.payload;
    }

    find(id: string): Promise<AdapterPayload | undefined> {
      return this.findBy('id', id);
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.findBy('uid', uid);
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.findBy('user_code', userCode);
    }

    async consume(id: string): Promise<void> {
      await pool.query('UPDATE oidc_payload SET consumed_at = now() WHERE type = $1 AND id = $2', [this.name, id]);
    }

    async destroy(id: string): Promise<void> {
      await pool.query('DELETE FROM oidc_payload WHERE type = $1 AND id = $2', [this.name, id]);
    }

    /** Every artefact of the grant goes, whatever its model: this is what a reused refresh token triggers. */
    async revokeByGrantId(grantId: string): Promise<void> {
      await pool.query('DELETE FROM oidc_payload WHERE grant_id = $1 OR (type = $2 AND id = $1)', [grantId, 'Grant']);
    }
  };
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
