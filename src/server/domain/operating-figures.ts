/**
 * What an operator watches, read from the database in a handful of aggregate queries (README "Operating",
 * Metrics): deposits waiting for confirmations and withdrawals not settled yet with the oldest age per network, the
 * withdrawals waiting for the hot wallet's funds, the jobs' schedule, the age of the newest price reading per asset, and mails that were not delivered. Each part is read
 * on its own: one failing (a table another version has not created yet) leaves the others.
 */
import type pg from 'pg';

export type NetworkBacklog = { network: string; count: number; oldestSeconds: number };
export type JobState = { job: string; lagSeconds: number; failing: boolean };
export type PriceAge = { kind: string; asset: string; ageSeconds: number };
export type MailBacklog = { status: string; total: number; lastHour: number };
export type ReviewQueue = { count: number; oldestSeconds: number };

export type OperatingFigures = {
  pendingDeposits: NetworkBacklog[] | undefined;
  openWithdrawals: NetworkBacklog[] | undefined;
  /** PENDING withdrawals the hot wallet cannot pay now (waiting_for_funds_since), oldest wait per network. */
  waitingForFunds: NetworkBacklog[] | undefined;
  jobs: JobState[] | undefined;
  priceAges: PriceAge[] | undefined;
  undeliveredMail: MailBacklog[] | undefined;
  /** Withdrawals waiting for an operator's review (withdrawals/review.ts) and the oldest one's age (0 when none). */
  reviewQueue: ReviewQueue | undefined;
};

/** Withdrawals the worker has not settled: waiting to be signed, signed, or sent and waiting for confirmations. */
const OPEN_WITHDRAWAL_STATES = ['PENDING', 'SIGNED', 'BROADCAST'];

/** `jobs`: the names this process runs, so a row left by a job that no longer exists does not look late forever. */
export async function operatingFigures(pool: pg.Pool, jobs: readonly string[]): Promise<OperatingFigures> {
  const part = async <T>(read: () => Promise<T>): Promise<T | undefined> => read().catch(() => undefined);
  const [pendingDeposits, openWithdrawals, waitingForFunds, jobStates, priceAges, undeliveredMail, reviewQueue] = await Promise.all([
    part(async () =>
      (
        await pool.query<NetworkBacklog>(
          `SELECT network, count(*)::int AS count, extract(epoch FROM now() - min(detected_at))::float8 AS "oldestSeconds"
             FROM chain_deposits WHERE state = 'PENDING' GROUP BY network`,
        )
      ).rows,
    ),
    part(async () =>
      (
        await pool.query<NetworkBacklog>(
          `SELECT network, count(*)::int AS count, extract(epoch FROM now() - min(created_at))::float8 AS "oldestSeconds"
             FROM withdrawals WHERE state = ANY($1) GROUP BY network`,
          [OPEN_WITHDRAWAL_STATES],
        )
      ).rows,
    ),
    part(async () =>
      (
        await pool.query<NetworkBacklog>(
          `SELECT network, count(*)::int AS count, greatest(0, extract(epoch FROM now() - min(waiting_for_funds_since)))::float8 AS "oldestSeconds"
             FROM withdrawals WHERE state = 'PENDING' AND waiting_for_funds_since IS NOT NULL GROUP BY network`,
        )
      ).rows,
    ),
    part(async () =>
      (
        await pool.query<JobState>(
          `SELECT name AS job, greatest(0, extract(epoch FROM now() - run_at))::float8 AS "lagSeconds", last_error IS NOT NULL AS failing
             FROM job_schedule WHERE name = ANY($1)`,
          [[...jobs]],
        )
      ).rows,
    ),
    part(async () =>
      (
        await pool.query<PriceAge>(
          `SELECT kind, asset, greatest(0, extract(epoch FROM now() - max(observed_at)))::float8 AS "ageSeconds" FROM market_prices GROUP BY kind, asset`,
        )
      ).rows,
    ),
    part(async () =>
      (
        await pool.query<MailBacklog>(
          `SELECT status, count(*)::int AS total, (count(*) FILTER (WHERE created_at > now() - interval '1 hour'))::int AS "lastHour"
             FROM mail_outbox WHERE status <> 'sent' GROUP BY status`,
        )
      ).rows,
    ),
    part(async () => {
      const result = await pool.query<ReviewQueue>(
        `SELECT count(*)::int AS count, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS "oldestSeconds"
           FROM withdrawals WHERE state = 'UNDER_REVIEW'`,
      );
      return result.rows[0] ?? { count: 0, oldestSeconds: 0 };
    }),
  ]);
  return { pendingDeposits, openWithdrawals, waitingForFunds, jobs: jobStates, priceAges, undeliveredMail, reviewQueue };
}
