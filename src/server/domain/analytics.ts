/**
 * Analytics (SPEC §3, §7): the embedded data plane's rules. The browser's RudderStack SDK reads its source
 * configuration and posts events here unless an operator points it at another collector; events are kept for a
 * retention period and read by `npm run analytics -- report`. Nothing here moves money or knows HTTP.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Queryable } from './ledger.ts';
import type { SealedSettings } from '../adapters/keys/port.ts';

export const ANALYTICS_EVENT_TYPES = ['page', 'track', 'identify', 'alias', 'group'] as const;
export type AnalyticsEventType = (typeof ANALYTICS_EVENT_TYPES)[number];

/** An event as the SDK sends it (SPEC §3), already checked for shape; fields beyond these are kept as they came. */
export type AnalyticsEvent = {
  type: AnalyticsEventType;
  messageId: string;
  anonymousId?: string | undefined;
  userId?: string | null | undefined;
  originalTimestamp?: string | undefined;
  event?: string | undefined;
  name?: string | undefined;
  properties?: Record<string, unknown> | undefined;
  context?: Record<string, unknown> | undefined;
} & Record<string, unknown>;

/** The source the browser's SDK is configured with (GET /api/client-config): off when there is no write key. */
export type AnalyticsSource = { writeKey: string; dataPlaneUrl: string; configUrl: string };

const WRITE_KEY_SETTING = 'analytics.write-key';

/** ANALYTICS_WRITE_KEY, else one generated once and kept sealed in app_setting, so every process and restart agrees. */
export async function loadWriteKey(configured: string | undefined, settings: SealedSettings): Promise<string> {
  if (configured !== undefined) return configured;
  return settings.load(WRITE_KEY_SETTING, {
    parse: (stored) => (typeof stored === 'string' && /^[\w-]{16,200}$/.test(stored) ? stored : undefined),
    fresh: () => randomBytes(24).toString('base64url'),
  });
}

/** Whether `given` is the write key, in constant time. */
export function isWriteKey(writeKey: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(writeKey, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * What the SDK reads from its config URL (`/sourceConfig`): the source, enabled, with no device-mode destination
 * (events go to the data plane only) and no error or metrics reporting to RudderStack's own service.
 */
export function sourceConfiguration(writeKey: string) {
  return {
    isHosted: false,
    source: {
      id: 'wallet-web',
      name: 'Wallet web and mini app',
      writeKey,
      workspaceId: 'embedded',
      enabled: true,
      config: { statsCollection: { errors: { enabled: false }, metrics: { enabled: false } } },
      destinations: [],
    },
  };
}

const text = (value: unknown, max: number): string | null => (typeof value === 'string' && value !== '' ? value.slice(0, max) : null);
const objectOf = (value: unknown): Record<string, unknown> => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

/** The columns the report reads, taken from an event. */
function columnsOf(event: AnalyticsEvent, receivedAt: Date) {
  const properties = objectOf(event.properties);
  const page = objectOf(objectOf(event.context)['page']);
  const sent = event.originalTimestamp ? new Date(event.originalTimestamp) : receivedAt;
  return {
    messageId: event.messageId,
    anonymousId: event.anonymousId ?? '',
    userId: text(event.userId, 200),
    type: event.type,
    name: event.type === 'track' ? text(event.event, 200) : event.type === 'page' ? text(event.name ?? properties['name'], 200) : null,
    path: text(page['path'] ?? properties['path'], 500),
    appType: event.type === 'track' && event.event === 'load' ? text(properties['appType'], 20) : null,
    sentAt: Number.isNaN(sent.getTime()) ? receivedAt : sent,
  };
}

/** Stores the events of one post; an event already stored (the same message id from the same visitor) stays once. */
export async function recordEvents(pool: Queryable, events: readonly AnalyticsEvent[], receivedAt = new Date()): Promise<number> {
  if (events.length === 0) return 0;
  const values: unknown[] = [];
  const rows = events.map((event, i) => {
    const c = columnsOf(event, receivedAt);
    values.push(c.messageId, c.anonymousId, c.userId, c.type, c.name, c.path, c.appType, c.sentAt, receivedAt, JSON.stringify(event));
    const n = i * 10;
    return `($${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}, $${n + 7}, $${n + 8}, $${n + 9}, $${n + 10}::jsonb)`;
  });
  const result = await pool.query(
    `INSERT INTO analytics_events (message_id, anonymous_id, user_id, type, name, path, app_type, sent_at, received_at, payload)
     VALUES ${rows.join(', ')} ON CONFLICT ON CONSTRAINT analytics_events_message DO NOTHING`,
    values,
  );
  return result.rowCount ?? 0;
}

/** Deletes the events received more than `days` days ago (ANALYTICS_RETENTION_DAYS); returns how many. */
export async function purgeAnalyticsEvents(pool: Queryable, days: number, now = new Date()): Promise<number> {
  const result = await pool.query('DELETE FROM analytics_events WHERE received_at < $1', [new Date(now.getTime() - days * 86_400_000)]);
  return result.rowCount ?? 0;
}

export type AnalyticsReport = {
  days: number;
  /** Events per day (UTC) and name: a track's event, a page's name or its type otherwise. */
  perDay: Array<{ day: string; type: string; name: string; count: number }>;
  /** SPEC §3: where the app was started from, by the 'load' events' app type. */
  appTypes: Array<{ appType: string; count: number }>;
  topPages: Array<{ path: string; count: number }>;
};

/** The last `days` days of events, as `npm run analytics -- report` prints them. */
export async function analyticsReport(pool: Queryable, days: number, now = new Date()): Promise<AnalyticsReport> {
  const since = new Date(now.getTime() - days * 86_400_000);
  const perDay = await pool.query<{ day: string; type: string; name: string; count: string }>(
    `SELECT to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, type, COALESCE(name, type) AS name, count(*) AS count
       FROM analytics_events WHERE received_at >= $1 GROUP BY 1, 2, 3 ORDER BY 1, 4 DESC, 3`,
    [since],
  );
  const appTypes = await pool.query<{ app_type: string; count: string }>(
    `SELECT COALESCE(app_type, 'unknown') AS app_type, count(*) AS count FROM analytics_events
      WHERE received_at >= $1 AND type = 'track' AND name = 'load' GROUP BY 1 ORDER BY 2 DESC, 1`,
    [since],
  );
  const topPages = await pool.query<{ path: string; count: string }>(
    `SELECT path, count(*) AS count FROM analytics_events WHERE received_at >= $1 AND type = 'page' AND path IS NOT NULL
      GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10`,
    [since],
  );
  return {
    days,
    perDay: perDay.rows.map((r) => ({ day: r.day, type: r.type, name: r.name, count: Number(r.count) })),
    appTypes: appTypes.rows.map((r) => ({ appType: r.app_type, count: Number(r.count) })),
    topPages: topPages.rows.map((r) => ({ path: r.path, count: Number(r.count) })),
  };
}
