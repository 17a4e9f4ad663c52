import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import type { Logger } from '../log.ts';
import { isDatabaseUnavailable, databaseCode } from '../db/database.ts';

/** An answer to a client's mistake or a refused operation: status, a stable code and a readable message. */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly exceptionCode: string;
  constructor(status: ContentfulStatusCode, exceptionCode: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
    this.exceptionCode = exceptionCode;
  }
}

export type ErrorBody = { exceptionCode: string; message: string };

/** The one place that turns any thrown value into the gateway's error shape; only our own faults are 500. */
export function errorResponse(error: unknown, c: Context, log: Logger): Response {
  if (error instanceof ApiError) {
    // A refusal that knows when to come back (limits.ts) says so the standard way.
    if ('retryAfterSeconds' in error && typeof error.retryAfterSeconds === 'number') c.header('Retry-After', String(error.retryAfterSeconds));
    return c.json<ErrorBody>({ exceptionCode: error.exceptionCode, message: error.message }, error.status);
  }
  if (error instanceof z.ZodError) {
    const issue = error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    return c.json<ErrorBody>({ exceptionCode: 'VALIDATION', message: `${where}${issue?.message ?? 'invalid input'}` }, 400);
  }
  if (error instanceof SyntaxError) {
    return c.json<ErrorBody>({ exceptionCode: 'VALIDATION', message: 'The request body is not valid JSON' }, 400);
  }
  // The client went away mid-request (an aborted upload): nothing of ours failed, and nobody reads the answer.
  if (c.req.raw.signal.aborted) {
    log.warn({ err: error, path: c.req.path }, 'request aborted by the client');
    return c.json<ErrorBody>({ exceptionCode: 'ABORTED', message: 'The request was aborted' }, 400);
  }
  if (isDatabaseUnavailable(error)) {
    log.warn({ err: error, path: c.req.path }, 'database unavailable');
    return c.json<ErrorBody>({ exceptionCode: 'SERVICE_UNAVAILABLE', message: 'The service is temporarily unavailable; try again shortly' }, 503);
  }
  // PostgreSQL refuses a NUL character in text (22021, 22P05): input the edge should have refused, never our fault.
  const code = databaseCode(error);
  if (code === '22021' || code === '22P05') {
    return c.json<ErrorBody>({ exceptionCode: 'VALIDATION', message: 'The request contains a character that is not allowed' }, 400);
  }
  log.error({ err: error, path: c.req.path }, 'unhandled error');
  return c.json<ErrorBody>({ exceptionCode: 'INTERNAL', message: 'Something went wrong' }, 500);
}
