/**
 * The embedded sandbox bank: the payout provider used where no real one is configured. It tokenises cards into its
 * own vault (BIN and last four digits only, never the full number), pays a payout out `delayMs` after it was asked,
 * and reports the outcome by a signed webhook to the gateway, sent through the webhook outbox (../webhooks/delivery.ts):
 * retried with backoff until the gateway answers 2xx.
 *
 * Deterministic outcomes, for demos and tests: a card whose number ends in 0002 is declined by the issuing bank;
 * every other card is paid. The BIN lookup answers from `sandbox-bins.json` (or the file PAYOUT_BIN_TABLE names).
 */
import type pg from 'pg';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import { z } from 'zod';
import { inTransaction } from '../../db/transaction.ts';
import type { SecretsKey } from '../keys/port.ts';
import { createWebhookDeliverer, enqueueWebhook, providerWebhookSecret, type WebhookDeliverer, type WebhookSenderOptions } from '../webhooks/delivery.ts';
import { maskCard, PayoutUnavailableError, type CardInfo, type PayoutProvider, type PayoutReport } from './port.ts';
import shippedBins from './sandbox-bins.json' with { type: 'json' };

/** The last four digits of the sandbox's declined test card. */
export const SANDBOX_DECLINED_LAST4 = '0002';
export const SANDBOX_DECLINE_REASON = 'Card declined by the issuing bank';

const SECRET_SETTING = 'payout.sandbox.secret';
/** The outbox topic of the sandbox bank's reports. */
const PAYOUT_WEBHOOK_TOPIC = 'payout';
const BATCH = 50;

const binTable = z.record(z.string().regex(/^\d{6}$/), z.object({ code: z.string().min(1), system: z.string().min(1), bank: z.string().optional() }));

/** The shipped BIN table, or the operator's own file in the same shape. */
export function loadBinTable(path: string | undefined): Record<string, CardInfo> {
  if (!path) return binTable.parse(shippedBins);
  return binTable.parse(JSON.parse(readFileSync(path, 'utf8')));
}

/** PAYOUT_WEBHOOK_SECRET, else one generated once and kept sealed in the database (../webhooks/delivery.ts). */
export function sandboxWebhookSecret(pool: pg.Pool, key: SecretsKey, configured: string | undefined): Promise<string> {
  return providerWebhookSecret(pool, key, configured, SECRET_SETTING);
}

export type SandboxBankOptions = WebhookSenderOptions & { delayMs: number; bins: Record<string, CardInfo> };

/** `payDue` and `webhooks.deliverDue` are the bank's work, run by the worker's jobs (jobs/handlers.ts). */
export type SandboxBank = { provider: PayoutProvider; routes: Hono; payDue: () => Promise<void>; webhooks: WebhookDeliverer };

export function createSandboxBank(options: SandboxBankOptions): SandboxBank {
  return {
    provider: sandboxPayoutProvider(options),
    routes: sandboxBankRoutes(options.pool, options.bins),
    payDue: () => payDuePayouts(options.pool, options.webhookUrl),
    webhooks: createWebhookDeliverer({ pool: options.pool, log: options.log, topic: PAYOUT_WEBHOOK_TOPIC, secret: options.secret }),
  };
}

function sandboxPayoutProvider(options: Pick<SandboxBankOptions, 'pool' | 'secret' | 'bins' | 'delayMs'>): PayoutProvider {
  const { pool, secret, bins } = options;
  return {
    name: 'sandbox',
    webhookSecret: secret,
    async lookupBin(bin) {
      return bins[bin];
    },
    async tokenizeCard(cardNumber) {
      const bin = cardNumber.slice(0, 6);
      const last4 = cardNumber.slice(-4);
      // Keyed by the secret, so the same card is the same token and the token reveals nothing of the number.
      const token = `tok_${createHmac('sha256', secret).update(`card:${cardNumber}`).digest('base64url').slice(0, 32)}`;
      await pool.query('INSERT INTO payout_sandbox_cards (token, bin, last4) VALUES ($1, $2, $3) ON CONFLICT (token) DO NOTHING', [token, bin, last4]);
      return { token, masked: maskCard(cardNumber), info: bins[bin] ?? { code: 'UNKNOWN', system: 'UNKNOWN' } };
    },
    async createPayout(request) {
      try {
        await pool.query(
          `INSERT INTO payout_sandbox_payouts (reference, token, amount, currency, due_at)
           VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond') ON CONFLICT (reference) DO NOTHING`,
          [request.reference, request.token, request.amount.toString(), request.currency, options.delayMs],
        );
        const row = await pool.query<{ id: string }>('SELECT id FROM payout_sandbox_payouts WHERE reference = $1', [request.reference]);
        const id = row.rows[0]?.id;
        if (!id) throw new Error('the payout was not stored');
        return { payoutId: id };
      } catch (error) {
        throw new PayoutUnavailableError('the sandbox bank could not take the payout', { cause: error });
      }
    },
  };
}

/**
 * Pays (or declines) every payout that is due, in one statement, and queues each one's report in the same
 * transaction: each is decided once and reported exactly when its decision committed.
 */
async function payDuePayouts(pool: pg.Pool, webhookUrl: string): Promise<void> {
  await inTransaction(pool, async (client) => {
    const decided = await client.query<PayoutReport>(
      `UPDATE payout_sandbox_payouts p
          SET status = CASE WHEN c.last4 = $1 THEN 'FAILED' ELSE 'SUCCEEDED' END,
              reason = CASE WHEN c.last4 = $1 THEN $2 END
         FROM payout_sandbox_cards c
        WHERE c.token = p.token
          AND p.id IN (SELECT id FROM payout_sandbox_payouts WHERE status = 'PENDING' AND due_at <= now()
                        ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED)
        RETURNING p.id AS "payoutId", p.reference, p.status, p.reason`,
      [SANDBOX_DECLINED_LAST4, SANDBOX_DECLINE_REASON, BATCH],
    );
    for (const report of decided.rows) {
      await enqueueWebhook(client, { topic: PAYOUT_WEBHOOK_TOPIC, eventKey: report.payoutId, url: webhookUrl, body: JSON.stringify(report) });
    }
  });
}

/** For operators and tests: the BIN table, and the newest payouts with how their webhooks fared. */
function sandboxBankRoutes(pool: pg.Pool, bins: Record<string, CardInfo>): Hono {
  const routes = new Hono();
  routes.get('/bins', (c) => c.json(bins));
  routes.get('/payouts', async (c) => {
    const rows = await pool.query(
      `SELECT p.id, p.reference, p.status, p.reason, p.amount::text, p.currency, c.bin || '******' || c.last4 AS card, p.due_at AS "dueAt",
              d.delivered_at IS NOT NULL AS "webhookDelivered", coalesce(d.attempts, 0) AS "webhookAttempts", d.last_error AS "lastError"
         FROM payout_sandbox_payouts p JOIN payout_sandbox_cards c ON c.token = p.token
         LEFT JOIN webhook_deliveries d ON d.topic = $1 AND d.event_key = p.id::text
        ORDER BY p.seq DESC LIMIT 50`,
      [PAYOUT_WEBHOOK_TOPIC],
    );
    return c.json(rows.rows);
  });
  return routes;
}
