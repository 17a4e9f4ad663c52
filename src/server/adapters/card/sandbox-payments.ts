/**
 * The card sandbox's payments: kept in card_sandbox_payments, moved between statuses one guarded UPDATE at a time,
 * each move queueing its signed webhook in the same transaction (../webhooks/delivery.ts).
 */
import type pg from 'pg';
import { formatUnits } from '../../../lib/amount.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import { inTransaction } from '../../db/transaction.ts';
import { enqueueWebhook } from '../webhooks/delivery.ts';
import { CardProviderUnavailableError, type CardPaymentEvent, type CardPaymentStatus, type CardProvider } from './port.ts';

export const SANDBOX_CARDS = { paid: '4242424242424242', declined: '4000000000000002', confirm: '4000000000003220' } as const;
export const SANDBOX_CONFIRMATION_CODE = '1234';
export const SANDBOX_DECLINE_REASON = 'Card declined by the issuing bank';
export const SANDBOX_AUTH_FAILED_REASON = 'The payer did not confirm the payment';
export const CARD_SANDBOX_PATH = '/sandbox/card';
export const CARD_WEBHOOK_TOPIC = 'card';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type PaymentRow = {
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

export type SandboxPaymentsOptions = {
  pool: pg.Pool;
  secret: string;
  publicUrl: string;
  /** Where the provider reports: the gateway's webhook. */
  webhookUrl: string;
  /** How long the sandbox takes to report a payment's outcome (its webhook is held back this long). */
  reportDelayMs?: number | undefined;
};

export type PaymentPatch = { last4?: string; reason?: string; unexpiredOnly?: boolean };

export type SandboxPayments = {
  find: (id: string) => Promise<PaymentRow | undefined>;
  /** Moves a payment from one of `from` to `to` and queues its event, in one transaction; undefined when it was not in `from`. */
  transition: (id: string, from: CardPaymentStatus[], to: CardPaymentStatus, patch: PaymentPatch) => Promise<PaymentRow | undefined>;
  provider: CardProvider;
};

export function createSandboxPayments(options: SandboxPaymentsOptions): SandboxPayments {
  const { pool, secret } = options;
  const select = `SELECT id, reference, amount::text, currency, description, return_url, customer_email, status, card_last4, failure_reason, expires_at,
                         expires_at <= now() AS expired FROM card_sandbox_payments`;

  const find = async (id: string): Promise<PaymentRow | undefined> => {
    if (!UUID.test(id)) return undefined;
    return (await pool.query<PaymentRow>(`${select} WHERE id = $1`, [id])).rows[0];
  };

  const transition: SandboxPayments['transition'] = (id, from, to, patch) =>
    inTransaction(pool, async (client) => {
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
          amount: formatUnits(unitsFromRow(row.amount), 2),
          currency: row.currency,
          reason: row.failure_reason,
          occurredAt: new Date().toISOString(),
        };
        await enqueueWebhook(client, { topic: CARD_WEBHOOK_TOPIC, eventKey: event.eventId, url: options.webhookUrl, body: JSON.stringify(event), delayMs: options.reportDelayMs });
      }
      return row;
    });

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

  return { find, transition, provider };
}
