/**
 * Picks the payout provider from configuration. Only the embedded sandbox bank exists so far (PAYOUT_PROVIDER=sandbox,
 * never in production); `off` means no provider, and selling is off. A real bank's adapter implements
 * `PayoutProvider` from ./port.ts and is chosen here.
 */
import type pg from 'pg';
import type { Hono } from 'hono';
import type { Config } from '../../config.ts';
import type { Logger } from '../../log.ts';
import type { SecretsKey } from '../keys/secrets-key.ts';
import type { JobHandler } from '../../jobs/worker.ts';
import type { PayoutProvider } from './port.ts';
import { createSandboxBank, loadBinTable, sandboxWebhookSecret } from './sandbox.ts';

export type PayoutConfig = Config['payout'];

export const DEFAULT_PAYOUT_CONFIG: PayoutConfig = { provider: 'sandbox', webhookSecret: undefined, sandboxDelayMs: 5000, binTable: undefined };

/** The gateway's webhook for payout reports, under PUBLIC_URL. */
export const PAYOUT_WEBHOOK_PATH = '/api/webhooks/payout';

/** `provider` is undefined when selling is off. */
export type Payouts = { provider: PayoutProvider | undefined; jobs: JobHandler[]; sandbox: Hono | undefined };

export async function openPayouts(config: PayoutConfig, context: { pool: pg.Pool; log: Logger; publicUrl: string; pollMs: number; secrets: SecretsKey }): Promise<Payouts> {
  if (config.provider === 'off') return { provider: undefined, jobs: [], sandbox: undefined };
  const bank = createSandboxBank({
    pool: context.pool,
    log: context.log,
    secret: await sandboxWebhookSecret(context.pool, context.secrets, config.webhookSecret),
    delayMs: config.sandboxDelayMs,
    bins: loadBinTable(config.binTable),
    webhookUrl: `${context.publicUrl}${PAYOUT_WEBHOOK_PATH}`,
    pollMs: context.pollMs,
  });
  return { provider: bank.provider, jobs: bank.jobs, sandbox: bank.routes };
}
