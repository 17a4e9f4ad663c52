/**
 * Work that should have finished by now, per network: deposits still PENDING, withdrawals not COMPLETED or FAILED,
 * sweeps not CONFIRMED, SKIPPED or FAILED, each older than the threshold, with its age and the last error known
 * (the withdrawal's or sweep's own reason, else the last failure of the chain job that moves it). A withdrawal the hot
 * wallet cannot pay now (waiting_for_funds_since) also carries how long it has waited for funds (`waitingSeconds`).
 */
import type { Queryable } from '../ledger.ts';

export type StuckKind = 'deposit' | 'withdrawal' | 'sweep';
export type StuckItem = { kind: StuckKind; id: string; network: string; currency: string; state: string; amount: string; txHash: string | null; accountId: string | null; ageSeconds: number; lastError: string | null; waitingSeconds: number | null };
export type StuckReport = { olderThanMinutes: number; items: StuckItem[]; jobs: { name: string; lastError: string | null; lastFinishedAt: string | null }[] };

/** Each network's job that moves a kind of work (jobs/handlers.ts names them `<job>:<NETWORK>`). */
const JOBS = { deposit: 'chain.deposits', withdrawal: 'chain.withdrawals', sweep: 'chain.sweeps' } as const;

export async function stuckWork(db: Queryable, olderThanMinutes = 30): Promise<StuckReport> {
  const minutes = Math.min(Math.max(Math.trunc(olderThanMinutes), 1), 60 * 24 * 365);
  const rows = await db.query<Omit<StuckItem, 'ageSeconds' | 'waitingSeconds'> & { ageSeconds: string; waitingSeconds: string | null }>(
    `WITH jobs AS (SELECT name, last_error FROM job_schedule)
     SELECT * FROM (
       SELECT 'deposit' AS kind, d.id::text AS id, d.network, d.currency, d.state, d.amount::text AS amount, d.tx_hash AS "txHash", d.wallet_account_id::text AS "accountId",
              extract(epoch FROM now() - d.detected_at)::bigint AS "ageSeconds", (SELECT last_error FROM jobs WHERE name = '${JOBS.deposit}:' || d.network) AS "lastError",
              NULL::bigint AS "waitingSeconds"
         FROM chain_deposits d WHERE d.state = 'PENDING' AND d.detected_at < now() - make_interval(mins => $1)
       UNION ALL
       SELECT 'withdrawal', w.id::text, w.network, w.currency, w.state, w.amount::text, w.tx_hash, w.wallet_account_id::text,
              extract(epoch FROM now() - w.created_at)::bigint, coalesce(w.failure_reason, (SELECT last_error FROM jobs WHERE name = '${JOBS.withdrawal}:' || w.network)),
              CASE WHEN w.state = 'PENDING' THEN extract(epoch FROM now() - w.waiting_for_funds_since)::bigint END
         FROM withdrawals w WHERE w.state IN ('PENDING', 'SIGNED', 'BROADCAST') AND w.created_at < now() - make_interval(mins => $1)
       UNION ALL
       SELECT 'sweep', s.id::text, s.network, s.currency, s.state, s.amount::text, s.tx_hash, NULL,
              extract(epoch FROM now() - s.created_at)::bigint, coalesce(s.reason, (SELECT last_error FROM jobs WHERE name = '${JOBS.sweep}:' || s.network)), NULL
         FROM sweeps s WHERE s.state IN ('PENDING', 'TOPPING_UP', 'SENT') AND s.created_at < now() - make_interval(mins => $1)
     ) stuck ORDER BY network, "ageSeconds" DESC LIMIT 500`,
    [minutes],
  );
  const jobs = await db.query<{ name: string; lastError: string | null; lastFinishedAt: string | null }>(
    `SELECT name, last_error AS "lastError", to_char(last_finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "lastFinishedAt"
       FROM job_schedule WHERE split_part(name, ':', 1) = ANY($1) AND name LIKE '%:%' ORDER BY name`,
    [Object.values(JOBS)],
  );
  return { olderThanMinutes: minutes, items: rows.rows.map((r) => ({ ...r, ageSeconds: Number(r.ageSeconds), waitingSeconds: r.waitingSeconds === null ? null : Number(r.waitingSeconds) })), jobs: jobs.rows };
}
