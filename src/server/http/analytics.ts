/**
 * The embedded analytics data plane under /api/analytics (SPEC §7 Analytics): the source configuration the SDK
 * fetches from its config URL, and the HTTP API's event posts (`/v1/batch`, `/v1/{type}`, and the beacon's
 * `/beacon/v1/batch`). Every call names the write key: Basic auth as the SDK sends it, or `?writeKey=` where the
 * browser cannot set a header (the source configuration, sendBeacon). Bounded in size (body-limit.ts), in rate
 * (ANALYTICS_RATE_LIMIT per client address) and in shape (zod).
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import type { Queryable } from '../domain/ledger.ts';
import { ANALYTICS_EVENT_TYPES, isWriteKey, recordEvents, sourceConfiguration, type AnalyticsEvent } from '../domain/analytics.ts';
import type { Limit } from '../domain/limits.ts';
import type { TrustProxy } from '../net/client-address.ts';
import { DomainError } from '../domain/errors.ts';
import { readJsonBody } from './json-body.ts';
import { rateLimit } from './rate-limit.ts';
import type { ApiEnv } from './context.ts';

/** At most this many events in one batch; the SDK's beacon queue sends 10 at a time. */
export const MAX_BATCH_EVENTS = 100;

const id = z.string().trim().min(1).max(200);
const object = z.record(z.string(), z.unknown());

/** SPEC §3 analytics event: the fields every event needs checked, the rest (traits, integrations …) kept as sent. */
export const analyticsEventSchema = z
  .looseObject({
    type: z.enum(ANALYTICS_EVENT_TYPES),
    messageId: id,
    anonymousId: id.optional(),
    userId: z.string().max(200).nullable().optional(),
    originalTimestamp: z.iso.datetime({ offset: true }).optional(),
    sentAt: z.iso.datetime({ offset: true }).optional(),
    channel: z.string().max(50).optional(),
    event: z.string().min(1).max(200).optional(),
    name: z.string().max(200).nullable().optional(),
    properties: object.optional(),
    context: object.optional(),
    traits: object.optional(),
    integrations: object.optional(),
  })
  .refine((event) => event.anonymousId !== undefined || (event.userId ?? '') !== '', 'an event needs an anonymousId or a userId')
  .refine((event) => event.type !== 'track' || event.event !== undefined, 'a track event needs its event name');

const batchSchema = z.object({
  batch: z.array(z.unknown()).min(1, 'the batch is empty').max(MAX_BATCH_EVENTS, `a batch holds at most ${MAX_BATCH_EVENTS} events`),
  sentAt: z.string().optional(),
});

/** The write key a request names: Basic auth (`key:` base64) or the `writeKey` query parameter. */
function givenWriteKey(c: Context): string | undefined {
  const header = c.req.header('authorization');
  if (header?.startsWith('Basic ')) {
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon === -1 ? decoded : decoded.slice(0, colon);
  }
  return c.req.query('writeKey');
}

function parseEvents(raw: unknown[], type?: (typeof ANALYTICS_EVENT_TYPES)[number]): AnalyticsEvent[] {
  return raw.map((item, index) => {
    const given = typeof item === 'object' && item !== null && !Array.isArray(item) ? (item as Record<string, unknown>) : undefined;
    if (!given) throw new DomainError('VALIDATION', `batch.${index}: an event must be a JSON object`);
    // A single-event endpoint names the type in its path; an event that says another is refused.
    if (type !== undefined && given['type'] !== undefined && given['type'] !== type) throw new DomainError('VALIDATION', `type: this endpoint takes ${type} events`);
    const parsed = analyticsEventSchema.safeParse(type === undefined ? given : { ...given, type });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = [...(type === undefined ? ['batch', index] : []), ...(issue?.path ?? [])].join('.');
      throw new DomainError('VALIDATION', `${where ? `${where}: ` : ''}${issue?.message ?? 'invalid event'}`);
    }
    return parsed.data as AnalyticsEvent;
  });
}

export type AnalyticsApiDeps = { pool: Queryable; writeKey: string; limit: Limit | undefined; trustProxy: TrustProxy };

/** The data plane's routes, mounted under /api when the gateway is the data plane (config-analytics.ts). */
export function createAnalyticsApi(deps: AnalyticsApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const authorised: MiddlewareHandler<ApiEnv> = async (c, next) => {
    if (!isWriteKey(deps.writeKey, givenWriteKey(c))) throw new DomainError('UNAUTHORIZED', 'The write key is missing or wrong');
    await next();
  };
  const limited = rateLimit({ limit: deps.limit, trustProxy: deps.trustProxy });

  const source = (c: Context<ApiEnv>) => {
    c.header('Cache-Control', 'no-store');
    return c.json(sourceConfiguration(deps.writeKey));
  };
  app.get('/analytics/sourceConfig', authorised, source);
  app.get('/analytics/sourceConfig/', authorised, source);

  const batch = async (c: Context<ApiEnv>) => {
    const body = batchSchema.safeParse(await readJsonBody(c.req.raw));
    if (!body.success) {
      const issue = body.error.issues[0];
      throw new DomainError('VALIDATION', `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'not a batch'}`);
    }
    await recordEvents(deps.pool, parseEvents(body.data.batch));
    return c.json({ ok: true });
  };
  app.post('/analytics/v1/batch', limited, authorised, batch);
  // sendBeacon posts text/plain with the key in the query: the same batch.
  app.post('/analytics/beacon/v1/batch', limited, authorised, batch);

  app.post('/analytics/v1/:type{page|track|identify|alias|group}', limited, authorised, async (c) => {
    const type = c.req.param('type') as (typeof ANALYTICS_EVENT_TYPES)[number];
    await recordEvents(deps.pool, parseEvents([await readJsonBody(c.req.raw)], type));
    return c.json({ ok: true });
  });
  return app;
}
