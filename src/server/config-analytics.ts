import { z } from 'zod';
import { ConfigError } from './config-error.ts';

/** The embedded data plane's path under PUBLIC_URL: the SDK's source configuration and event posts (http/analytics.ts). */
export const ANALYTICS_PATH = '/api/analytics';

/** The analytics part of the configuration (README, Configuration); read by loadConfig with the rest. */
export type AnalyticsConfig = Readonly<{
  /** ANALYTICS_WRITE_KEY=off turns analytics off: the browser loads no SDK and the gateway serves no data plane. */
  enabled: boolean;
  /** The source's write key; undefined means one generated once and kept sealed in the database (embedded only). */
  writeKey: string | undefined;
  /** Where the SDK posts events (`/v1/batch` … under it): the gateway's own data plane unless an operator names another. */
  dataPlaneUrl: string;
  /** Where the SDK reads its source configuration (`/sourceConfig` under it). */
  configUrl: string;
  /** Whether this gateway answers the data plane's and the source configuration's requests (one of them is its own). */
  embedded: boolean;
  /** Stored events older than this many days are deleted. */
  retentionDays: number;
  /** Event posts a minute per client address to the embedded data plane; 0 is off. */
  rateLimit: number;
}>;

const url = z.url({ protocol: /^https?$/ });

export const analyticsSchema = {
  ANALYTICS_WRITE_KEY: z.string().trim().regex(/^[\w.-]{8,200}$|^off$/, 'must be off or the source write key (8 to 200 letters, digits, ".", "-", "_")').optional(),
  ANALYTICS_DATA_PLANE_URL: url.optional(),
  ANALYTICS_CONFIG_URL: url.optional(),
  ANALYTICS_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(180),
  ANALYTICS_RATE_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(120),
};

type Parsed = {
  ANALYTICS_WRITE_KEY?: string | undefined;
  ANALYTICS_DATA_PLANE_URL?: string | undefined;
  ANALYTICS_CONFIG_URL?: string | undefined;
  ANALYTICS_RETENTION_DAYS: number;
  ANALYTICS_RATE_LIMIT: number;
};

const trim = (text: string) => text.replace(/\/+$/, '');

export function analyticsConfig(e: Parsed, context: { publicUrl: string }): AnalyticsConfig {
  const own = `${context.publicUrl}${ANALYTICS_PATH}`;
  const dataPlaneUrl = trim(e.ANALYTICS_DATA_PLANE_URL ?? own);
  const configUrl = trim(e.ANALYTICS_CONFIG_URL ?? own);
  const embedded = dataPlaneUrl === own || configUrl === own;
  // A collector elsewhere knows its sources' keys, not one this gateway made up.
  if (!embedded && e.ANALYTICS_WRITE_KEY === undefined) {
    throw new ConfigError('ANALYTICS_WRITE_KEY is required when ANALYTICS_DATA_PLANE_URL and ANALYTICS_CONFIG_URL name another collector (or set it to off)');
  }
  const off = e.ANALYTICS_WRITE_KEY === 'off';
  return Object.freeze({
    enabled: !off,
    writeKey: off ? undefined : e.ANALYTICS_WRITE_KEY,
    dataPlaneUrl,
    configUrl,
    embedded: !off && embedded,
    retentionDays: e.ANALYTICS_RETENTION_DAYS,
    rateLimit: e.ANALYTICS_RATE_LIMIT,
  });
}
