/** Schema pieces several parts of the configuration share: a JSON-valued variable, min/max limits as decimal strings. */
import { z } from 'zod';
import { compareDecimals } from '../lib/amount.ts';

/** A variable holding JSON, then checked by `shape`; `hint` tells how it should look when it is not JSON. */
export function jsonSetting<T extends z.ZodType>(shape: T, hint = 'must be JSON') {
  return z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: hint });
        return z.NEVER;
      }
    })
    .pipe(shape);
}

/** Limits per key, each `{ min, max }` as decimal strings matching `amount`, min strictly below max (compared exactly). */
export function decimalLimits(key: z.ZodString, amount: z.ZodString) {
  return z.record(
    key,
    z.object({ min: amount, max: amount }).refine((limits) => compareDecimals(limits.min, limits.max) < 0, 'min must be below max'),
  );
}
