import { z } from 'zod';
import { ConfigError } from './config-error.ts';
import { jsonSetting } from './config-schema.ts';

/**
 * Running the product (README, "Operating"): the Prometheus listener, the drain before a shutdown closes the port,
 * and the hot-wallet floors the alert rules compare holdings with. Read by loadConfig with the rest.
 */
export type OperatingConfig = Readonly<{
  /** Where `/metrics` is served, on a listener of its own; undefined without METRICS_PORT (no metrics at all). */
  metrics: Readonly<{ port: number; host: string }> | undefined;
  /** How long `/api/ready` answers 503 after SIGTERM before the listener closes, so load balancers stop sending first. */
  shutdownDrainMs: number;
  /** Per currency (BTC, USDT_TRX), the decimal amount of custody holdings below which the HotWalletLow alert fires. */
  hotWalletMinimum: Readonly<Record<string, string>>;
  /**
   * OpenTelemetry tracing (metrics/tracing.ts): where spans are sent over OTLP/HTTP (JSON) and the service they are
   * named by; undefined without OTEL_EXPORTER_OTLP_ENDPOINT, and then no OpenTelemetry code is loaded at all.
   */
  tracing: Readonly<{ tracesUrl: string; serviceName: string; /** OTEL_EXPORTER_OTLP_HEADERS: secrets (a collector's API key). */ headers: Readonly<Record<string, string>> }> | undefined;
}>;

export const operatingSchema = {
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(300_000).default(0),
  HOT_WALLET_MINIMUM: jsonSetting(
    z.record(z.string().regex(/^[A-Z0-9_]+$/, 'keys are currency codes like BTC or USDT_TRX'), z.string().regex(/^\d{1,12}(?:\.\d{1,18})?$/, 'amounts are decimal strings like "0.5"')),
    'must be JSON like {"BTC":"0.5","ETH":"2"}',
  ).optional(),
  // The standard OpenTelemetry variables: the collector's base URL (its /v1/traces receives the spans) and the name.
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .trim()
    .transform((value) => (value === '' ? undefined : value))
    .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL like http://collector:4318' }).optional())
    .optional(),
  OTEL_SERVICE_NAME: z.string().trim().min(1).default('custodial-wallet'),
  // Read here rather than by the exporter from process.env, so that ENV_FILE can hold it too.
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
};

type OperatingEnv = z.infer<z.ZodObject<typeof operatingSchema>>;

export function operatingConfig(e: OperatingEnv, publicPort: number): OperatingConfig {
  // 0 is an ephemeral port for both, which never collide; the same fixed port would put /metrics on the public listener's.
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT !== 0 && e.METRICS_PORT === publicPort) {
    throw new ConfigError(`METRICS_PORT is ${e.METRICS_PORT}, the public PORT: metrics are served on a port of their own`);
  }
  return Object.freeze({
    metrics: e.METRICS_PORT === undefined ? undefined : Object.freeze({ port: e.METRICS_PORT, host: e.METRICS_HOST }),
    shutdownDrainMs: e.SHUTDOWN_DRAIN_MS,
    hotWalletMinimum: Object.freeze(e.HOT_WALLET_MINIMUM ?? {}),
    tracing:
      e.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
        ? undefined
        : Object.freeze({ tracesUrl: tracesUrl(e.OTEL_EXPORTER_OTLP_ENDPOINT), serviceName: e.OTEL_SERVICE_NAME, headers: Object.freeze(otlpHeaders(e.OTEL_EXPORTER_OTLP_HEADERS ?? '')) }),
  });
}

/**
 * The OpenTelemetry form `name=value,name2=value2` (values percent-encoded). A malformed one stops the start with a
 * line that names the variable but not its value, which usually holds a key.
 */
function otlpHeaders(raw: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const at = part.indexOf('=');
    const name = part.slice(0, Math.max(at, 0)).trim().toLowerCase();
    let value: string | undefined;
    try {
      value = at < 0 ? undefined : decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      value = undefined;
    }
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name) || value === undefined || /[\r\n]/.test(value)) {
      throw new ConfigError('OTEL_EXPORTER_OTLP_HEADERS is invalid: it must be name=value pairs separated by commas, values percent-encoded (authorization=Bearer%20…)');
    }
    headers[name] = value;
  }
  return headers;
}

/** The OTLP/HTTP rule for the base endpoint: the signal's path is appended to whatever path it has. */
function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}
