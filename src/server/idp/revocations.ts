import { lt, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { revokedGrants } from '../db/schema.ts';

/** Grants revoked after `since` (the database's clock), and the database's time now, in one round trip. */
export async function readRevokedGrants(db: Db, since: Date): Promise<{ grantIds: string[]; now: Date }> {
  // An aggregate without GROUP BY answers one row even when nothing was revoked: the clock comes with it.
  const result = await db.execute<{ now: Date | string; ids: string[] }>(
    sql`SELECT now() AS now, coalesce(array_agg(${revokedGrants.grantId}), '{}') AS ids FROM ${revokedGrants} WHERE ${revokedGrants.revokedAt} > ${since.toISOString()}::timestamptz`,
  );
  const row = result.rows[0];
  return { grantIds: row?.ids ?? [], now: row ? new Date(row.now) : new Date() };
}

/** Rows older than any access token they could still refuse are of no more use. */
export async function pruneRevokedGrants(db: Db, keepSeconds: number): Promise<void> {
  await db.delete(revokedGrants).where(lt(revokedGrants.revokedAt, sql`now() - make_interval(secs => ${keepSeconds})`));
}
