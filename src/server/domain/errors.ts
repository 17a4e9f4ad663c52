/**
 * The domain's one error base. A domain error names what went wrong with a stable code (the `exceptionCode` the
 * gateway answers with, SPEC §8) and keeps its cause; it holds no HTTP status and no translated text: `http/errors.ts`
 * maps each code's kind to a status and `http/messages.ts` words them in the user's language (the facts from `details`).
 */

/**
 * Every code a refusal can carry, with the kind of refusal it is; a code not listed here cannot be thrown (DomainError
 * is typed over them), so no refusal reaches the gateway without its status.
 */
export const ERROR_CODES = {
  VALIDATION: 'invalid',
  UNKNOWN_CURRENCY: 'invalid',
  NOT_FOUND: 'missing',
  FORBIDDEN: 'forbidden',
  // A history export's signed link altered, expired or for another account (domain/history-export.ts); a bad range.
  EXPORT_LINK_INVALID: 'forbidden',
  EXPORT_RANGE_INVALID: 'invalid',
  // The proof of reserves (domain/reserves.ts): none published yet; a user who signed up after the latest.
  NO_RESERVES_PROOF: 'missing',
  NOT_IN_RESERVES_PROOF: 'missing',
  UNAUTHORIZED: 'unauthenticated',
  ACCOUNT_NOT_FOUND: 'missing',
  ASSET_NOT_FOUND: 'missing',
  TRANSACTION_NOT_FOUND: 'missing',
  IDEMPOTENCY_KEY_REUSED: 'unprocessable',
  IDEMPOTENCY_KEY_IN_USE: 'conflict',
  ORDER_STATE_CHANGED: 'conflict',
  SERVICE_UNAVAILABLE: 'unavailable',
  BUSY: 'unavailable',
  TOO_MANY_REQUESTS: 'throttled',
  TOO_MANY_MAILS: 'throttled',
  // No current market price for what a quote needs (domain/rates.ts): nothing is quoted.
  PRICE_UNAVAILABLE: 'unavailable',
  // A network's node or API did not answer within the request's budget (CHAIN_REQUEST_BUDGET_MS); the body names it.
  NETWORK_UNAVAILABLE: 'unavailable',
  WEBHOOK_SIGNATURE: 'unauthenticated',
  TG_DISABLED: 'missing',
  // Telegram sign-in and linking (SPEC §8).
  B2C_USM0022: 'invalid',
  B2C_USM0023: 'unauthenticated',
  B2C_USM0024: 'conflict',
  B2C_USM0025: 'unauthenticated',
  B2C_USM0026: 'conflict',
  B2C_USM0027: 'unavailable',
  TG_UNLINK_LAST_SIGN_IN: 'conflict',
  // Passcode and account protection (SPEC §8).
  B2C_USM0030: 'throttled',
  B2C_USM0031: 'forbidden',
  B2C_USM0032: 'locked',
  PINCODE_BUSY: 'conflict',
  PINCODE_ACTIVE: 'conflict',
  PINCODE_NOT_ACTIVE: 'conflict',
  PINCODE_NOT_BLOCKED: 'conflict',
  RECENT_SIGN_IN_REQUIRED: 'forbidden',
  MAIL_UNAVAILABLE: 'unavailable',
  EMAIL_REQUIRED: 'conflict',
  EMAIL_SAME: 'invalid',
  EMAIL_TAKEN: 'conflict',
  NO_EMAIL_CHANGE: 'conflict',
  TOO_MANY_CODES: 'throttled',
  RESEND_TOO_SOON: 'throttled',
  CONFIRMATION_INVALID: 'invalid',
  CONFIRMATION_USED: 'conflict',
  // Send and the address book.
  WITHDRAWAL_WRONG_ADDRESS: 'invalid',
  WITHDRAWAL_ADDRESS_NOT_USED: 'invalid',
  WITHDRAWAL_SAME_USER: 'invalid',
  WITHDRAWAL_NOT_ENOUGH_FUNDS: 'invalid',
  WITHDRAWAL_AMOUNT_PRECISION: 'invalid',
  WITHDRAWAL_AMOUNT_TOO_SMALL: 'invalid',
  WITHDRAWAL_NOT_FOUND: 'missing',
  WITHDRAWALS_FROZEN: 'forbidden',
  // Over the user's rolling 24-hour limit in USD (domain/withdrawals/limits.ts); the message says what is left.
  WITHDRAWAL_DAILY_LIMIT: 'forbidden',
  // The review queue (domain/withdrawals/review.ts): a decision on a withdrawal not waiting for one.
  WITHDRAWAL_NOT_UNDER_REVIEW: 'conflict',
  // Re-approving a withdrawal from before the approval seal (review.ts resealWithdrawal): this one is not such.
  WITHDRAWAL_NOT_UNSEALED: 'conflict',
  OPERATOR_NOT_FOUND: 'missing',
  REVIEW_REASON_REQUIRED: 'invalid',
  // The network's fee could not be estimated (its node is down): refused rather than undercharged.
  WITHDRAWAL_FEE_UNAVAILABLE: 'unavailable',
  ADDRESS_BOOK_WRONG_ADDRESS: 'invalid',
  ADDRESS_BOOK_UNKNOWN_NETWORK: 'invalid',
  ADDRESS_BOOK_DUPLICATE: 'conflict',
  ADDRESS_BOOK_FULL: 'conflict',
  ADDRESS_BOOK_NOT_FOUND: 'missing',
  // Swap.
  SWAP_UNSUPPORTED_PAIR: 'invalid',
  SWAP_AMOUNT_TOO_SMALL: 'invalid',
  SWAP_MIN_LIMIT: 'invalid',
  SWAP_MAX_LIMIT: 'invalid',
  SWAP_NOT_ENOUGH: 'invalid',
  SWAP_QUOTE_MISMATCH: 'invalid',
  SWAP_DESK_INVENTORY: 'unavailable',
  SWAP_QUOTE_NOT_FOUND: 'missing',
  SWAP_ORDER_NOT_FOUND: 'missing',
  SWAP_QUOTE_EXPIRED: 'gone',
  SWAP_ORDER_EXPIRED: 'gone',
  SWAP_QUOTE_USED: 'conflict',
  SWAP_ORDER_CANCELLED: 'conflict',
  SWAP_ORDER_CLOSED: 'conflict',
  // Buy with a card.
  B2C_FIAT_UNSUPPORTED: 'invalid',
  B2C_RATE_NOT_FOUND: 'invalid',
  B2C_RATE_EXPIRED: 'invalid',
  B2C_METHOD_NOT_FOUND: 'invalid',
  B2C_LIMIT: 'invalid',
  B2C_RETURN_URL: 'invalid',
  B2C_ORDER_NOT_FOUND: 'missing',
  B2C_ORDER_EXPIRED: 'invalid',
  B2C_UNAVAILABLE: 'unavailable',
  // The on-ramp (MoonPay): not answering, refusing with its own words, not selling in the buyer's country.
  B2C_PROVIDER_DOWN: 'unavailable',
  B2C_PROVIDER_REFUSED: 'invalid',
  B2C_REGION: 'forbidden',
  B2C_NO_ADDRESS: 'conflict',
  // Sell to a card.
  C2F_FIAT_UNSUPPORTED: 'invalid',
  C2F_BIN_NOT_FOUND: 'missing',
  C2F_ONLY_SBER: 'invalid',
  C2F_RATE_NOT_FOUND: 'invalid',
  C2F_RATE_EXPIRED: 'invalid',
  C2F_LIMIT: 'invalid',
  C2F_NOT_ENOUGH_FUNDS: 'invalid',
  C2F_CARD_NOT_FOUND: 'missing',
  C2F_ORDER_NOT_FOUND: 'missing',
  C2F_PAYOUTS_UNAVAILABLE: 'unavailable',
  C2F_PAYOUT_CONFLICT: 'conflict',
  // The operator console (domain/operator/): a caller without the role gets FORBIDDEN (403).
  OPERATOR_USER_NOT_FOUND: 'missing',
  OPERATOR_ACCOUNT_NOT_FOUND: 'missing',
  OPERATOR_NOT_AN_OPERATOR: 'missing',
  OPERATOR_OWN_ROLE: 'conflict',
  FREEZE_REVERSAL_DUE: 'conflict',
  ADJUSTMENT_NOT_FOUND: 'missing',
  ADJUSTMENT_OWN_PROPOSAL: 'forbidden',
  ADJUSTMENT_DECIDED: 'conflict',
  ADJUSTMENT_INSUFFICIENT_FUNDS: 'conflict',
  MAIL_NOT_FOUND: 'missing',
  MAIL_NOT_RESENDABLE: 'conflict',
  // The gateway's own faults and a request its client gave up (errorResponse words them; nothing throws them).
  INTERNAL: 'fault',
  ABORTED: 'invalid',
  // Sign-up refused for a weak password (its specific message, README deviations).
  WEAK_PASSWORD: 'invalid',
  // The custodian's own tools (custody-funding.ts, custody-movements.ts: the command line, never the gateway).
  NOT_AVAILABLE: 'unavailable',
  INSUFFICIENT_FUNDS: 'conflict',
  IDEMPOTENCY_CONFLICT: 'conflict',
  // The devnet faucet's refusals (http/sandbox-devnet.ts).
  BAD_ADDRESS: 'invalid',
  BAD_AMOUNT: 'invalid',
  // The ledger's refusals (ledger.ts): spending what is not there lost a race the domain's own check did not see;
  // the others are our own faults.
  LEDGER_INSUFFICIENT_FUNDS: 'conflict',
  LEDGER_UNBALANCED: 'fault',
  LEDGER_UNKNOWN_ACCOUNT: 'fault',
  LEDGER_KEY_REUSED: 'fault',
  // The signer's refusals (domain/signing.ts): between our own processes, so one that reaches a caller is our fault.
  UNKNOWN_ORDER: 'fault',
  NOT_APPROVED: 'fault',
  TAMPERED: 'fault',
  NOT_HELD: 'fault',
  BAD_REQUEST: 'fault',
  OVER_DAILY_CAP: 'fault',
  OVER_FEE_CEILING: 'fault',
} as const satisfies Readonly<Record<string, ErrorKind>>;

/** What kind of refusal a code is: the gateway answers each kind with one HTTP status. */
export type ErrorKind = 'invalid' | 'unauthenticated' | 'forbidden' | 'missing' | 'conflict' | 'gone' | 'unprocessable' | 'locked' | 'throttled' | 'fault' | 'unavailable';
export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

export class DomainError<Code extends ErrorCode = ErrorCode> extends Error {
  readonly code: Code;
  /** Extra facts a caller may show or act on (attempts left, seconds to wait); never money, never secrets. */
  readonly details: Readonly<Record<string, string | number | boolean>>;
  constructor(code: Code, message: string, options?: { cause?: unknown; details?: Readonly<Record<string, string | number | boolean>> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = options?.details ?? {};
  }
}
