/**
 * The field schemas every area shares, so a currency, an amount or an idempotency key means the same on every
 * route. Amounts follow one rule (SPEC §5): a decimal string, comma or point, or a JSON number only when a double
 * holds it exactly (json-amount.ts); the digits allowed depend on what is counted (crypto, card fiat).
 */
import { z } from 'zod';
import { jsonNumberAmount } from './json-amount.ts';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An id of ours (account, order, quote, card): a UUID; the message names the field. */
export const uuid = (message: string) => z.string({ error: message }).regex(UUID, message);

export const currency = z.string({ error: 'The currency is required' }).trim().min(1).max(32).regex(/^[A-Z0-9_]+$/, 'A currency code is upper-case letters, digits and _');

/** An amount by the one rule, as a decimal string with a point; `pattern` bounds its digits. */
export const decimalAmount = (required: string, pattern: RegExp, message: string) =>
  z
    .union([z.string(), jsonNumberAmount], { error: required })
    .transform((value) => value.trim().replace(',', '.'))
    .pipe(z.string().regex(pattern, message));

/** SPEC §5: a crypto amount has at most 8 digits before and 8 after the point. */
export const amount = decimalAmount('The amount is a decimal string', /^\d{1,8}(?:\.\d{1,8})?$/, 'An amount has up to 8 digits before and 8 after the point');

const KEY_RULE = 'give 8 to 100 characters in the body or the Idempotency-Key header';

/** The key of a call that moves money or creates an order: the body's `idempotencyKey`, else the header (json-input.ts). */
export const idempotencyKey = z.string({ error: KEY_RULE }).trim().min(8, KEY_RULE).max(100, KEY_RULE);

/** The account some bodies repeat: when given it must be the path's (json-input.ts checks). */
export const accountInBody = z.string().max(64).optional();
