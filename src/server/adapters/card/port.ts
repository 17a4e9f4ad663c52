/**
 * The port to a card payment provider: the gateway asks it for a payment and sends the browser to the provider's
 * hosted page (the card number never reaches us). The provider reports what happened by webhooks signed as in
 * `../webhooks/port.ts`, each with a body of the `CardPaymentEvent` shape; they may come twice or out of order.
 */
import type { Units } from '../../../lib/money.ts';

export type CardPaymentStatus = 'PENDING' | 'REQUIRES_ACTION' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

/** The body of the provider's webhook. `amount` is a decimal string in `currency`. */
export type CardPaymentEvent = {
  eventId: string;
  paymentId: string;
  /** Ours: `buy:<order id>`. */
  reference: string;
  status: CardPaymentStatus;
  amount: string;
  currency: string;
  reason?: string | null | undefined;
  /** ISO 8601. */
  occurredAt: string;
};

/** SPEC §3 order confirm's request parameters: what the provider's risk checks see of the browser. */
export type PayerDetails = {
  email?: string | undefined;
  browserLanguage?: string | undefined;
  screenHeight?: number | undefined;
  screenWidth?: number | undefined;
  timeZone?: string | undefined;
  userAgent?: string | undefined;
  javascriptEnabled?: boolean | undefined;
  ip?: string | undefined;
};

export type CardPaymentRequest = {
  /** Ours; a second request with the same reference answers with the first payment. */
  reference: string;
  /** Minor units of `currency` (cents). */
  amount: Units;
  currency: string;
  description: string;
  /** Where the provider's page sends the browser when it is done. */
  returnUrl: string;
  /** After this the payment can no longer be paid. */
  expiresAt: Date;
  payer: PayerDetails;
};

/** The provider could not be reached or refused to work right now: nothing was done. */
export class CardProviderUnavailableError extends Error {}

export type CardProvider = {
  readonly name: string;
  /** The secret the provider signs its webhooks with. */
  readonly webhookSecret: string;
  createPayment(request: CardPaymentRequest): Promise<{ paymentId: string; redirectUrl: string }>;
  /**
   * Cancels a payment that has not been paid (an order past its time); answers the payment's status after the
   * call: CANCELLED when it is now cancelled, or SUCCEEDED / FAILED when it had already ended.
   */
  cancelPayment(paymentId: string): Promise<CardPaymentStatus>;
};
