/**
 * The embedded card payment provider, used where no real one is configured: a hosted payment page under
 * /sandbox/card/pay/<payment id> rendered by the server (merchant, amount, card form), and signed webhooks to the
 * gateway for every change of a payment, sent through the webhook outbox (../webhooks/delivery.ts).
 *
 * Test cards (any future expiry, any 3-digit CVC):
 *   4242 4242 4242 4242  pays at once
 *   4000 0000 0000 0002  is declined by the issuing bank
 *   4000 0000 0000 3220  needs a confirmation step (3-D Secure): the page asks for the code 1234
 * Any other number is refused by the form and changes nothing.
 */
import type pg from 'pg';
import { Hono, type Context } from 'hono';
import { createWebhookDeliverer, providerWebhookSecret, type PostWebhook, type WebhookDeliverer, type WebhookSenderOptions } from '../webhooks/delivery.ts';
import type { SecretsKey } from '../keys/port.ts';
import type { CardPaymentStatus, CardProvider } from './port.ts';
import { notFoundPage, paymentPage } from './sandbox-pages.ts';
import {
  CARD_SANDBOX_PATH,
  CARD_WEBHOOK_TOPIC,
  createSandboxPayments,
  SANDBOX_AUTH_FAILED_REASON,
  SANDBOX_CARDS,
  SANDBOX_CONFIRMATION_CODE,
  SANDBOX_DECLINE_REASON,
  type SandboxPayments,
} from './sandbox-payments.ts';

export { CARD_SANDBOX_PATH, CARD_WEBHOOK_TOPIC, SANDBOX_AUTH_FAILED_REASON, SANDBOX_CARDS, SANDBOX_CONFIRMATION_CODE, SANDBOX_DECLINE_REASON };

const SECRET_SETTING = 'card.sandbox.secret';

/** CARD_WEBHOOK_SECRET, else one generated once and kept sealed in the database (../webhooks/delivery.ts). */
export function cardSandboxSecret(pool: pg.Pool, key: SecretsKey, configured: string | undefined): Promise<string> {
  return providerWebhookSecret(pool, key, configured, SECRET_SETTING);
}

export type CardSandboxOptions = WebhookSenderOptions & {
  merchantName: string;
  publicUrl: string;
  /** How long the sandbox takes to report a payment's outcome (its webhook is held back this long). */
  reportDelayMs?: number | undefined;
  post?: PostWebhook;
  retryBaseMs?: number;
};

/** `webhooks.deliverDue` is the sandbox's work, run by a worker job (jobs/handlers.ts). */
export type CardSandbox = { provider: CardProvider; webhooks: WebhookDeliverer; routes: Hono };

export function createCardSandbox(options: CardSandboxOptions): CardSandbox {
  const payments = createSandboxPayments(options);
  const webhooks = createWebhookDeliverer({ pool: options.pool, log: options.log, topic: CARD_WEBHOOK_TOPIC, secret: options.secret, baseDelayMs: options.retryBaseMs, post: options.post });
  const routes = payerRoutes(payments, options.merchantName);
  routes.route('/', operatorRoutes(options.pool));
  return { provider: payments.provider, webhooks, routes };
}

/** The hosted page the browser is sent to: the card form, then the confirmation step for the 3-D Secure card. */
function payerRoutes(payments: SandboxPayments, merchantName: string): Hono {
  const routes = new Hono();
  const page = (c: Context, body: string, status: 200 | 400 | 404 | 410 = 200) => {
    c.header('Cache-Control', 'no-store');
    c.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:; frame-ancestors 'none'");
    return c.html(body, status);
  };

  routes.get('/pay/:id', async (c) => {
    const payment = await payments.find(c.req.param('id'));
    if (!payment) return page(c, notFoundPage(), 404);
    return page(c, paymentPage(payment, merchantName));
  });

  routes.post('/pay/:id', async (c) => {
    const payment = await payments.find(c.req.param('id'));
    if (!payment) return page(c, notFoundPage(), 404);
    if (payment.status !== 'PENDING' || payment.expired) return page(c, paymentPage(payment, merchantName), 410);
    const form = await c.req.parseBody();
    const card = String(form.card ?? '').replace(/[\s-]/g, '');
    const expiry = String(form.expiry ?? '').trim();
    const cvc = String(form.cvc ?? '').trim();
    const problem = cardProblem(card, expiry, cvc, new Date());
    if (problem) return page(c, paymentPage(payment, merchantName, { error: problem, expiry }), 400);
    const last4 = card.slice(-4);
    if (card === SANDBOX_CARDS.confirm) {
      await payments.transition(payment.id, ['PENDING'], 'REQUIRES_ACTION', { last4 });
      return c.redirect(`${CARD_SANDBOX_PATH}/pay/${payment.id}`, 303);
    }
    const to: CardPaymentStatus = card === SANDBOX_CARDS.paid ? 'SUCCEEDED' : 'FAILED';
    const done = await payments.transition(payment.id, ['PENDING'], to, { last4, reason: to === 'FAILED' ? SANDBOX_DECLINE_REASON : undefined });
    return c.redirect(done?.return_url ?? `${CARD_SANDBOX_PATH}/pay/${payment.id}`, 303);
  });

  routes.post('/pay/:id/confirm', async (c) => {
    const payment = await payments.find(c.req.param('id'));
    if (!payment) return page(c, notFoundPage(), 404);
    if (payment.status !== 'REQUIRES_ACTION' || payment.expired) return page(c, paymentPage(payment, merchantName), 410);
    const form = await c.req.parseBody();
    if (form.action === 'cancel') {
      const done = await payments.transition(payment.id, ['REQUIRES_ACTION'], 'FAILED', { reason: SANDBOX_AUTH_FAILED_REASON });
      return c.redirect(done?.return_url ?? `${CARD_SANDBOX_PATH}/pay/${payment.id}`, 303);
    }
    if (String(form.code ?? '').trim() !== SANDBOX_CONFIRMATION_CODE) {
      return page(c, paymentPage(payment, merchantName, { error: 'The confirmation code is wrong.' }), 400);
    }
    const done = await payments.transition(payment.id, ['REQUIRES_ACTION'], 'SUCCEEDED', {});
    return c.redirect(done?.return_url ?? `${CARD_SANDBOX_PATH}/pay/${payment.id}`, 303);
  });

  return routes;
}

function operatorRoutes(pool: pg.Pool): Hono {
  const routes = new Hono();
  // For operators and tests: reports held back by the sandbox's delay go out at the worker's next round.
  routes.post('/webhooks/flush', async (c) => {
    const due = await pool.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE topic = $1 AND delivered_at IS NULL AND next_attempt_at > now()`, [
      CARD_WEBHOOK_TOPIC,
    ]);
    return c.json({ due: due.rowCount ?? 0 });
  });

  // For operators and tests: the newest payments and how their webhooks fared.
  routes.get('/payments', async (c) => {
    const rows = await pool.query(
      `SELECT p.id, p.reference, p.status, p.amount::text, p.currency, p.card_last4 AS "cardLast4", p.failure_reason AS "failureReason", p.expires_at AS "expiresAt",
              (SELECT json_agg(json_build_object('eventKey', d.event_key, 'attempts', d.attempts, 'delivered', d.delivered_at IS NOT NULL, 'lastError', d.last_error) ORDER BY d.created_at)
                 FROM webhook_deliveries d WHERE d.topic = $1 AND d.event_key LIKE 'evt_' || p.id || '_%') AS webhooks
         FROM card_sandbox_payments p ORDER BY p.created_at DESC LIMIT 50`,
      [CARD_WEBHOOK_TOPIC],
    );
    return c.json(rows.rows);
  });

  return routes;
}

/** Luhn, a future MM/YY expiry, a 3 or 4 digit CVC, and one of the test cards; the message for the form, or null. */
export function cardProblem(card: string, expiry: string, cvc: string, now: Date): string | null {
  if (!/^\d{16}$/.test(card) || !luhn(card)) return 'The card number is not valid.';
  const match = /^(\d{2})\s*\/\s*(\d{2})$/.exec(expiry);
  const month = Number(match?.[1]);
  const year = 2000 + Number(match?.[2]);
  if (!match || month < 1 || month > 12) return 'The expiry date is not valid (MM/YY).';
  if (year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1)) return 'The card has expired.';
  if (!/^\d{3,4}$/.test(cvc)) return 'The CVC is not valid.';
  if (!(Object.values(SANDBOX_CARDS) as string[]).includes(card)) return 'This sandbox takes only its test cards (listed below).';
  return null;
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

