import { createServer, ServerResponse, type IncomingMessage } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { ConfigError, type Config } from './config.ts';
import { loadEnvironmentConfig, productVersion as version, recordServerSettings, startFailure } from './environment.ts';
import { createAccessLog, createLogger, createRequestIds, type AccessEntry, type Logger } from './log.ts';
import { openDatabase, type Database } from './db/database.ts';
import { createApi, type ApiHandler } from './http/api.ts';
import { createWebHandler, type NodeHandler } from './http/web.ts';
import { createSecurityHeaders } from './http/security-headers.ts';
import { createAccounts } from './accounts.ts';
import { openCustody, type Custody } from './custody.ts';
import { embeddedSigner } from './signer/service.ts';
import { pollFeed } from './domain/market/polling.ts';
import { createSealedSettings, openSecretsKey } from './adapters/keys/secrets-key.ts';
import { loadWriteKey, type AnalyticsSource } from './domain/analytics.ts';
import { formatStartSummary, startSummary } from './start-summary.ts';
import { createWorker } from './jobs/worker.ts';
import { drainAfterAnswer, refuseDeclaredOversize } from './http/body-limit.ts';
import { createCompressor } from './http/compress.ts';
import { createChainProgress } from './domain/chain-progress.ts';
import { createReadiness, pricedAssets } from './domain/readiness.ts';
import { createMetrics } from './metrics/metrics.ts';
import { listenMetrics, type MetricsListener } from './metrics/listener.ts';
import { openTracing } from './metrics/optional-tracing.ts';

/** A response that writes its request's access line when it ends (see loggedResponses). */
type LoggedResponse = ServerResponse & { reqId: string };

/**
 * The server's responses while the access log or the metrics are on: each is made as its request comes in, so it times the request
 * from its own creation, keeps the target as it came in, and writes the access line when it ends (with the status it
 * ended with). A method of the response's own class costs the request path less than Node's response-finished
 * diagnostics channel did (~1 µs of a ~22 µs request in bench:balances) or a listener and a closure per response. A
 * response that never ends (the client left first) writes no line, as a 'finish' listener would not.
 */
function loggedResponses(access: (entry: AccessEntry) => void): typeof ServerResponse<IncomingMessage> {
  const end = ServerResponse.prototype.end as (this: ServerResponse, ...args: unknown[]) => ServerResponse;
  return class extends ServerResponse<IncomingMessage> implements LoggedResponse {
    readonly startedAt = performance.now();
    /** The target as it came in: a mount rewrites `req.url` (/oidc strips its prefix). */
    readonly url = this.req.url ?? '/';
    /** The `x-request-id` it answers with (the handler sets both). */
    reqId = '';
    override end(...args: unknown[]): this {
      if (this.writableEnded) return end.apply(this, args) as this;
      end.apply(this, args);
      const query = this.url.indexOf('?');
      access({ reqId: this.reqId, method: this.req.method ?? 'GET', path: query < 0 ? this.url : this.url.slice(0, query), status: this.statusCode, ms: Math.round((performance.now() - this.startedAt) * 10) / 10 });
      return this;
    }
  };
}

/** Prints why the start failed, in one line, and exits: the operator needs the reason, not a stack trace. */
function fail(message: string): never {
  process.stderr.write(`wallet: cannot start: ${message}\n`);
  process.exit(1);
}

const FIRST_POLL_MS = 15_000;

/**
 * How long an idle client connection is kept: longer than the idle timeout of the proxy in front (nginx and the
 * cloud load balancers keep an upstream connection 60 s), so the proxy, never the gateway, closes an idle one.
 * Closed first by the gateway, a request the proxy sends at that instant meets a reset and its user a 502.
 */
export const KEEP_ALIVE_MS = 65_000;

async function firstPoll(custody: Custody, database: Database, log: Logger): Promise<void> {
  const polls = Promise.allSettled(custody.market.feeds.map(({ feed }) => pollFeed(database.pool, feed, log)));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([polls, new Promise((resolve) => (timer = setTimeout(resolve, FIRST_POLL_MS)))]);
  clearTimeout(timer);
}

export type RunningServer = { close: () => Promise<void>; port: number; routes: ApiHandler['routes']; /** Where /metrics answers; undefined without METRICS_PORT. */ metricsPort?: number | undefined };

/** Composes the whole product in one process: /oidc, /api, /sandbox, the built pages. */
export async function startServer(config: Config, log: Logger): Promise<RunningServer> {
  const web = await createWebHandler();
  const tracing = await openTracing(config, version, log);
  const database: Database = await openDatabase({ ...config, gracefulStop: true }, log).catch(async (error: unknown) => {
    await tracing?.shutdown();
    throw error;
  });
  const secrets = await openSecretsKey({ value: config.secretsKey, previous: config.secretsKeyPrevious, dataDir: config.dataDir, production: config.production }, log, database.pool).catch(async (error: unknown) => {
    await database.close();
    await tracing?.shutdown();
    throw error;
  });
  // The analytics SDK's source: ANALYTICS_WRITE_KEY, else a key generated once and kept sealed (config-analytics.ts).
  const writeKey = config.analytics.enabled
    ? await loadWriteKey(config.analytics.writeKey, createSealedSettings(database.pool, secrets)).catch(async (error: unknown) => {
        await database.close();
        await tracing?.shutdown();
        throw error;
      })
    : undefined;
  const analytics: AnalyticsSource | undefined = writeKey === undefined ? undefined : { writeKey, dataPlaneUrl: config.analytics.dataPlaneUrl, configUrl: config.analytics.configUrl };
  const accounts = await createAccounts({ config, log, database, secrets });
  // The gateway holds no key: the signer (in this command outside production, apart in production) signs by id.
  const signer = await embeddedSigner(config, log, database.pool).catch(async (error: unknown) => {
    accounts.close();
    await database.close();
    await tracing?.shutdown();
    throw error;
  });
  const custody = await openCustody(config, log, database.pool, { secrets, traceChain: tracing?.chainCall, signing: 'signer' }).catch(async (error: unknown) => {
    await signer?.close();
    accounts.close();
    await database.close();
    await tracing?.shutdown();
    throw error;
  });
  // Node heights and scan cursors for /api/ready and /metrics alike, each node asked at most every 2 s (chain-progress.ts).
  const progress = createChainProgress({ pool: database.pool, chain: custody.chain });
  const prices = config.market.source === 'exchanges' ? { rates: custody.rates, assets: () => pricedAssets(custody.catalogue) } : undefined;
  const readiness = createReadiness({ pool: database.pool, progress, prices });
  const gateway = createApi({ config, log, pool: database.pool, db: database.db, users: accounts.users, auth: accounts.auth, custody, mailer: accounts.mailer, mailDelivery: accounts.mailDelivery, secrets, limits: accounts.limits, messenger: accounts.messenger, analytics, readiness });
  const metrics = config.operating.metrics
    ? createMetrics({
        pool: database.pool,
        chain: custody.chain,
        progress,
        rates: custody.rates,
        priceSource: config.market.source,
        catalogue: custody.catalogue,
        jobs: custody.jobs.map((job) => job.name),
        hotWalletMinimum: config.operating.hotWalletMinimum,
        routes: gateway.routes.map((r) => r.path),
        log,
      })
    : undefined;
  // A server span per /api (and /sandbox) request when tracing is on, named by the route pattern.
  const api = getRequestListener(tracing ? tracing.serve(gateway.fetch, gateway.routes.map((r) => r.path)) : gateway.fetch);
  // The balances poll from memory when it can; with tracing on every request goes through the gateway for its span.
  const hot = tracing ? undefined : gateway.hot;
  // The embedded identity provider; absent when OIDC_ISSUER names another issuer, and then /oidc is an unknown path.
  const mounts: { oidc?: NodeHandler } = { oidc: accounts.idp?.handle };

  const compress = createCompressor();
  const route = (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    if (path.startsWith('/api/') || path === '/api' || path.startsWith('/sandbox/')) return void (hot?.(req, res) || api(req, res));
    drainAfterAnswer(req, res);
    if (mounts.oidc && (path === '/oidc' || path.startsWith('/oidc/') || path.startsWith('/oidc?'))) return mounts.oidc(req, res);
    return web(req, res, (error?: unknown) => {
      log.error({ err: error, path }, 'page failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('Something went wrong');
    });
  };

  const secure = createSecurityHeaders(config);
  const access = createAccessLog(log);
  // The metrics count each request from the access log's own entry: no second timer or hook on the request path.
  const finished = access && metrics
    ? (entry: AccessEntry) => {
        access(entry);
        metrics.request(entry);
      }
    : (access ?? metrics?.request);
  const requestId = createRequestIds();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const incoming = req.headers['x-request-id'];
    const reqId = typeof incoming === 'string' && /^[\w-]{1,64}$/.test(incoming) ? incoming : requestId();
    res.setHeader('x-request-id', reqId);
    if (access) (res as LoggedResponse).reqId = reqId;
    if (secure(req, res)) return;
    // Every path has a body limit: one declared larger is refused before anything reads it (body-limit.ts).
    if (refuseDeclaredOversize(req, res)) return;
    // Without Accept-Encoding there is nothing to negotiate: skip the compressor's per-response hooks.
    if (!req.headers['accept-encoding']) return route(req, res);
    compress(req, res, () => route(req, res));
  };
  // Each request is handled in the event loop's check phase, after every socket readable in this turn has been
  // read, so under load the responses go out together rather than one write between each read. Measured with
  // bench:balances on 2 cores: ~40% more requests per second and a lower p99; an idle server answers as fast.
  // The access log is info; below that level and without metrics the server's responses are Node's own and a request
  // costs it nothing.
  const server = createServer({ ServerResponse: finished ? loggedResponses(finished) : ServerResponse }, (req, res) => setImmediate(handle, req, res));
  server.keepAliveTimeout = KEEP_ALIVE_MS;

  let exporter: MetricsListener | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
    if (metrics && config.operating.metrics) exporter = await listenMetrics(metrics.registry, config.operating.metrics, log);
    // What the commands beside this server compare their settings with (environment.ts).
    await recordServerSettings(database.pool, config);
  } catch (error) {
    await exporter?.close();
    if (server.listening) server.close();
    await custody.close();
    await signer?.close();
    accounts.close();
    await database.close();
    await tracing?.shutdown();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new ConfigError(`PORT ${config.port} is already in use`);
    if (code === 'EACCES') throw new ConfigError(`PORT ${config.port} needs privileges this process does not have`);
    throw error;
  }
  const address = server.address();
  const port = address && typeof address === 'object' ? address.port : config.port;
  // The feeds' first poll, so the start line can say which prices are missing (bounded: a slow source is not waited for).
  if (config.workers) await firstPoll(custody, database, log);
  // One line of what is on and what is off (production runs on no stand-in: what has no real adapter is off).
  const summary = startSummary(config, custody, await custody.rates.prices().catch(() => undefined));
  log.info({ port, metricsPort: exporter?.port, publicUrl: config.publicUrl, version, appEnv: config.appEnv, ...summary }, `wallet started (${config.appEnv}): ${formatStartSummary(summary)}`);
  // The log is batched; the line an operator (or a supervisor) waits for goes out now.
  log.flush();
  // Background jobs in this process unless WORKERS=off (then `npm run worker` runs them elsewhere).
  const worker = config.workers ? createWorker({ pool: database.pool, log, handlers: custody.jobs, pollMs: config.workerPollMs, observe: metrics?.job, trace: tracing?.job }) : undefined;
  worker?.start();

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      log.info('shutting down');
      // /api/ready answers 503 from now on; the port stays open SHUTDOWN_DRAIN_MS so load balancers stop sending first.
      readiness.drain();
      if (config.operating.shutdownDrainMs > 0) await new Promise((resolve) => setTimeout(resolve, config.operating.shutdownDrainMs));
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      // A connection answering now is closed once its answer is out, not kept KEEP_ALIVE_MS for a next request.
      server.keepAliveTimeout = 1;
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
      await drained;
      clearTimeout(timer);
      await worker?.stop();
      await exporter?.close();
      await custody.close();
      await signer?.close();
      accounts.close();
      await database.close();
      // The spans of the last requests and jobs go out before the process ends.
      await tracing?.shutdown();
      log.info('stopped');
    })();
    return closing;
  };
  return { close, port, routes: gateway.routes, metricsPort: exporter?.port };
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadEnvironmentConfig();
  } catch (error) {
    fail(startFailure(error));
  }
  const log = createLogger(config.logLevel);
  let running: RunningServer | undefined;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'signal received');
    void (running?.close() ?? Promise.resolve()).then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
  try {
    running = await startServer(config, log);
  } catch (error) {
    fail(startFailure(error));
  }
  if (stopping) await running.close();
}

if (import.meta.main) await main();
