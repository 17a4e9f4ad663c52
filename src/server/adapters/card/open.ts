/**
 * Picks the card payment provider from its options: the embedded sandbox acquirer (CARD_PROVIDER=sandbox, never in
 * production), MoonPay, an on-ramp that sends the coins on chain itself (CARD_PROVIDER=moonpay, ../onramp/port.ts),
 * or `off`: no provider, and buying is off.
 */
import type pg from 'pg';
import type { Hono } from 'hono';
import type { Logger } from '../../log.ts';
import type { SecretsKey } from '../keys/port.ts';
import type { WebhookDeliverer } from '../webhooks/delivery.ts';
import type { CardProvider } from './port.ts';
import { cardSandboxSecret, createCardSandbox } from './sandbox.ts';
import type { OnRampProvider } from '../onramp/port.ts';
import { createMoonPay, type MoonPayOptions } from '../onramp/moonpay.ts';

/** The gateway's webhook for card payment events, under PUBLIC_URL. */
export const CARD_WEBHOOK_PATH = '/api/webhooks/card';
/** The gateway's webhook for MoonPay's transaction events, under PUBLIC_URL: the address its dashboard is given. */
export const MOONPAY_WEBHOOK_PATH = '/api/webhooks/moonpay';

/** What the card adapters need (composition maps CARD_* onto it). */
export type CardOptions = Readonly<{
  provider: 'sandbox' | 'moonpay' | 'off';
  /** MoonPay's keys and addresses, with provider `moonpay`. */
  moonpay?: MoonPayOptions | undefined;
  /** The secret the provider signs its webhooks with; unset with the sandbox means one generated once into the database. */
  webhookSecret: string | undefined;
  /** The merchant name the provider's payment page shows. */
  merchantName: string;
  /** How long the sandbox provider takes to report a payment's outcome by webhook. */
  sandboxDelayMs: number;
}>;

/**
 * `provider` is the acquirer and `onRamp` the on-ramp, at most one of them; both undefined when buying is off.
 * `webhooks` is the sandbox's outbox (for a worker job), undefined without the sandbox.
 */
export type Cards = { provider: CardProvider | undefined; onRamp: OnRampProvider | undefined; sandbox: Hono | undefined; webhooks: WebhookDeliverer | undefined };

export async function openCards(options: CardOptions, context: { pool: pg.Pool; log: Logger; publicUrl: string; secrets: SecretsKey }): Promise<Cards> {
  if (options.provider === 'off') return { provider: undefined, onRamp: undefined, sandbox: undefined, webhooks: undefined };
  if (options.provider === 'moonpay') {
    if (!options.moonpay) throw new Error('CARD_PROVIDER=moonpay without its keys');
    return { provider: undefined, onRamp: createMoonPay(options.moonpay), sandbox: undefined, webhooks: undefined };
  }
  const sandbox = createCardSandbox({
    pool: context.pool,
    log: context.log,
    secret: await cardSandboxSecret(context.pool, context.secrets, options.webhookSecret),
    merchantName: options.merchantName,
    publicUrl: context.publicUrl,
    webhookUrl: `${context.publicUrl}${CARD_WEBHOOK_PATH}`,
    reportDelayMs: options.sandboxDelayMs,
  });
  return { provider: sandbox.provider, onRamp: undefined, sandbox: sandbox.routes, webhooks: sandbox.webhooks };
}
