/**
 * Picks the payout provider from its options. Only the embedded sandbox bank exists so far (PAYOUT_PROVIDER=sandbox,
 * never in production); `off` means no provider, and selling is off. A real bank's adapter implements
 * `PayoutProvider` from ./port.ts and is chosen here.
 */
import type pg from 'pg';
import type { Hono } from 'hono';
import type { Logger } from '../../log.ts';
import type { SecretsKey } from '../keys/port.ts';
import type { WebhookDeliverer } from '../webhooks/delivery.ts';
import type { PayoutProvider } from './port.ts';
import { createSandboxBank, loadBinTable, sandboxWebhookSecret } from './sandbox.ts';

/** What the payout adapters need (composition maps PAYOUT_* onto it). */
export type PayoutOptions = Readonly<{
  provider: 'sandbox' | 'off';
  /** The secret the bank signs its webhooks with; unset with the sandbox means one generated once into the database. */
  webhookSecret: string | undefined;
  /** How long the sandbox bank takes to pay. */
  sandboxDelayMs: number;
  /** The operator's BIN table file; unset is the shipped one. */
  binTable: string | undefined;
}>;

export const DEFAULT_PAYOUT_OPTIONS: PayoutOptions = { provider: 'sandbox', webhookSecret: undefined, sandboxDelayMs: 5000, binTable: undefined };

/** The gateway's webhook for payout reports, under PUBLIC_URL. */
export const PAYOUT_WEBHOOK_PATH = '/api/webhooks/payout';

/**
 * `provider` is undefined when selling is off. `payDue` (the sandbox bank paying due payouts) and `webhooks` (its
 * outbox) are work for the worker's jobs, absent without the sandbox.
 */
export type Payouts = {
  provider: PayoutProvider | undefined;
  sandbox: Hono | undefined;
  payDue: (() => Promise<void>) | undefined;
  webhooks: WebhookDeliverer | undefined;
};

export async function openPayouts(options: PayoutOptions, context: { pool: pg.Pool; log: Logger; publicUrl: string; secrets: SecretsKey }): Promise<Payouts> {
  if (options.provider === 'off') return { provider: undefined, sandbox: undefined, payDue: undefined, webhooks: undefined };
  const bank = createSandboxBank({
    pool: context.pool,
    log: context.log,
    secret: await sandboxWebhookSecret(context.pool, context.secrets, options.webhookSecret),
    delayMs: options.sandboxDelayMs,
    bins: loadBinTable(options.binTable),
    webhookUrl: `${context.publicUrl}${PAYOUT_WEBHOOK_PATH}`,
  });
  return { provider: bank.provider, sandbox: bank.routes, payDue: bank.payDue, webhooks: bank.webhooks };
}
