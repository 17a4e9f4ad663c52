import { z } from 'zod';

/**
 * An amount a client sent as a JSON number, as the decimal string it stands for. JSON.parse has already made it a
 * double: one with more than 15 significant digits may not be the number that was typed (90005022.93936635 arrives
 * as 90005022.93936636), so such a number is refused and must come as a string. (An exponent in the body's text
 * is refused before this, by isExactNumberToken.)
 */
export const jsonNumberAmount = z
  .number()
  .nonnegative()
  .transform(plainNumber)
  .refine((text) => /^\d+(?:\.\d+)?$/.test(text) && text.replace('.', '').replace(/^0+/, '').length <= 15, {
    message: 'An amount with more than 15 digits must be sent as a string',
  });

/**
 * Whether a JSON number token, as the client wrote it, is exactly the double JSON.parse made of it: written out
 * in full (no exponent: 5e-4 is refused) and with no digit the double lost (0.00050000000000000001 would arrive as
 * 0.0005). Trailing zeros of a fraction and leading zeros are only notation.
 */
export function isExactNumberToken(token: string, value: number): boolean {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(token);
  if (!match) return false;
  const [, sign = '', whole = '', fraction = ''] = match;
  const digits = fraction.replace(/0+$/, '');
  return `${sign}${whole.replace(/^0+(?=\d)/, '')}${digits ? `.${digits}` : ''}` === plainNumber(value);
}

/** The shortest decimal of a double written out in full: String(5e-7) is `5e-7`, this is `0.0000005`. */
export function plainNumber(value: number): string {
  const text = String(value);
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign = '', first = '', rest = '', exponent = '0'] = match;
  const shift = Number(exponent);
  const digits = first + rest;
  if (shift < 0) return `${sign}0.${'0'.repeat(-shift - 1)}${digits}`;
  return shift >= rest.length ? `${sign}${digits}${'0'.repeat(shift - rest.length)}` : `${sign}${first}${rest.slice(0, shift)}.${rest.slice(shift)}`;
}
