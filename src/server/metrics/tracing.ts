/**
 * Optional OpenTelemetry tracing (README "Operating", Tracing): on only with OTEL_EXPORTER_OTLP_ENDPOINT, and then
 * imported by main.ts (or the worker's jobs/main.ts) with a dynamic import, so a process without it never loads any
 * OpenTelemetry code. Spans: one SERVER span per gateway request (`GET /api/:account/asset`: method, route pattern,
 * status), one per worker job run, and one CLIENT span per chain node call the router (adapters/chains/open.ts) makes,
 * as children of the request's or job's span. They are sent over OTLP/HTTP as JSON by a batch processor: a request only
 * adds its span to a bounded queue, and a collector that is away loses spans, never time.
 *
 * Attributes are only bounded, non-secret values: no URL, query, header, body, account id, address, e-mail or token,
 * and a failure is recorded by its error class alone (an error's message may carry an address or a node's URL).
 */
import { context, SpanKind, SpanStatusCode, trace as otelTrace, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import { ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Network } from '../../lib/currencies.ts';
import type { Logger } from '../log.ts';
import type { ChainCallTrace } from '../adapters/chains/port.ts';
import type { JobTrace } from '../jobs/worker.ts';
import { createRouteLabels } from './routes.ts';

type Fetch = (request: Request, env?: unknown) => Promise<Response>;

export type Tracing = {
  /** The gateway's fetch with a server span around each request; `routes` are its patterns (ApiRoute.path). */
  serve: (fetch: Fetch, routes: readonly string[]) => Fetch;
  /** The worker's `trace` hook: a span per job run. */
  job: JobTrace;
  /** The chain router's hook: a span per node call. */
  chainCall: ChainCallTrace;
  /** Sends what is queued (waiting at most `stopWithinMs` for the collector) and stops; for the graceful stop. */
  shutdown: () => Promise<void>;
};

/** `stopWithinMs`: the longest a graceful stop waits for the last spans to reach the collector. */
export type TracingSettings = Readonly<{ tracesUrl: string; serviceName: string; headers: Readonly<Record<string, string>>; version: string; stopWithinMs: number }>;

/** An export to a collector that does not answer gives up after this, so a stop never waits on it for long. */
const EXPORT_TIMEOUT_MS = 5_000;

/** Spans waiting for export: beyond this they are dropped (a collector away must not grow the heap). */
const MAX_QUEUE = 2_048;

/** The span's status and `error.type` of a failure: its class name only. */
function failed(span: Span, error: unknown): void {
  // A subclass that leaves `name` as 'Error' (BroadcastRejectedError, RpcUnavailableError) is named by its class.
  span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? (error.name && error.name !== 'Error' ? error.name : error.constructor.name) : typeof error);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** Runs `run` in a new active span (children nest under it) and ends the span however `run` ends. */
async function within<T>(tracer: Tracer, name: string, kind: SpanKind, attributes: Record<string, string>, run: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await run(span);
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

export function startTracing(settings: TracingSettings, log: Logger): Tracing {
  // OTEL_EXPORTER_OTLP_HEADERS comes parsed from the configuration (ENV_FILE included); compression and the
  // signal's own *_TRACES_HEADERS the exporter reads from the process's environment itself.
  const otlp = new OTLPTraceExporter({ url: settings.tracesUrl, headers: { ...settings.headers }, timeoutMillis: EXPORT_TIMEOUT_MS });
  // OpenTelemetry's own diagnostics are silent: the first failed export after a good one (or the start) is a WARN.
  let failing = false;
  const exporter: SpanExporter = {
    export(spans, done) {
      otlp.export(spans, (result) => {
        const ok = result.code === 0;
        if (!ok && !failing) log.warn({ tracesUrl: settings.tracesUrl, err: result.error }, 'tracing: spans could not be sent to the collector; they are dropped until it answers');
        failing = !ok;
        done(result);
      });
    },
    shutdown: () => otlp.shutdown(),
    forceFlush: () => otlp.forceFlush(),
  };
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: settings.version }),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: MAX_QUEUE, exportTimeoutMillis: EXPORT_TIMEOUT_MS })],
  });
  // The async-hooks context manager, so chain calls find their request's or job's span; no propagator: incoming
  // `traceparent` headers are not trusted (any client could set them) and no outgoing call is instrumented.
  provider.register({ propagator: null });
  const tracer = provider.getTracer('wallet', settings.version);
  log.info({ tracesUrl: settings.tracesUrl, serviceName: settings.serviceName }, 'tracing on');

  let stopped: Promise<void> | undefined;
  return {
    serve(fetch, routes) {
      const routeOf = createRouteLabels(routes);
      return (request, env) => {
        const method = request.method;
        const route = routeOf(new URL(request.url).pathname);
        return within(tracer, `${method} ${route}`, SpanKind.SERVER, { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_HTTP_ROUTE]: route }, async (span) => {
          const response = await fetch(request, env);
          span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, response.status);
          if (response.status >= 500) {
            span.setAttribute(ATTR_ERROR_TYPE, String(response.status));
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          return response;
        });
      };
    },
    job: (job, run) => within(tracer, `job ${job}`, SpanKind.INTERNAL, { 'wallet.job': job }, run),
    chainCall: <T>(network: Network, operation: string, call: () => Promise<T>) =>
      within(tracer, `chain ${operation}`, SpanKind.CLIENT, { 'wallet.network': network, 'wallet.chain.operation': operation }, call),
    shutdown() {
      stopped ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), settings.stopWithinMs)));
        const done = await Promise.race([provider.shutdown().then(() => 'sent' as const, () => 'failed' as const), late]);
        clearTimeout(timer);
        if (done !== 'sent') log.warn({ tracesUrl: settings.tracesUrl }, `tracing stopped: the last spans were not sent (${done === 'late' ? 'the collector did not answer in time' : 'the export failed'})`);
        // The globals register() set, so a later start in this process (tests) registers its own.
        otelTrace.disable();
        context.disable();
      })();
      return stopped;
    },
  };
}
