/** Transport failures of SPEC §8: no answer, no answer in time, an answer that could not be read. */
export const FETCH_ERROR = 'FETCH_ERROR';
export const TIMEOUT_ERROR = 'TIMEOUT_ERROR';
export const PARSING_ERROR = 'PARSING_ERROR';
/** The session could not be renewed: the user is signed out. */
export const UNAUTHORIZED = 'UNAUTHORIZED';

export type TransportCode = typeof FETCH_ERROR | typeof TIMEOUT_ERROR | typeof PARSING_ERROR;

/**
 * The one error the browser side throws: `code` is a transport code, a gateway `exceptionCode`
 * (B2C_USM0031, APP_0001 ...), UNAUTHORIZED, or HTTP_<status> when the gateway sent no code.
 * `message` is the gateway's own text when it sent one.
 */
export class WalletError extends Error {
  readonly code: string;
  readonly status: number | undefined;
  /** Whether `message` came from the gateway (SPEC §8 shows it as is for some flows). */
  readonly fromServer: boolean;
  /** The gateway's Retry-After, in seconds, when it said when to come back (a passcode lockout's wait). */
  readonly retryAfterSeconds: number | undefined;
  /** The network whose node did not answer (NETWORK_UNAVAILABLE), as the gateway named it. */
  readonly network: string | undefined;

  constructor(code: string, message: string, options: { status?: number; fromServer?: boolean; retryAfterSeconds?: number; network?: string | undefined; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'WalletError';
    this.code = code;
    this.status = options.status;
    this.fromServer = options.fromServer ?? false;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.network = options.network;
  }
}

/** Any thrown value as a WalletError, keeping the original as the cause. */
export function toWalletError(error: unknown): WalletError {
  if (error instanceof WalletError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new WalletError('UNKNOWN', message, { cause: error });
}
