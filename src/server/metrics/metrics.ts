/**
 * The Prometheus series of one gateway process (README "Operating", Metrics), in a registry of its own. Requests and
 * job runs are counted as they happen; everything read from the database, the nodes or the price table is read when
 * Prometheus scrapes, through caches (a few seconds; five minutes for the custody's holdings, which ask a node per
 * address on account-based chains), so a scrape storm costs the database at most one round every few seconds and a
 * slow node never holds a scrape past a few seconds: it gets the last figures while the next read goes on.
 */
import type pg from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { COINS, type Network } from '../../lib/currencies.ts';
import type { Logger } from '../log.ts';
import type { ChainAdapter } from '../adapters/chains/port.ts';
import type { RatesPort } from '../adapters/rates/port.ts';
import type { Catalogue } from '../domain/catalogue.ts';
import { expectedWithdrawalSeconds, withTimeout, type ChainProgressReader } from '../domain/chain-progress.ts';
import { custodyBalances } from '../domain/custody-balances.ts';
import { operatingFigures } from '../domain/operating-figures.ts';
import { pricedAssets } from '../domain/readiness.ts';
import { createHttpMetrics, type FinishedRequest } from './http.ts';

export type MetricsSources = {
  pool: pg.Pool;
  chain: Pick<ChainAdapter, 'networks' | 'requiredConfirmations' | 'holdings'>;
  /** The node heights and scan cursors readiness reads too (one cache for both). */
  progress: ChainProgressReader;
  rates: RatesPort;
  priceSource: 'exchanges' | 'reference' | 'off';
  catalogue: Catalogue;
  /** The names of the jobs this deployment runs. */
  jobs: readonly string[];
  /** HOT_WALLET_MINIMUM: per currency, a decimal amount. */
  hotWalletMinimum: Readonly<Record<string, string>>;
  /** The gateway's route patterns (`/api/:account/asset`). */
  routes: readonly string[];
  log: Logger;
};

export type Metrics = {
  registry: Registry;
  /** A response ended (the access log's entry: method, path without query, status, ms). */
  request: (request: FinishedRequest) => void;
  /** A job ran in this process's worker. */
  job: (run: { job: string; ok: boolean; seconds: number }) => void;
};

/** How fresh the database figures are kept, and how long a scrape waits for a read under way before using the last. */
const FIGURES_MS = 5_000;
const CUSTODY_MS = 300_000;
const HOLDINGS_TIMEOUT_MS = 30_000;
const SCRAPE_WAIT_MS = 3_000;

/**
 * The last value of `read`, read again in the background once older than `refreshMs`; a caller waits for a read
 * under way at most `waitMs`, then takes what there is (undefined before the first read ends).
 */
function latest<T>(read: () => Promise<T>, refreshMs: number, onError: (error: unknown) => void): () => Promise<T | undefined> {
  let value: { at: number; result: T } | undefined;
  let pending: Promise<void> | undefined;
  return async () => {
    if (!pending && (!value || Date.now() - value.at >= refreshMs)) {
      pending = read()
        .then((result) => void (value = { at: Date.now(), result }), onError)
        .finally(() => (pending = undefined));
    }
    if (pending) await withTimeout(pending, SCRAPE_WAIT_MS, 'slow').catch(() => undefined);
    return value?.result;
  };
}

/** Atomic units as a float of whole coins: exact enough for a graph and an alert threshold. */
const coins = (units: bigint, decimals: number) => Number(units) / 10 ** decimals;

const decimalsOf = new Map(COINS.map((coin) => [coin.currency, coin.decimals]));
const networkOf = new Map<string, Network>(COINS.map((coin) => [coin.currency, coin.network]));

type CustodyRow = { network: Network; currency: string; holdings: number; difference: number };

export function createMetrics(sources: MetricsSources): Metrics {
  const { pool, chain, log } = sources;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Gauges prom-client names *_total, which Prometheus keeps for counters (promtool check metrics flags them).
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name);
  const http = createHttpMetrics(registry, sources.routes);

  const figures = latest(() => operatingFigures(pool, sources.jobs), FIGURES_MS, (error) => log.warn({ err: error }, 'metrics: the database figures could not be read'));
  const priceTable = latest(() => withTimeout(sources.rates.prices(), SCRAPE_WAIT_MS, 'the price table did not answer'), FIGURES_MS, (error) => log.warn({ err: error }, 'metrics: the price table could not be read'));
  const custody = latest(async (): Promise<CustodyRow[]> => {
    const rows: CustodyRow[] = [];
    for (const network of chain.networks) {
      const holdings = (n: Network) => withTimeout(chain.holdings(n), HOLDINGS_TIMEOUT_MS, `no holdings within ${HOLDINGS_TIMEOUT_MS} ms`);
      try {
        for (const row of await custodyBalances(pool, { networks: [network], holdings })) {
          if (row.holdings === undefined) continue;
          const decimals = decimalsOf.get(row.currency) ?? 0;
          rows.push({ network, currency: row.currency, holdings: coins(row.holdings, decimals), difference: coins(row.difference ?? 0n, decimals) });
        }
      } catch (error) {
        // A node that does not answer leaves its network out; the node alerts say why.
        log.warn({ err: error, network }, 'metrics: custody holdings could not be read');
      }
    }
    return rows;
  }, CUSTODY_MS, (error) => log.warn({ err: error }, 'metrics: custody holdings could not be read'));

  const gauge = <L extends string>(name: string, help: string, labelNames: L[], fill: (set: (labels: Record<L, string>, value: number) => void) => Promise<void> | void) =>
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const values: [Record<L, string>, number][] = [];
        await fill((labels, value) => values.push([labels, value]));
        // Reset after the read, so series of a network or asset that went away disappear and the others never blink.
        this.reset();
        for (const [labels, value] of values) this.set(labels, value);
      },
    });

  // The label is job_name: Prometheus sets `job` to the scrape job and would rename ours to exported_job.
  const runs = new Counter({ name: 'wallet_job_runs_total', help: 'Job runs in this process, by job_name.', labelNames: ['job_name'], registers: [registry] });
  const failures = new Counter({ name: 'wallet_job_failures_total', help: 'Job runs in this process that threw, by job_name.', labelNames: ['job_name'], registers: [registry] });
  const durations = new Histogram({ name: 'wallet_job_duration_seconds', help: 'How long a job run took in this process, by job_name.', labelNames: ['job_name'], buckets: [0.01, 0.05, 0.25, 1, 5, 15, 60, 300], registers: [registry] });
  for (const job of sources.jobs) {
    runs.inc({ job_name: job }, 0);
    failures.inc({ job_name: job }, 0);
  }
  gauge('wallet_job_lag_seconds', 'Seconds a job has been due without a process running it to the end (0 when not due), from job_schedule: every worker process counts.', ['job_name'], async (set) => {
    for (const job of (await figures())?.jobs ?? []) set({ job_name: job.job }, job.lagSeconds);
  });
  gauge('wallet_job_failing', '1 when the last run of a job failed (job_schedule.last_error), by job_name.', ['job_name'], async (set) => {
    for (const job of (await figures())?.jobs ?? []) set({ job_name: job.job }, job.failing ? 1 : 0);
  });

  const progress = () => sources.progress.read();
  gauge('wallet_chain_node_up', '1 when the network node answered its tip height within 2 s, by network (networks on a node only).', ['network'], async (set) => {
    for (const p of await progress()) if (p.hasNode) set({ network: p.network }, p.tip === undefined ? 0 : 1);
  });
  gauge('wallet_chain_tip_height', "The node's best block height, by network.", ['network'], async (set) => {
    for (const p of await progress()) if (p.tip !== undefined) set({ network: p.network }, p.tip);
  });
  gauge('wallet_chain_scan_height', 'The last block the deposit scan read (chain_cursors), by network.', ['network'], async (set) => {
    for (const p of await progress()) if (p.hasNode && p.scanned !== undefined) set({ network: p.network }, p.scanned);
  });
  gauge('wallet_chain_scan_lag_max_blocks', 'Blocks the scan may trail the tip before /api/ready says the network is behind, by network.', ['network'], async (set) => {
    for (const p of await progress()) if (p.hasNode) set({ network: p.network }, p.maxLagBlocks);
  });

  const backlog = (name: string, help: string, pick: 'pendingDeposits' | 'openWithdrawals' | 'waitingForFunds', field: 'count' | 'oldestSeconds') =>
    gauge(name, help, ['network'], async (set) => {
      const rows = (await figures())?.[pick];
      if (!rows) return;
      for (const network of chain.networks) set({ network }, rows.find((row) => row.network === network)?.[field] ?? 0);
    });
  backlog('wallet_deposits_pending', 'Deposits seen and waiting for their confirmations, by network.', 'pendingDeposits', 'count');
  backlog('wallet_deposits_pending_oldest_seconds', 'Age of the oldest deposit waiting for confirmations (0 when none), by network.', 'pendingDeposits', 'oldestSeconds');
  backlog('wallet_withdrawals_open', 'Withdrawals not settled yet (PENDING, SIGNED, BROADCAST), by network.', 'openWithdrawals', 'count');
  backlog('wallet_withdrawals_open_oldest_seconds', 'Age of the oldest withdrawal not settled yet (0 when none), by network.', 'openWithdrawals', 'oldestSeconds');
  backlog('wallet_withdrawals_waiting_for_funds', 'Withdrawals the hot wallet cannot pay now, waiting for a refill (PENDING with waiting_for_funds_since), by network.', 'waitingForFunds', 'count');
  backlog('wallet_withdrawals_waiting_for_funds_oldest_seconds', 'How long the longest-waiting withdrawal has waited for the hot wallet (0 when none), by network.', 'waitingForFunds', 'oldestSeconds');
  gauge('wallet_withdrawals_under_review', "Withdrawals waiting for an operator's review (over a limit's threshold, or without a price).", [], async (set) => {
    const queue = (await figures())?.reviewQueue;
    if (queue) set({}, queue.count);
  });
  gauge('wallet_withdrawals_under_review_oldest_seconds', 'Age of the oldest withdrawal waiting for review (0 when none).', [], async (set) => {
    const queue = (await figures())?.reviewQueue;
    if (queue) set({}, queue.oldestSeconds);
  });
  gauge('wallet_withdrawal_expected_seconds', "How long a withdrawal may stay open before it is late: 30 min plus three times its confirmations' blocks, by network.", ['network'], (set) => {
    for (const network of chain.networks) set({ network }, expectedWithdrawalSeconds(network, chain.requiredConfirmations(network)));
  });

  gauge('wallet_custody_holdings', "What the chain shows the custody's addresses holding (the hot wallet and deposit addresses not swept yet), in coins; networks on a node only, read every 5 min.", ['network', 'currency'], async (set) => {
    for (const row of (await custody()) ?? []) set({ network: row.network, currency: row.currency }, row.holdings);
  });
  gauge('wallet_custody_holdings_minimum', 'HOT_WALLET_MINIMUM: the holdings below which HotWalletLow fires, in coins.', ['network', 'currency'], (set) => {
    for (const [currency, amount] of Object.entries(sources.hotWalletMinimum)) {
      const network = networkOf.get(currency);
      if (network && chain.networks.includes(network)) set({ network, currency }, Number(amount));
    }
  });
  gauge('wallet_reconciliation_difference', 'holdings - position - uncredited (npm run custody -- balances), in coins; 0 when the chain and the ledger agree. Networks on a node only.', ['network', 'currency'], async (set) => {
    for (const row of (await custody()) ?? []) set({ network: row.network, currency: row.currency }, row.difference);
  });

  gauge('wallet_price_age_seconds', 'Age of the newest reading (observed_at) of an asset or fiat in market_prices, by kind (CRYPTO, FIAT) and asset.', ['kind', 'asset'], async (set) => {
    for (const row of (await figures())?.priceAges ?? []) set({ kind: row.kind, asset: row.asset }, row.ageSeconds);
  });
  if (sources.priceSource !== 'off') {
    gauge('wallet_price_current', '1 when an offered asset has a current (quotable) USD price, by asset.', ['asset'], async (set) => {
      const table = await priceTable();
      if (!table) return;
      for (const asset of pricedAssets(sources.catalogue)) set({ asset }, table.usd[asset] === undefined ? 0 : 1);
    });
  }

  gauge('wallet_mail_undelivered', 'Mails not delivered (status outbox: no SMTP; failed: SMTP refused), by status.', ['status'], async (set) => {
    const rows = (await figures())?.undeliveredMail;
    if (!rows) return;
    for (const status of ['outbox', 'failed']) set({ status }, rows.find((row) => row.status === status)?.total ?? 0);
  });
  gauge('wallet_mail_undelivered_last_hour', 'Mails of the last hour not delivered, by status.', ['status'], async (set) => {
    const rows = (await figures())?.undeliveredMail;
    if (!rows) return;
    for (const status of ['outbox', 'failed']) set({ status }, rows.find((row) => row.status === status)?.lastHour ?? 0);
  });

  const poolGauge = (name: string, help: string, value: () => number) => new Gauge({ name, help, registers: [registry], collect() { this.set(value()); } });
  poolGauge('wallet_db_pool_connections', 'Connections the database pool holds, in use or idle.', () => pool.totalCount);
  poolGauge('wallet_db_pool_idle', 'Connections of the pool not in use.', () => pool.idleCount);
  poolGauge('wallet_db_pool_waiting', 'Queries waiting for a connection of the pool.', () => pool.waitingCount);
  poolGauge('wallet_db_pool_max', 'The most connections the pool opens.', () => pool.options.max ?? 10);

  return {
    registry,
    request: http.observe,
    job(run) {
      runs.inc({ job_name: run.job });
      if (!run.ok) failures.inc({ job_name: run.job });
      durations.observe({ job_name: run.job }, run.seconds);
    },
  };
}
