/** An amount as typed (SPEC §5: comma or point, maybe a trailing or leading point) as a decimal string. */
export function normalTypedAmount(value: string): string {
  return value.trim().replace(',', '.').replace(/\.$/, '').replace(/^\./, '0.');
}

/** Whether a typed amount has no non-zero digit ('' and '0.00' are zero). */
export function isZeroAmount(value: string): boolean {
  return !/[1-9]/.test(value);
}
