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
}>;

export const operatingSchema = {
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(300_000).default(0),
  HOT_WALLET_MINIMUM: jsonSetting(
    z.record(z.string().regex(/^[A-Z0-9_]+$/, 'keys are currency codes like BTC or USDT_TRX'), z.string().regex(/^\d{1,12}(?:\.\d{1,18})?$/, 'amounts are decimal strings like "0.5"')),
    'must be JSON like {"BTC":"0.5","ETH":"2"}',
  ).optional(),
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
  });
}
