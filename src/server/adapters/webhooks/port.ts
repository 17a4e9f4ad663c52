import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signatures as card and payout providers sign theirs: HMAC-SHA256 over `${timestamp}.${body}` with a
 * shared secret, sent as `t=<unix seconds>,v1=<hex>` in the signature header. Used by the embedded sandboxes to
 * sign and by the gateway to verify, so both sides agree by construction. A port file though it holds code: the
 * scheme is the protocol between provider and gateway, pure (no state, no I/O), so http may name it.
 */
export const SIGNATURE_HEADER = 'x-signature';
export const DEFAULT_TOLERANCE_S = 300;

export function signWebhook(secret: string, body: string, timestampS: number): string {
  return `t=${timestampS},v1=${digest(secret, timestampS, body)}`;
}

export type SignatureProblem = 'MISSING' | 'MALFORMED' | 'STALE' | 'MISMATCH';

/** Returns null when the header signs `body` with `secret` within `toleranceS` of `nowS`, else the problem. */
export function checkWebhookSignature(
  secret: string,
  header: string | undefined | null,
  body: string,
  nowS: number,
  toleranceS = DEFAULT_TOLERANCE_S,
): SignatureProblem | null {
  if (!header) return 'MISSING';
  const parts = new Map(header.split(',').map((part) => {
    const at = part.indexOf('=');
    return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
  }));
  const timestamp = Number(parts.get('t'));
  const signature = parts.get('v1');
  if (!Number.isSafeInteger(timestamp) || !signature || !/^[0-9a-f]{64}$/.test(signature)) return 'MALFORMED';
  if (Math.abs(nowS - timestamp) > toleranceS) return 'STALE';
  const expected = Buffer.from(digest(secret, timestamp, body), 'hex');
  return timingSafeEqual(expected, Buffer.from(signature, 'hex')) ? null : 'MISMATCH';
}

function digest(secret: string, timestampS: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestampS}.${body}`).digest('hex');
}
