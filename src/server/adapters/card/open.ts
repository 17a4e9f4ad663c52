/**
 * Picks the card payment provider from its options. Only the embedded sandbox exists so far (CARD_PROVIDER=sandbox,
 * never in production); `off` means no provider, and buying is off. A real provider's adapter implements
 * `CardProvider` from ./port.ts and is chosen here, and the sandbox is then off.
 */
import type pg from 'pg';
import type { Hono } from 'hono';
import type { Logger } from '../../log.ts';
import type { SecretsKey } from '../keys/port.ts';
import type { WebhookDeliverer } from '../webhooks/delivery.ts';
import type { CardProvider } from './port.ts';
import { cardSandboxSecret, createCardSandbox } from './sandbox.ts';

/** The gateway's webhook for card payment events, under PUBLIC_URL. */
export const CARD_WEBHOOK_PATH = '/api/webhooks/card';

/** What the card adapters need (composition maps CARD_* onto it). */
export type CardOptions = Readonly<{
  provider: 'sandbox' | 'off';
  /** The secret the provider signs its webhooks with; unset with the sandbox means one generated once into the database. */
  webhookSecret: string | undefined;
  /** The merchant name the provider's payment page shows. */
  merchantName: string;
  /** How long the sandbox provider takes to report a payment's outcome by webhook. */
  sandboxDelayMs: number;
}>;

/** `provider` is undefined when buying is off; `webhooks` (the sandbox's outbox, for a worker job) without the sandbox. */
export type Cards = { provider: CardProvider | undefined; sandbox: Hono | undefined; webhooks: WebhookDeliverer | undefined };

export async function openCards(options: CardOptions, context: { pool: pg.Pool; log: Logger; publicUrl: string; secrets: SecretsKey }): Promise<Cards> {
  if (options.provider === 'off') return { provider: undefined, sandbox: undefined, webhooks: undefined };
  const sandbox = createCardSandbox({
    pool: context.pool,
    log: context.log,
    secret: await cardSandboxSecret(context.pool, context.secrets, options.webhookSecret),
    merchantName: options.merchantName,
    publicUrl: context.publicUrl,
    webhookUrl: `${context.publicUrl}${CARD_WEBHOOK_PATH}`,
    reportDelayMs: options.sandboxDelayMs,
  });
  return { provider: sandbox.provider, sandbox: sandbox.routes, webhooks: sandbox.webhooks };
}
