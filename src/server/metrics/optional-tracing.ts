/**
 * Whether this process traces: with OTEL_EXPORTER_OTLP_ENDPOINT (config-operating.ts) tracing.ts is imported and
 * started; without it nothing of OpenTelemetry is loaded at all (only this file's type imports, which compile away).
 */
import type { Logger } from '../log.ts';
import type { Config } from '../config.ts';
import type { Tracing } from './tracing.ts';

/** A graceful stop waits for the collector at most this long, and never longer than SHUTDOWN_TIMEOUT_MS. */
const STOP_WITHIN_MS = 5_000;

export async function openTracing(config: Pick<Config, 'operating' | 'shutdownTimeoutMs'>, version: string, log: Logger): Promise<Tracing | undefined> {
  const settings = config.operating.tracing;
  if (!settings) return undefined;
  const { startTracing } = await import('./tracing.ts');
  return startTracing({ ...settings, version, stopWithinMs: Math.min(STOP_WITHIN_MS, config.shutdownTimeoutMs) }, log);
}
