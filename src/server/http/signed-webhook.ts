import type { Context } from 'hono';
import type { z } from 'zod';
import { checkWebhookSignature, SIGNATURE_HEADER } from '../adapters/webhooks/port.ts';
import { DomainError } from '../domain/errors.ts';

/**
 * A provider's webhook body (card payments, payouts): public, but only a body signed with the shared secret within
 * 300 s is believed; then parsed by `schema`. `provider` is undefined where no provider of the kind is configured.
 */
export async function signedWebhookBody<S extends z.ZodType>(c: Context, provider: { webhookSecret: string } | undefined, kind: string, schema: S): Promise<z.output<S>> {
  if (!provider) throw new DomainError('NOT_FOUND', `No ${kind} provider is configured on this wallet`);
  const raw = await c.req.text();
  const problem = checkWebhookSignature(provider.webhookSecret, c.req.header(SIGNATURE_HEADER), raw, Math.floor(Date.now() / 1000));
  if (problem) throw new DomainError('WEBHOOK_SIGNATURE', `The webhook signature is not valid (${problem.toLowerCase()})`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new DomainError('VALIDATION', 'The request body is not valid JSON');
  }
  return schema.parse(parsed);
}
