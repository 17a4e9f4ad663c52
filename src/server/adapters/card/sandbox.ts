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
import { formatUnits } from '../../../lib/amount.ts';
import type { Logger } from '../../log.ts';
import type { JobHandler } from '../../jobs/worker.ts';
import type { SecretsKey } from '../keys/secrets-key.ts';
import { createWebhookDeliverer, enqueueWebhook, generatedWebhookSecret, type PostWebhook } from '../webhooks/delivery.ts';
import { CardProviderUnavailableError, type CardPaymentEvent, type CardPaymentStatus, type CardProvider } from './port.ts';

export const SANDBOX_CARDS = { paid: '4242424242424242', declined: '4000000000000002', confirm: '4000000000003220' } as const;
export const SANDBOX_CONFIRMATION_CODE = '1234';
export const SANDBOX_DECLINE_REASON = 'Card declined by the issuing bank';
export const SANDBOX_AUTH_FAILED_REASON = 'The payer did not confirm the payment';
export const CARD_SANDBOX_PATH = '/sandbox/card';
export const CARD_WEBHOOK_TOPIC = 'card';

const SECRET_SETTING = 'card.sandbox.secret';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** CARD_WEBHOOK_SECRET, else one generated once and kept sealed in the database (../webhooks/delivery.ts). */
export async function cardSandboxSecret(pool: pg.Pool, key: SecretsKey, configured: string | undefined): Promise<string> {
  return configured ?? generatedWebhookSecret(pool, key, SECRET_SETTING);
}

type PaymentRow = {
  id: string;
  reference: string;
  amount: string;
  currency: string;
  description: string;
  return_url: string;
  customer_email: string | null;
  status: CardPaymentStatus;
  card_last4: string | null;
  failure_reason: string | null;
  expires_at: Date;
  expired: boolean;
};

export type CardSandboxOptions = {
  pool: pg.Pool;
  log: Logger;
  secret: string;
  merchantName: string;
  publicUrl: string;
  /** Where the provider reports: the gateway's webhook. */
  webhookUrl: string;
  pollMs: number;
  /** How long the sandbox takes to report a payment's outcome (its webhook is held back this long). */
  reportDelayMs?: number;
  post?: PostWebhook;
  retryBaseMs?: number;
};

export type CardSandbox = { provider: CardProvider; jobs: JobHandler[]; routes: Hono };

export function createCardSandbox(options: CardSandboxOptions): CardSandbox {
  const { pool, secret } = options;
  const deliverer = createWebhookDeliverer({
    pool,
    log: options.log,
    topic: CARD_WEBHOOK_TOPIC,
    secret,
    everyMs: options.pollMs,
    baseDelayMs: options.retryBaseMs,
    post: options.post,
  });

  const select = `SELECT id, reference, amount::text, currency, description, return_url, customer_email, status, card_last4, failure_reason, expires_at,
                         expires_at <= now() AS expired FROM card_sandbox_payments`;

  const find = async (id: string): Promise<PaymentRow | undefined> => {
    if (!UUID.test(id)) return undefined;
    return (await pool.query<PaymentRow>(`${select} WHERE id = $1`, [id])).rows[0];
  };

  /** Moves a payment from one of `from` to `to` and queues its event, in one transaction; undefined when it was not in `from`. */
  const transition = async (id: string, from: CardPaymentStatus[], to: CardPaymentStatus, patch: { last4?: string; reason?: string; unexpiredOnly?: boolean }) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const updated = await client.query<PaymentRow>(
        `UPDATE card_sandbox_payments SET status = $3, card_last4 = coalesce($4, card_last4), failure_reason = $5, updated_at = now()
          WHERE id = $1 AND status = ANY($2::text[]) AND (NOT $6 OR expires_at > now())
          RETURNING id, reference, amount::text, currency, description, return_url, customer_email, status, card_last4, failure_reason, expires_at, false AS expired`,
        [id, from, to, patch.last4 ?? null, patch.reason ?? null, patch.unexpiredOnly ?? true],
      );
      const row = updated.rows[0];
      if (row) {
        const event: CardPaymentEvent = {
          eventId: `evt_${row.id}_${to.toLowerCase()}`,
          paymentId: row.id,
          reference: row.reference,
          status: to,
          amount: formatUnits(BigInt(row.amount), 2),
          currency: row.currency,
          reason: row.failure_reason,
          occurredAt: new Date().toISOString(),
        };
        await enqueueWebhook(client, { topic: CARD_WEBHOOK_TOPIC, eventKey: event.eventId, url: options.webhookUrl, body: JSON.stringify(event), delayMs: options.reportDelayMs });
      }
      await client.query('COMMIT');
      return row;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  };

  const provider: CardProvider = {
    name: 'sandbox',
    webhookSecret: secret,
    async createPayment(request) {
      try {
        await pool.query(
          `INSERT INTO card_sandbox_payments (reference, amount, currency, description, return_url, customer_email, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (reference) DO NOTHING`,
          [request.reference, request.amount.toString(), request.currency, request.description, request.returnUrl, request.payer.email ?? null, request.expiresAt],
        );
        const row = await pool.query<{ id: string }>('SELECT id FROM card_sandbox_payments WHERE reference = $1', [request.reference]);
        const id = row.rows[0]?.id;
        if (!id) throw new Error('the payment was not stored');
        return { paymentId: id, redirectUrl: `${options.publicUrl}${CARD_SANDBOX_PATH}/pay/${id}` };
      } catch (error) {
        throw new CardProviderUnavailableError('the sandbox card provider could not take the payment', { cause: error });
      }
    },
    async cancelPayment(paymentId) {
      const cancelled = await transition(paymentId, ['PENDING', 'REQUIRES_ACTION'], 'CANCELLED', { reason: 'The payment was not completed in time', unexpiredOnly: false });
      if (cancelled) return 'CANCELLED';
      const row = await find(paymentId);
      if (!row) throw new CardProviderUnavailableError(`the sandbox knows no payment ${paymentId}`);
      return row.status;
    },
  };

  const routes = new Hono();
  const page = (c: Context, body: string, status: 200 | 400 | 404 | 410 = 200) => {
    c.header('Cache-Control', 'no-store');
    c.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:; frame-ancestors 'none'");
    return c.html(body, status);
  };

  routes.get('/pay/:id', async (c) => {
    const payment = await find(c.req.param('id'));
    if (!payment) return page(c, notFoundPage(), 404);
    return page(c, paymentPage(payment, options.merchantName));
  });

  routes.post('/pay/:id', async (c) => {
    const payment = await find(c.req.param('id'));
    if (!payment) return page(c, notFoundPage(), 404);
    if (payment.status !== 'PENDING' || payment.expired) return page(c, paymentPage(payment, options.merchantName), 410);
    const form = await c.req.parseBody();
    const card = String(form.card ?? '').replace(/[\s-]/g, '');
    const expiry = String(form.expiry ?? '').trim();
    const cvc = String(form.cvc ?? '').trim();
    const problem = cardProblem(card, expiry, cvc, new Date());
    if (problem) return page(c, paymentPage(payment, options.merchantName, { error: problem, expiry }), 400);
    const last4 = card.slice(-4);
    if (card === SANDBOX_CARDS.confirm) {
      await transition(payment.id, ['PENDING'], 'REQUIRES_ACTION', { last4 });
      return c.redirect(`${CARD_SANDBOX_PATH}/pay/${payment.id}`, 303);
    }
    const to: CardPaymentStatus = card === SANDBOX_CARDS.paid ? 'SUCCEEDED' : 'FAILED';
    const done = await transition(payment.id, ['PENDING'], to, { last4, reason: to === 'FAILED' ? SANDBOX_DECLINE_REASON : undefined });
    return c.redirect(done?.return_url ?? `${CARD_SANDBOX_PATH}/pay/${payment.id}`, 303);
  });

  routes.post('/pay/:id/confirm', async (c) => {
    const payment = await find(c.req.param('id'));
    if (!payment) return page(c, notFoundPage(), 404);
    if (payment.status !== 'REQUIRES_ACTION' || payment.expired) return page(c, paymentPage(payment, options.merchantName), 410);
    const form = await c.req.parseBody();
    if (form.action === 'cancel') {
      const done = await transition(payment.id, ['REQUIRES_ACTION'], 'FAILED', { reason: SANDBOX_AUTH_FAILED_REASON });
      return c.redirect(done?.return_url ?? `${CARD_SANDBOX_PATH}/pay/${payment.id}`, 303);
    }
    if (String(form.code ?? '').trim() !== SANDBOX_CONFIRMATION_CODE) {
      return page(c, paymentPage(payment, options.merchantName, { error: 'The confirmation code is wrong.' }), 400);
    }
    const done = await transition(payment.id, ['REQUIRES_ACTION'], 'SUCCEEDED', {});
    return c.redirect(done?.return_url ?? `${CARD_SANDBOX_PATH}/pay/${payment.id}`, 303);
  });

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

  return { provider, jobs: [deliverer.job], routes };
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

/** The amount as a payment page shows it: always two decimals. */
function money(payment: Pick<PaymentRow, 'amount' | 'currency'>): string {
  const cents = BigInt(payment.amount);
  return `${cents / 100n}.${String(cents % 100n).padStart(2, '0')} ${payment.currency}`;
}

const escape = (text: string) => text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);

const STYLE = `
  :root { color-scheme: light dark; --bg: #f4f5f7; --card: #fff; --fg: #1d1d22; --muted: #6b6b76; --line: #dcdce3; --accent: #3b5bdb; --danger: #d9480f; }
  @media (prefers-color-scheme: dark) { :root { --bg: #16161a; --card: #202025; --fg: #f4f4f6; --muted: #a0a0ab; --line: #34343c; --accent: #748ffc; --danger: #ff8787; } }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
  main { max-width: 420px; margin: 0 auto; padding: 24px 16px 40px; display: flex; flex-direction: column; gap: 16px; }
  .badge { align-self: flex-start; font-size: 12px; font-weight: 700; letter-spacing: .06em; text-transform: uppercase; color: var(--muted); border: 1px solid var(--line); border-radius: 999px; padding: 2px 10px; }
  .card { background: var(--card); border: 1px solid var(--line); border-radius: 16px; padding: 16px; display: flex; flex-direction: column; gap: 12px; }
  h1 { font-size: 20px; margin: 0; } p { margin: 0; } .muted { color: var(--muted); font-size: 14px; }
  .amount { font-size: 32px; font-weight: 700; }
  label { display: flex; flex-direction: column; gap: 6px; font-size: 14px; font-weight: 600; }
  input { font: inherit; padding: 12px; border-radius: 12px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); width: 100%; }
  .row { display: flex; gap: 12px; } .row > * { flex: 1; min-width: 0; }
  button, .button { font: inherit; font-weight: 700; padding: 14px; border-radius: 12px; border: 0; background: var(--accent); color: #fff; cursor: pointer; text-align: center; text-decoration: none; width: 100%; }
  button.secondary { background: transparent; color: var(--fg); border: 1px solid var(--line); }
  .error { color: var(--danger); font-weight: 600; }
  table { border-collapse: collapse; font-size: 14px; } td { padding: 2px 8px 2px 0; } code { font-size: 13px; white-space: nowrap; }
`;

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title><style>${STYLE}</style></head><body><main><span class="badge">Sandbox card payment</span>${body}</main></body></html>`;
}

function notFoundPage(): string {
  return layout('Payment not found', `<section class="card"><h1>Payment not found</h1><p class="muted">This payment link is not valid.</p></section>`);
}

function summary(payment: PaymentRow, merchant: string): string {
  const amount = money(payment);
  return `<section class="card" aria-label="Order">
    <p class="muted">Merchant</p><h1 data-testid="merchant">${escape(merchant)}</h1>
    <p class="muted">${escape(payment.description)}</p>
    <p class="amount" data-testid="amount">${escape(amount)}</p>
    ${payment.customer_email ? `<p class="muted">Paying as ${escape(payment.customer_email)}</p>` : ''}
  </section>`;
}

function testCards(): string {
  return `<section class="card" aria-label="Test cards"><p class="muted">Test cards: any future expiry (MM/YY), any CVC.</p><table>
    <tr><td><code>4242 4242 4242 4242</code></td><td>pays</td></tr>
    <tr><td><code>4000 0000 0000 0002</code></td><td>is declined</td></tr>
    <tr><td><code>4000 0000 0000 3220</code></td><td>asks for a confirmation code (${SANDBOX_CONFIRMATION_CODE})</td></tr>
  </table></section>`;
}

function paymentPage(payment: PaymentRow, merchant: string, form: { error?: string; expiry?: string } = {}): string {
  const amount = money(payment);
  const error = form.error ? `<p class="error" role="alert">${escape(form.error)}</p>` : '';
  const back = `<a class="button" href="${escape(payment.return_url)}">Return to ${escape(merchant)}</a>`;
  if (payment.status === 'SUCCEEDED') {
    return layout('Payment received', `${summary(payment, merchant)}<section class="card"><h1>Payment received</h1><p class="muted">Card •••• ${escape(payment.card_last4 ?? '')}</p>${back}</section>`);
  }
  if (payment.status === 'FAILED' || payment.status === 'CANCELLED') {
    return layout('Payment failed', `${summary(payment, merchant)}<section class="card"><h1>Payment failed</h1><p class="error">${escape(payment.failure_reason ?? 'The payment did not go through.')}</p>${back}</section>`);
  }
  if (payment.expired) {
    return layout('Payment expired', `${summary(payment, merchant)}<section class="card"><h1>This payment has expired</h1>${back}</section>`);
  }
  if (payment.status === 'REQUIRES_ACTION') {
    return layout(
      'Confirm the payment',
      `${summary(payment, merchant)}<form class="card" method="post" action="${CARD_SANDBOX_PATH}/pay/${payment.id}/confirm">
        <h1>Confirm the payment</h1>
        <p class="muted">Your bank sent a one-time code for card •••• ${escape(payment.card_last4 ?? '')}. In the sandbox it is <strong>${SANDBOX_CONFIRMATION_CODE}</strong>.</p>
        ${error}
        <label>Confirmation code<input name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="8" required autofocus></label>
        <button type="submit" name="action" value="confirm">Confirm</button>
        <button type="submit" name="action" value="cancel" class="secondary" formnovalidate>Cancel payment</button>
      </form>`,
    );
  }
  return layout(
    `Pay ${amount}`,
    `${summary(payment, merchant)}<form class="card" method="post" action="${CARD_SANDBOX_PATH}/pay/${payment.id}" autocomplete="off">
      ${error}
      <label>Card number<input name="card" inputmode="numeric" placeholder="4242 4242 4242 4242" maxlength="23" required></label>
      <div class="row">
        <label>Expiry<input name="expiry" placeholder="MM/YY" maxlength="7" value="${escape(form.expiry ?? '')}" required></label>
        <label>CVC<input name="cvc" inputmode="numeric" placeholder="123" maxlength="4" required></label>
      </div>
      <button type="submit">Pay ${escape(amount)}</button>
    </form>${testCards()}`,
  );
}
