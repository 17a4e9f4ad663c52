import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import type { Logger } from '../log.ts';

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
  log.error({ err: error, path: c.req.path }, 'unhandled error');
  return c.json<ErrorBody>({ exceptionCode: 'INTERNAL', message: 'Something went wrong' }, 500);
}
