import { DomainError } from '../errors.ts';

/** The wire codes a sale is refused with (http/errors.ts maps them to statuses). */
export type SellCode =
  | 'C2F_FIAT_UNSUPPORTED'
  | 'UNKNOWN_CURRENCY'
  | 'C2F_BIN_NOT_FOUND'
  | 'C2F_ONLY_SBER'
  | 'C2F_RATE_NOT_FOUND'
  | 'C2F_RATE_EXPIRED'
  // Outside the limits, and too small to buy one unit of the coin: both are the limit to the user.
  | 'C2F_LIMIT'
  | 'C2F_NOT_ENOUGH_FUNDS'
  | 'C2F_CARD_NOT_FOUND'
  | 'C2F_ORDER_NOT_FOUND'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'C2F_PAYOUTS_UNAVAILABLE';

export class SellError extends DomainError<SellCode> {}
