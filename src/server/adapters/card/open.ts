/**
 * Picks the card payment provider from configuration. Only the embedded sandbox exists so far (CARD_PROVIDER=sandbox,
 * never in production); `off` means no provider, and buying is off. A real provider's adapter implements
 * `CardProvider` from ./port.ts and is chosen here, and the sandbox is then off.
 */
import type pg from 'pg';
import type { Hono } from 'hono';
import type { BuyConfig } from '../../config-buy.ts';
import type { Logger } from '../../log.ts';
import type { SecretsKey } from '../keys/secrets-key.ts';
import type { JobHandler } from '../../jobs/worker.ts';
import type { CardProvider } from './port.ts';
import { cardSandboxSecret, createCardSandbox } from './sandbox.ts';

/** The gateway's webhook for card payment events, under PUBLIC_URL. */
export const CARD_WEBHOOK_PATH = '/api/webhooks/card';

/** `provider` is undefined when buying is off. */
export type Cards = { provider: CardProvider | undefined; jobs: JobHandler[]; sandbox: Hono | undefined };

export async function openCards(
  config: Pick<BuyConfig, 'provider' | 'webhookSecret' | 'merchantName' | 'sandboxDelayMs'>,
  context: { pool: pg.Pool; log: Logger; publicUrl: string; pollMs: number; secrets: SecretsKey },
): Promise<Cards> {
  if (config.provider === 'off') return { provider: undefined, jobs: [], sandbox: undefined };
  const sandbox = createCardSandbox({
    pool: context.pool,
    log: context.log,
    secret: await cardSandboxSecret(context.pool, context.secrets, config.webhookSecret),
    merchantName: config.merchantName,
    publicUrl: context.publicUrl,
    webhookUrl: `${context.publicUrl}${CARD_WEBHOOK_PATH}`,
    pollMs: context.pollMs,
    reportDelayMs: config.sandboxDelayMs,
  });
  return { provider: sandbox.provider, jobs: sandbox.jobs, sandbox: sandbox.routes };
}
