/**
 * Webhook delivery for the embedded providers (card sandbox, payout sandbox): an outbox table and a worker job.
 *
 * A sender calls `enqueueWebhook(client, { topic, eventKey, url, body })`, inside the transaction that changed its
 * state, so an event exists exactly when its cause committed (the same `eventKey` twice is one event).
 * `createWebhookDeliverer({ topic, secret, ... }).deliverDue`, run by a worker job (jobs/handlers.ts), claims due
 * rows of that topic with FOR UPDATE SKIP LOCKED (any number of processes share them), signs each body afresh (`port.ts`: the timestamp is the attempt's) and POSTs
 * it; a 2xx marks it delivered, anything else is retried with exponential backoff (1 s, 2 s, 4 s ... capped at
 * 5 min) for as long as it takes. A claimed row is leased for 30 s, so a crashed sender's rows go out again: the
 * receiver must expect an event twice, and, as batches go out at once, out of order.
 */
import type pg from 'pg';
import { randomBytes, randomInt } from 'node:crypto';
import type { Logger } from '../../log.ts';
import type { SecretsKey } from '../keys/port.ts';
import { loadSealedSetting } from '../keys/secrets-key.ts';
import { signWebhook, SIGNATURE_HEADER } from './port.ts';

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export type OutgoingWebhook = {
  /** Which deliverer sends it (and with which secret): 'card', 'payout'. */
  topic: string;
  /** The sender's own id for the event; a second enqueue with the same key is a no-op. */
  eventKey: string;
  url: string;
  /** The exact bytes to sign and send (JSON). */
  body: string;
  /** Held back this long before the first attempt (a provider that settles a while later). */
  delayMs?: number;
};

/** Adds an event to the outbox; true when it is new. Call it inside the transaction that caused the event. */
export async function enqueueWebhook(db: Queryable, webhook: OutgoingWebhook): Promise<boolean> {
  const result = await db.query(
    `INSERT INTO webhook_deliveries (topic, event_key, url, body, next_attempt_at) VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond')
     ON CONFLICT (topic, event_key) DO NOTHING`,
    [webhook.topic, webhook.eventKey, webhook.url, webhook.body, webhook.delayMs ?? 0],
  );
  return (result.rowCount ?? 0) > 0;
}

/**
 * An embedded provider's webhook secret when none is configured: generated once and kept sealed in app_setting
 * under `setting`, so every process agrees on it and the database alone cannot sign a webhook.
 */
export async function generatedWebhookSecret(pool: Queryable, key: SecretsKey, setting: string): Promise<string> {
  const stored = await loadSealedSetting(pool, key, setting, {
    parse: (value) => {
      const secret = (value as { secret?: unknown } | null)?.secret;
      return typeof secret === 'string' && secret.length > 0 ? { secret } : undefined;
    },
    fresh: () => ({ secret: randomBytes(32).toString('hex') }),
  });
  return stored.secret;
}

/** The configured secret of an embedded provider (CARD_WEBHOOK_SECRET, PAYOUT_WEBHOOK_SECRET), else the generated one. */
export async function providerWebhookSecret(pool: Queryable, key: SecretsKey, configured: string | undefined, setting: string): Promise<string> {
  return configured ?? generatedWebhookSecret(pool, key, setting);
}

/** What an embedded provider that reports by signed webhooks is made with. */
export type WebhookSenderOptions = {
  pool: pg.Pool;
  log: Logger;
  /** The secret its webhooks are signed with. */
  secret: string;
  /** Where it reports: the gateway's webhook. */
  webhookUrl: string;
};

export type PostResult = { ok: boolean; error?: string };
export type PostWebhook = (url: string, secret: string, body: string) => Promise<PostResult>;

/** POSTs one body signed now; ok when the receiver answered 2xx. */
async function postSignedWebhook(url: string, secret: string, body: string, timeoutMs = 10_000): Promise<PostResult> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signWebhook(secret, body, Math.floor(Date.now() / 1000)) },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    return response.ok ? { ok: true } : { ok: false, error: `HTTP ${response.status}` };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The wait after the n-th failed attempt (1-based): base·2^(n-1), capped, with ±10% jitter. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, jitter: (spread: number) => number = (spread) => randomInt(-spread, spread + 1)): number {
  const raw = Math.min(baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30), maxMs);
  const spread = Math.floor(raw / 10);
  return Math.max(0, raw + (spread > 0 ? jitter(spread) : 0));
}

export type WebhookDelivererOptions = {
  pool: pg.Pool;
  log: Logger;
  topic: string;
  secret: string;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** How long a claimed event is kept from other processes while it is being posted. */
  leaseMs?: number;
  batch?: number;
  post?: PostWebhook;
};

export type WebhookDeliverer = { topic: string; deliverDue: () => Promise<number> };

export function createWebhookDeliverer(options: WebhookDelivererOptions): WebhookDeliverer {
  const { pool, log, topic, secret } = options;
  const baseMs = options.baseDelayMs ?? 1_000;
  const maxMs = options.maxDelayMs ?? 300_000;
  const leaseMs = options.leaseMs ?? 30_000;
  const batch = options.batch ?? 50;
  const post = options.post ?? ((url: string, key: string, body: string) => postSignedWebhook(url, key, body));

  /** Sends every due event of the topic once; returns how many were delivered. */
  const deliverDue = async (): Promise<number> => {
    const claimed = await pool.query<{ id: string; url: string; body: string; attempts: number }>(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = now() + $2 * interval '1 millisecond'
        WHERE id IN (SELECT id FROM webhook_deliveries
                      WHERE topic = $1 AND delivered_at IS NULL AND next_attempt_at <= now()
                      ORDER BY next_attempt_at, created_at LIMIT $3 FOR UPDATE SKIP LOCKED)
        RETURNING id, url, body, attempts`,
      [topic, leaseMs, batch],
    );
    const results = await Promise.all(
      claimed.rows.map(async (row) => {
        const result = await post(row.url, secret, row.body);
        if (result.ok) {
          await pool.query('UPDATE webhook_deliveries SET delivered_at = now(), last_error = NULL WHERE id = $1', [row.id]);
          return true;
        }
        const wait = backoffMs(row.attempts, baseMs, maxMs);
        log.warn({ topic, delivery: row.id, attempt: row.attempts, error: result.error, retryInMs: wait }, 'webhook not delivered; will retry');
        await pool.query(`UPDATE webhook_deliveries SET next_attempt_at = now() + $2 * interval '1 millisecond', last_error = $3 WHERE id = $1`, [
          row.id,
          wait,
          result.error ?? 'unknown',
        ]);
        return false;
      }),
    );
    return results.filter(Boolean).length;
  };

  return { topic, deliverDue };
}
