import { DomainError } from '../errors.ts';

/** The wire codes a purchase is refused with (http/errors.ts maps them to statuses). */
export type BuyCode =
  | 'UNKNOWN_CURRENCY'
  | 'B2C_FIAT_UNSUPPORTED'
  | 'ACCOUNT_NOT_FOUND'
  // An amount the desk cannot read is the client's input mistake, answered as any other.
  | 'VALIDATION'
  | 'B2C_RATE_NOT_FOUND'
  | 'B2C_RATE_EXPIRED'
  | 'B2C_METHOD_NOT_FOUND'
  | 'B2C_LIMIT'
  | 'B2C_RETURN_URL'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'B2C_ORDER_NOT_FOUND'
  | 'B2C_ORDER_EXPIRED'
  | 'B2C_UNAVAILABLE'
  // The on-ramp: it did not answer, it refused (its words), it does not sell in the buyer's country; no deposit address yet.
  | 'B2C_PROVIDER_DOWN'
  | 'B2C_PROVIDER_REFUSED'
  | 'B2C_REGION'
  | 'B2C_NO_ADDRESS';

export class BuyError extends DomainError<BuyCode> {}

/** The refusal of a purchase past its time (both the card page's and the on-ramp's confirm). */
export const orderExpired = () => new BuyError('B2C_ORDER_EXPIRED', 'The order has expired. Please start again.');
