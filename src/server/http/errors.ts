import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import type { Logger } from '../log.ts';
import { isDatabaseUnavailable, databaseCode } from '../db/database.ts';
import { DomainError } from '../domain/errors.ts';
import { ChainUnavailableError } from '../adapters/chains/port.ts';
import { requestLanguage, userMessage, type AccountLanguage } from './messages.ts';

/**
 * A refusal of the gateway's own (a webhook's signature, an endpoint that is off, an answer relayed from the identity
 * provider) whose status is not the code's alone. A DomainError like any other; the domain never throws it.
 */
export class ApiError extends DomainError {
  readonly status: ContentfulStatusCode;
  readonly exceptionCode: string;
  constructor(status: ContentfulStatusCode, exceptionCode: string, message: string, options?: { cause?: unknown }) {
    super(exceptionCode, message, options);
    this.status = status;
    this.exceptionCode = exceptionCode;
  }
}

/**
 * The one map from a domain error's code (the wire `exceptionCode`) to its HTTP status. A code not listed is a
 * refusal of the client's request: 400.
 */
export const STATUS_OF_CODE: Readonly<Record<string, ContentfulStatusCode>> = {
  VALIDATION: 400,
  UNKNOWN_CURRENCY: 400,
  NOT_FOUND: 404,
  FORBIDDEN: 403,
  UNAUTHORIZED: 401,
  ACCOUNT_NOT_FOUND: 404,
  ASSET_NOT_FOUND: 404,
  TRANSACTION_NOT_FOUND: 404,
  IDEMPOTENCY_KEY_REUSED: 422,
  IDEMPOTENCY_KEY_IN_USE: 409,
  ORDER_STATE_CHANGED: 409,
  SERVICE_UNAVAILABLE: 503,
  BUSY: 503,
  TOO_MANY_REQUESTS: 429,
  TOO_MANY_MAILS: 429,
  // No current market price for what a quote needs (domain/rates.ts): nothing is quoted.
  PRICE_UNAVAILABLE: 503,
  // A network's node or API did not answer within the request's budget (CHAIN_REQUEST_BUDGET_MS); the body names it.
  NETWORK_UNAVAILABLE: 503,
  WEBHOOK_SIGNATURE: 401,
  TG_DISABLED: 404,
  // Telegram sign-in and linking (SPEC §8).
  B2C_USM0022: 400,
  B2C_USM0023: 401,
  B2C_USM0024: 409,
  B2C_USM0025: 401,
  B2C_USM0026: 409,
  B2C_USM0027: 503,
  TG_UNLINK_LAST_SIGN_IN: 409,
  // Passcode and account protection (SPEC §8).
  B2C_USM0030: 429,
  B2C_USM0031: 403,
  B2C_USM0032: 423,
  PINCODE_BUSY: 409,
  PINCODE_ACTIVE: 409,
  PINCODE_NOT_ACTIVE: 409,
  PINCODE_NOT_BLOCKED: 409,
  RECENT_SIGN_IN_REQUIRED: 403,
  MAIL_UNAVAILABLE: 503,
  EMAIL_REQUIRED: 409,
  EMAIL_SAME: 400,
  EMAIL_TAKEN: 409,
  NO_EMAIL_CHANGE: 409,
  TOO_MANY_CODES: 429,
  RESEND_TOO_SOON: 429,
  CONFIRMATION_INVALID: 400,
  CONFIRMATION_USED: 409,
  // Send and the address book.
  WITHDRAWAL_WRONG_ADDRESS: 400,
  WITHDRAWAL_ADDRESS_NOT_USED: 400,
  WITHDRAWAL_SAME_USER: 400,
  WITHDRAWAL_NOT_ENOUGH_FUNDS: 400,
  WITHDRAWAL_AMOUNT_PRECISION: 400,
  WITHDRAWAL_AMOUNT_TOO_SMALL: 400,
  WITHDRAWAL_NOT_FOUND: 404,
  WITHDRAWALS_FROZEN: 403,
  // Over the user's rolling 24-hour limit in USD (domain/withdrawals/limits.ts); the message says what is left.
  WITHDRAWAL_DAILY_LIMIT: 403,
  // The review queue (domain/withdrawals/review.ts): a decision on a withdrawal not waiting for one.
  WITHDRAWAL_NOT_UNDER_REVIEW: 409,
  OPERATOR_NOT_FOUND: 404,
  REVIEW_REASON_REQUIRED: 400,
  // The network's fee could not be estimated (its node is down): refused rather than undercharged.
  WITHDRAWAL_FEE_UNAVAILABLE: 503,
  ADDRESS_BOOK_WRONG_ADDRESS: 400,
  ADDRESS_BOOK_UNKNOWN_NETWORK: 400,
  ADDRESS_BOOK_DUPLICATE: 409,
  ADDRESS_BOOK_FULL: 409,
  ADDRESS_BOOK_NOT_FOUND: 404,
  // Swap.
  SWAP_UNSUPPORTED_PAIR: 400,
  SWAP_AMOUNT_TOO_SMALL: 400,
  SWAP_MIN_LIMIT: 400,
  SWAP_MAX_LIMIT: 400,
  SWAP_NOT_ENOUGH: 400,
  SWAP_QUOTE_MISMATCH: 400,
  SWAP_DESK_INVENTORY: 503,
  SWAP_QUOTE_NOT_FOUND: 404,
  SWAP_ORDER_NOT_FOUND: 404,
  SWAP_QUOTE_EXPIRED: 410,
  SWAP_ORDER_EXPIRED: 410,
  SWAP_QUOTE_USED: 409,
  SWAP_ORDER_CANCELLED: 409,
  SWAP_ORDER_CLOSED: 409,
  // Buy with a card.
  B2C_FIAT_UNSUPPORTED: 400,
  B2C_RATE_NOT_FOUND: 400,
  B2C_RATE_EXPIRED: 400,
  B2C_METHOD_NOT_FOUND: 400,
  B2C_LIMIT: 400,
  B2C_RETURN_URL: 400,
  B2C_ORDER_NOT_FOUND: 404,
  B2C_ORDER_EXPIRED: 400,
  B2C_UNAVAILABLE: 503,
  // The on-ramp (MoonPay): not answering, refusing with its own words, not selling in the buyer's country.
  B2C_PROVIDER_DOWN: 503,
  B2C_PROVIDER_REFUSED: 400,
  B2C_REGION: 403,
  B2C_NO_ADDRESS: 409,
  // Sell to a card.
  C2F_FIAT_UNSUPPORTED: 400,
  C2F_BIN_NOT_FOUND: 404,
  C2F_ONLY_SBER: 400,
  C2F_RATE_NOT_FOUND: 400,
  C2F_RATE_EXPIRED: 400,
  C2F_LIMIT: 400,
  C2F_NOT_ENOUGH_FUNDS: 400,
  C2F_CARD_NOT_FOUND: 404,
  C2F_ORDER_NOT_FOUND: 404,
  C2F_PAYOUTS_UNAVAILABLE: 503,
  C2F_PAYOUT_CONFLICT: 409,
  // The operator console (domain/operator/): a caller without the role gets FORBIDDEN (403).
  OPERATOR_USER_NOT_FOUND: 404,
  OPERATOR_ACCOUNT_NOT_FOUND: 404,
  OPERATOR_NOT_AN_OPERATOR: 404,
  OPERATOR_OWN_ROLE: 409,
  FREEZE_REVERSAL_DUE: 409,
  ADJUSTMENT_NOT_FOUND: 404,
  ADJUSTMENT_OWN_PROPOSAL: 403,
  ADJUSTMENT_DECIDED: 409,
  ADJUSTMENT_INSUFFICIENT_FUNDS: 409,
  MAIL_NOT_FOUND: 404,
  MAIL_NOT_RESENDABLE: 409,
  // The gateway's own faults and a request its client gave up (errorResponse words them; nothing throws them).
  INTERNAL: 500,
  ABORTED: 400,
  // Sign-up refused for a weak password (its specific message, README deviations).
  WEAK_PASSWORD: 400,
};

/** The status a domain error's code is answered with. */
export function statusOf(code: string): ContentfulStatusCode {
  return STATUS_OF_CODE[code] ?? 400;
}

/** `network`: the network whose node did not answer (NETWORK_UNAVAILABLE only). */
export type ErrorBody = { exceptionCode: string; message: string; network?: string };

/** Refusals answered without reading the account's language (cookie and Accept-Language still count). */
const WITHOUT_ACCOUNT_READ = new Set(['SERVICE_UNAVAILABLE', 'BUSY', 'TOO_MANY_REQUESTS', 'TOO_MANY_MAILS']);

/**
 * The one place that turns any thrown value into the gateway's error shape; only our own faults are 500. A refusal's
 * message is in the user's language (messages.ts): `accountLanguage` reads the signed-in account's.
 */
export async function errorResponse(error: unknown, c: Context, log: Logger, accountLanguage?: AccountLanguage): Promise<Response> {
  const refuse = async (code: string, message: string, status: ContentfulStatusCode, details?: DomainError['details']) => {
    const refusal = { code, message, details };
    // The database away or busy, a flood being turned away: no read of the account for it, the request's own signals do.
    const language = await requestLanguage(c, refusal, WITHOUT_ACCOUNT_READ.has(code) ? undefined : accountLanguage);
    return c.json<ErrorBody>({ exceptionCode: code, message: userMessage(refusal, language) }, status);
  };
  if (error instanceof DomainError) {
    // A refusal that knows when to come back (limits.ts) says so the standard way.
    const wait = error.details['retryAfterSeconds'];
    if (typeof wait === 'number') c.header('Retry-After', String(wait));
    const status = error instanceof ApiError ? error.status : statusOf(error.code);
    return refuse(error.code, error.message, status, error.details);
  }
  // A node or chain API that did not answer (in the request's budget): its network's trouble, not ours, and not the user's.
  if (error instanceof ChainUnavailableError) {
    log.warn({ err: error, path: c.req.path, network: error.network }, 'network unavailable');
    const refusal = { code: 'NETWORK_UNAVAILABLE', message: `The ${error.network} network is not answering right now; try again shortly`, details: { network: error.network } };
    const language = await requestLanguage(c, refusal, accountLanguage);
    return c.json<ErrorBody>({ exceptionCode: refusal.code, message: userMessage(refusal, language), network: error.network }, statusOf('NETWORK_UNAVAILABLE'));
  }
  if (error instanceof z.ZodError) {
    const issue = error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    return refuse('VALIDATION', `${where}${issue?.message ?? 'invalid input'}`, 400);
  }
  if (error instanceof SyntaxError) {
    return refuse('VALIDATION', 'The request body is not valid JSON', 400);
  }
  // The client went away mid-request (an aborted upload): nothing of ours failed, and nobody reads the answer.
  if (c.req.raw.signal.aborted) {
    log.warn({ err: error, path: c.req.path }, 'request aborted by the client');
    return c.json<ErrorBody>({ exceptionCode: 'ABORTED', message: 'The request was aborted' }, 400);
  }
  if (isDatabaseUnavailable(error)) {
    log.warn({ err: error, path: c.req.path }, 'database unavailable');
    return refuse('SERVICE_UNAVAILABLE', 'The service is temporarily unavailable; try again shortly', 503);
  }
  // PostgreSQL refuses a NUL character in text (22021, 22P05): input the edge should have refused, never our fault.
  const code = databaseCode(error);
  if (code === '22021' || code === '22P05') {
    return refuse('VALIDATION', 'The request contains a character that is not allowed', 400);
  }
  log.error({ err: error, path: c.req.path }, 'unhandled error');
  return refuse('INTERNAL', 'Something went wrong', 500);
}
