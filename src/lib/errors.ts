/** Error codes of SPEC §8 whose text the error page and the toasts show. */
export const NO_BUTTON_CODES = ['B2C_USM0022', 'B2C_USM0023', 'B2C_USM0024', 'B2C_USM0025', 'B2C_USM0026'] as const;
export const SUPPORT_CODE = 'B2C_USM0027';
export const TRANSPORT_CODES = ['FETCH_ERROR', 'TIMEOUT_ERROR', 'PARSING_ERROR'] as const;

/** The message key for an error code; codes without a text of their own get the generic one. */
export function errorMessageKey(code: string, known: Record<string, unknown>): string {
  const key = `error_${code}`;
  return key in known ? key : 'error_unknown';
}
