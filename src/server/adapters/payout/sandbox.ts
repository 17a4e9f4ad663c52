/**
 * The embedded sandbox bank: the payout provider used where no real one is configured. It tokenises cards into its
 * own vault (BIN and last four digits only, never the full number), pays a payout out `delayMs` after it was asked,
 * and reports the outcome by a signed webhook to the gateway, retried with backoff until the gateway answers 2xx.
 *
 * Deterministic outcomes, for demos and tests: a card whose number ends in 0002 is declined by the issuing bank;
 * every other card is paid. The BIN lookup answers from `sandbox-bins.json` (or the file PAYOUT_BIN_TABLE names).
 */
import type pg from 'pg';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import { z } from 'zod';
import type { Logger } from '../../log.ts';
import type { JobHandler } from '../../jobs/worker.ts';
import { backoffMs, postSignedWebhook, type PostWebhook } from '../webhooks/delivery.ts';
import { maskCard, PayoutUnavailableError, type CardInfo, type PayoutProvider, type PayoutReport } from './port.ts';
import shippedBins from './sandbox-bins.json' with { type: 'json' };

/** The last four digits of the sandbox's declined test card. */
export const SANDBOX_DECLINED_LAST4 = '0002';
export const SANDBOX_DECLINE_REASON = 'Card declined by the issuing bank';

const SECRET_SETTING = 'payout.sandbox.secret';
const DELIVERY_LEASE_S = 30;
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_MAX_MS = 300_000;
const BATCH = 50;

const binTable = z.record(z.string().regex(/^\d{6}$/), z.object({ code: z.string().min(1), system: z.string().min(1), bank: z.string().optional() }));

/** The shipped BIN table, or the operator's own file in the same shape. */
export function loadBinTable(path: string | undefined): Record<string, CardInfo> {
  if (!path) return binTable.parse(shippedBins);
  return binTable.parse(JSON.parse(readFileSync(path, 'utf8')));
}

/** PAYOUT_WEBHOOK_SECRET, else one generated once and kept in the database, so every process agrees on it. */
export async function sandboxWebhookSecret(pool: pg.Pool, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  await pool.query(`INSERT INTO app_setting (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, [SECRET_SETTING, { secret: randomBytes(32).toString('hex') }]);
  const stored = await pool.query<{ value: { secret?: string } }>('SELECT value FROM app_setting WHERE key = $1', [SECRET_SETTING]);
  const secret = stored.rows[0]?.value.secret;
  if (!secret) throw new Error('the payout sandbox secret could not be stored');
  return secret;
}

export type SandboxBankOptions = {
  pool: pg.Pool;
  log: Logger;
  secret: string;
  delayMs: number;
  bins: Record<string, CardInfo>;
  /** Where the bank reports outcomes: the gateway's webhook. */
  webhookUrl: string;
  pollMs: number;
  deliver?: PostWebhook;
};

export type SandboxBank = { provider: PayoutProvider; jobs: JobHandler[]; routes: Hono };

export function createSandboxBank(options: SandboxBankOptions): SandboxBank {
  const { pool, log, secret, bins } = options;
  const deliver = options.deliver ?? postSignedWebhook;

  const provider: PayoutProvider = {
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

  /** Pays (or declines) every payout that is due, in one statement: each is decided once. */
  const payDue = async () => {
    await pool.query(
      `UPDATE payout_sandbox_payouts p
          SET status = CASE WHEN c.last4 = $1 THEN 'FAILED' ELSE 'SUCCEEDED' END,
              reason = CASE WHEN c.last4 = $1 THEN $2 END,
              next_attempt_at = now()
         FROM payout_sandbox_cards c
        WHERE c.token = p.token
          AND p.id IN (SELECT id FROM payout_sandbox_payouts WHERE status = 'PENDING' AND due_at <= now()
                        ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED)`,
      [SANDBOX_DECLINED_LAST4, SANDBOX_DECLINE_REASON, BATCH],
    );
  };

  /**
   * Reports decided payouts; each is leased for a while so two workers never post the same one at once. The post and
   * the backoff are the shared ones of ../webhooks/delivery.ts; the delivery state lives on the payout row itself.
   */
  const report = async () => {
    const claimed = await pool.query<{ id: string; reference: string; status: 'SUCCEEDED' | 'FAILED'; reason: string | null; webhook_attempts: number }>(
      `UPDATE payout_sandbox_payouts SET next_attempt_at = now() + $1 * interval '1 second', webhook_attempts = webhook_attempts + 1
        WHERE id IN (SELECT id FROM payout_sandbox_payouts
                      WHERE status <> 'PENDING' AND NOT webhook_delivered AND next_attempt_at <= now()
                      ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
        RETURNING id, reference, status, reason, webhook_attempts`,
      [DELIVERY_LEASE_S, BATCH],
    );
    await Promise.all(
      claimed.rows.map(async (row) => {
        const body: PayoutReport = { payoutId: row.id, reference: row.reference, status: row.status, reason: row.reason };
        const result = await deliver(options.webhookUrl, secret, JSON.stringify(body));
        if (result.ok) {
          await pool.query('UPDATE payout_sandbox_payouts SET webhook_delivered = true, last_error = NULL WHERE id = $1', [row.id]);
          return;
        }
        const backoff = backoffMs(row.webhook_attempts, BACKOFF_BASE_MS, BACKOFF_MAX_MS);
        log.warn({ payout: row.id, attempt: row.webhook_attempts, error: result.error, retryInMs: backoff }, 'payout webhook not delivered; will retry');
        await pool.query(`UPDATE payout_sandbox_payouts SET next_attempt_at = now() + $2 * interval '1 millisecond', last_error = $3 WHERE id = $1`, [
          row.id,
          backoff,
          result.error ?? 'unknown',
        ]);
      }),
    );
  };

  const routes = new Hono();
  routes.get('/bins', (c) => c.json(bins));
  routes.get('/payouts', async (c) => {
    const rows = await pool.query(
      `SELECT p.id, p.reference, p.status, p.reason, p.amount::text, p.currency, c.bin || '******' || c.last4 AS card, p.due_at AS "dueAt",
              p.webhook_delivered AS "webhookDelivered", p.webhook_attempts AS "webhookAttempts", p.last_error AS "lastError"
         FROM payout_sandbox_payouts p JOIN payout_sandbox_cards c ON c.token = p.token ORDER BY p.seq DESC LIMIT 50`,
    );
    return c.json(rows.rows);
  });

  return {
    provider,
    jobs: [
      {
        name: 'payout.sandbox',
        everyMs: options.pollMs,
        run: async () => {
          await payDue();
          await report();
        },
      },
    ],
    routes,
  };
}
