import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import type { Logger } from '../log.ts';
import { isDatabaseUnavailable, databaseCode } from '../db/database.ts';
import { DomainError, ERROR_CODES, type ErrorCode, type ErrorKind } from '../domain/errors.ts';
import { ChainUnavailableError } from '../adapters/chains/port.ts';
import { requestLanguage, userMessage, type AccountLanguage } from './messages.ts';

/** The one map from a kind of refusal (domain/errors.ts, every code has one) to its HTTP status. */
export const STATUS_OF_KIND: Readonly<Record<ErrorKind, ContentfulStatusCode>> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  missing: 404,
  conflict: 409,
  gone: 410,
  unprocessable: 422,
  locked: 423,
  throttled: 429,
  fault: 500,
  unavailable: 503,
};

/** The status a domain error's code is answered with. */
export function statusOf(code: ErrorCode): ContentfulStatusCode {
  return STATUS_OF_KIND[ERROR_CODES[code]];
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
    const code: ErrorCode = error.code;
    // A refusal that knows when to come back (limits.ts) says so the standard way.
    const wait = error.details['retryAfterSeconds'];
    if (typeof wait === 'number') c.header('Retry-After', String(wait));
    // A refusal that is our own fault (a ledger invariant) is an internal error to the caller, and an error in our log.
    if (ERROR_CODES[code] === 'fault') {
      log.error({ err: error, path: c.req.path }, 'unhandled error');
      return refuse('INTERNAL', 'Something went wrong', 500);
    }
    return refuse(code, error.message, statusOf(code), error.details);
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
