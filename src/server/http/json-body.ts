import { DomainError } from '../domain/errors.ts';
import { isExactNumberToken } from './json-amount.ts';

/**
 * Refuses, as the client's mistake, what JSON.parse would otherwise pass on silently: a NUL character in a text
 * (PostgreSQL cannot store it: 22021) and a number that is not exactly the one written (an exponent, or more digits
 * than a double holds: an amount would be moved as another amount). `context.source` is the number's own text.
 */
function refuseLossy(key: string, value: unknown, context?: { source?: string }): unknown {
  const where = key ? `${key}: ` : '';
  if ((typeof value === 'string' && value.includes('\u0000')) || key.includes('\u0000')) {
    throw new DomainError('VALIDATION', `${where}A text must not contain the NUL character`);
  }
  if (typeof value === 'number' && context?.source !== undefined && !isExactNumberToken(context.source, value)) {
    throw new DomainError('VALIDATION', `${where}A number must be written out in full, without an exponent, and exactly as a double holds it; send an amount as a string`);
  }
  return value;
}

/** A request body as JSON: 400 VALIDATION for text that is not JSON, or with a NUL in a text or an inexact number. */
export function parseJsonBody(text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, refuseLossy);
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw new DomainError('VALIDATION', 'The request body is not valid JSON');
  }
  return parsed;
}

/**
 * The one reader of a JSON request body, by parseJsonBody's rules. `empty`, where given, stands for a body with no
 * text (the calls whose fields are all optional); without it an empty body is not JSON.
 */
export async function readJsonBody(body: { text: () => Promise<string> }, options: { empty?: unknown } = {}): Promise<unknown> {
  const text = await body.text();
  if (options.empty !== undefined && text.trim() === '') return options.empty;
  return parseJsonBody(text);
}
