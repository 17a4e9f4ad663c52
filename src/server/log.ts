import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout; every request adds its own `reqId` through a child logger. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'wallet' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['password', '*.password', 'pinCode', '*.pinCode', 'card', '*.card', 'headers.authorization', 'headers.pincode'], censor: '[redacted]' },
  });
}

/**
 * Retries of one stuck money movement (a withdrawal's broadcast, a sale's hand-over to the payout bank) after which
 * each further failure is logged at error level: the user's money is held and the operator should look.
 */
export const ALERT_AFTER_ATTEMPTS = 10;
