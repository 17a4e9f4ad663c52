import { z } from 'zod';

/**
 * An amount a client sent as a JSON number, as the decimal string it stands for. JSON.parse has already made it a
 * double: one with more than 15 significant digits may not be the number that was typed (90005022.93936635 arrives
 * as 90005022.93936636), so such a number is refused and must come as a string; so is one printed with an exponent.
 */
export const jsonNumberAmount = z
  .number()
  .nonnegative()
  .transform((value) => String(value))
  .refine((text) => /^\d+(?:\.\d+)?$/.test(text) && text.replace('.', '').replace(/^0+/, '').length <= 15, {
    message: 'An amount with more than 15 digits must be sent as a string',
  });
