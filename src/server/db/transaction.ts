import type pg from 'pg';

/**
 * Runs `work` in one transaction on one pooled connection: COMMIT when it returns, ROLLBACK when it throws (the
 * error goes on to the caller), and the connection goes back to the pool either way. Every multi-statement write
 * goes through here, so no caller writes BEGIN/COMMIT/ROLLBACK by hand.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, options?: { begin?: string }): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(options?.begin ?? 'BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A failed ROLLBACK (the connection is gone) must not hide why the work failed.
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
