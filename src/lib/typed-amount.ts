import { AMOUNT_TYPING } from './amount.ts';

/** An amount as typed (SPEC §5: comma or point, maybe a trailing or leading point) as a decimal string. */
export function normalTypedAmount(value: string): string {
  return value.trim().replace(',', '.').replace(/\.$/, '').replace(/^\./, '0.');
}

/** Whether a typed amount has no non-zero digit ('' and '0.00' are zero). */
export function isZeroAmount(value: string): boolean {
  return !/[1-9]/.test(value);
}

/** What a keystroke leaves in an amount field (SPEC §5): a comma becomes the point; undefined when it is not an amount being typed. */
export function acceptTypedAmount(text: string): string | undefined {
  return AMOUNT_TYPING.test(text) ? text.replace(',', '.') : undefined;
}

/** A kept amount as the user's language writes it in a field: "1,5" in Russian, "1.5" in English. */
export function typedAmountFor(value: string, locale: 'en' | 'ru'): string {
  return locale === 'ru' ? value.replace('.', ',') : value;
}
