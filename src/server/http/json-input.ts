/**
 * The validator of JSON bodies: reads the body by readJsonBody's rules (NUL, exact numbers, empty body), parses it
 * with a zod schema and hands the handler typed input through Hono's `c.req.valid('json')`. Hono's own JSON
 * validator reads the body with `c.req.json()` and only under a JSON content type, so it would skip those rules.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { DomainError } from '../domain/errors.ts';
import { readJsonBody } from './json-body.ts';
import type { ApiEnv } from './context.ts';

export type JsonInputOptions = {
  /** What a body with no text stands for; without it (null) an empty body is not JSON. Default `{}`. */
  empty?: unknown;
  /** The body's `idempotencyKey`, else the Idempotency-Key header: the one reader of the key. */
  idempotencyKey?: boolean;
  /**
   * 'path': a body's `account`, when given, must be the path's `:account`. A function: the account named outside the
   * body (the older purchase family's `?account=`), which replaces the body's when there is one.
   */
  account?: 'path' | ((c: Context<ApiEnv>) => string | undefined);
};

type Input<S extends z.ZodType> = { in: { json: z.input<S> }; out: { json: z.output<S> } };

function objectOf(raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new DomainError('VALIDATION', 'The request body must be a JSON object');
  return raw as Record<string, unknown>;
}

/** The body filled from outside it, as the options say, before the schema sees it. */
function filled(raw: unknown, c: Context<ApiEnv>, options: JsonInputOptions): Record<string, unknown> {
  const body = { ...objectOf(raw) };
  const header = c.req.header('idempotency-key');
  if (options.idempotencyKey && body['idempotencyKey'] === undefined && header !== undefined) body['idempotencyKey'] = header;
  const account = typeof options.account === 'function' ? options.account(c) : undefined;
  if (account !== undefined) body['account'] = account;
  return body;
}

/** A route's JSON body, validated by `schema`: `c.req.valid('json')` in the handler. */
export function jsonInput<S extends z.ZodType>(schema: S, options: JsonInputOptions = {}): MiddlewareHandler<ApiEnv, string, Input<S>> {
  return async (c, next) => {
    const raw = await readJsonBody(c.req.raw, { empty: 'empty' in options ? options.empty : {} });
    const body = schema.parse(filled(raw, c, options));
    if (options.account === 'path' && typeof body === 'object' && body !== null && 'account' in body) {
      const given = (body as { account?: unknown }).account;
      if (given !== undefined && given !== c.req.param('account')) throw new DomainError('VALIDATION', 'account: differs from the account in the path');
    }
    c.req.addValidatedData('json', body as object);
    await next();
  };
}
