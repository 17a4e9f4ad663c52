import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startInProcess, type InProcessServer } from '../../support/in-process.ts';
import { freePort } from '../../support/server.ts';
import { TEST_MNEMONIC, TEST_SECRETS_KEY, waitFor } from '../../support/custody.ts';

/** The value of one series in Prometheus' text format (`name{labels}` exactly as rendered), undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * /metrics on METRICS_PORT of a server started as `npm start` composes it: parsed by `promtool check metrics`, HTTP
 * series by route pattern, job runs from the worker, database pool and backlog figures; not on the public port.
 * And /api/ready: 200 on the development stand-ins, 503 from the moment a shutdown begins while the port drains.
 */
describe('metrics and readiness of a running server', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let metricsPort: number;
  const env = () => ({ DATABASE_URL: database.url, WALLET_SEED: TEST_MNEMONIC, SECRETS_KEY: TEST_SECRETS_KEY, RATES_WALK_MS: '0', WORKER_POLL_MS: '100' });
  const scrape = async () => {
    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    metricsPort = await freePort();
    server = await startInProcess({ ...env(), METRICS_PORT: String(metricsPort), HOT_WALLET_MINIMUM: '{"BTC":"0.5"}' });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('serves /metrics on its own port, in a format promtool accepts, with requests by route pattern', async () => {
    expect(server.metricsPort).toBe(metricsPort);
    // The development walk keeps no readings in market_prices: one an exchange feed would have written, 90 s old.
    const pool = new pg.Pool({ connectionString: database.url });
    await pool.query(`INSERT INTO market_prices (kind, asset, source, price, market, observed_at) VALUES ('CRYPTO', 'BTC', 'binance', 60000, 'BTC/USDT', now() - interval '90 seconds')`);
    await pool.end();
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
    expect((await fetch(`${server.url}/api/${randomUUID()}/asset`)).status).toBe(401);
    expect((await fetch(`${server.url}/api/${randomUUID()}/asset?x=1`)).status).toBe(401);
    expect((await fetch(`${server.url}/api/nothing-here/${randomUUID()}`)).status).toBe(404);
    // The worker has run its jobs at least once, and the last request is counted: a response is counted when the
    // server ends it, which can come just after the client has read the whole of it (a loaded machine's CI run).
    const text = await waitFor('the worker to run a job', async () => {
      const scraped = await scrape();
      const counted = sample(scraped, 'wallet_http_requests_total{method="GET",route="unmatched",status="4xx"}') !== undefined;
      return (sample(scraped, 'wallet_job_runs_total{job_name="chain.deposits:BITCOIN"}') ?? 0) > 0 && counted && scraped;
    }, 30_000);

    const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(checked.stderr + checked.stdout).toBe('');
    expect(checked.status).toBe(0);

    expect(sample(text, 'wallet_http_requests_total{method="GET",route="/api/health",status="2xx"}')).toBe(1);
    expect(sample(text, 'wallet_http_requests_total{method="GET",route="/api/:account/asset",status="4xx"}')).toBe(2);
    expect(sample(text, 'wallet_http_requests_total{method="GET",route="unmatched",status="4xx"}')).toBe(1);
    expect(sample(text, 'wallet_http_request_duration_seconds_count{method="GET",route="/api/:account/asset",status="4xx"}')).toBe(2);
    expect(sample(text, 'wallet_http_request_duration_seconds_bucket{method="GET",route="/api/:account/asset",status="4xx",le="+Inf"}')).toBe(2);
    // No raw id ever becomes a label value.
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
    expect(sample(text, 'wallet_job_failures_total{job_name="chain.deposits:BITCOIN"}')).toBe(0);
    expect(sample(text, 'wallet_job_lag_seconds{job_name="chain.deposits:BITCOIN"}')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'wallet_job_failing{job_name="chain.deposits:BITCOIN"}')).toBe(0);
    expect(sample(text, 'wallet_deposits_pending{network="BITCOIN"}')).toBe(0);
    expect(sample(text, 'wallet_withdrawals_open{network="ETHEREUM"}')).toBe(0);
    expect(sample(text, 'wallet_withdrawals_waiting_for_funds{network="ETHEREUM"}')).toBe(0);
    expect(sample(text, 'wallet_withdrawals_waiting_for_funds_oldest_seconds{network="ETHEREUM"}')).toBe(0);
    expect(sample(text, 'wallet_withdrawals_under_review')).toBe(0);
    expect(sample(text, 'wallet_withdrawals_under_review_oldest_seconds')).toBe(0);
    expect(sample(text, 'wallet_withdrawal_expected_seconds{network="BITCOIN"}')).toBe(1800 + 3 * 2 * 600);
    expect(sample(text, 'wallet_custody_holdings_minimum{network="BITCOIN",currency="BTC"}')).toBe(0.5);
    expect(sample(text, 'wallet_price_current{asset="BTC"}')).toBe(1);
    expect(sample(text, 'wallet_price_age_seconds{kind="CRYPTO",asset="BTC"}')).toBeGreaterThanOrEqual(90);
    expect(sample(text, 'wallet_mail_undelivered{status="failed"}')).toBe(0);
    expect(sample(text, 'wallet_db_pool_max')).toBe(20);
    expect(sample(text, 'wallet_db_pool_connections')).toBeGreaterThan(0);
    // The devnet runs in the process: no node, so no node series.
    expect(text).not.toMatch(/^wallet_chain_node_up\{/m);
  });

  it('is not on the public port, and the metrics port serves nothing else', async () => {
    const publicText = await (await fetch(`${server.url}/metrics`)).text();
    expect(publicText).not.toContain('wallet_http_requests_total');
    expect((await fetch(`http://127.0.0.1:${metricsPort}/api/health`)).status).toBe(404);
  });

  it('answers /api/ready 200 on the stand-ins, then 503 from the start of a shutdown while the port drains', async () => {
    expect(await (await fetch(`${server.url}/api/ready`)).json()).toEqual({ status: 'ready' });
    const draining = await startInProcess({ ...env(), SHUTDOWN_DRAIN_MS: '1500' });
    const started = Date.now();
    const closed = draining.close();
    const ready = await fetch(`${draining.url}/api/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not ready', reasons: ['shutting down'] });
    // Liveness is unchanged and requests are still served while load balancers take it out.
    expect((await fetch(`${draining.url}/api/health`)).status).toBe(200);
    await closed;
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    await expect(fetch(`${draining.url}/api/health`)).rejects.toThrow();
  });
});
