/** The operator console's refusals; http/errors.ts maps their codes to statuses. */
import { DomainError } from '../errors.ts';

export type OperatorCode =
  | 'FORBIDDEN'
  | 'VALIDATION'
  | 'OPERATOR_USER_NOT_FOUND'
  | 'OPERATOR_ACCOUNT_NOT_FOUND'
  | 'OPERATOR_NOT_AN_OPERATOR'
  | 'OPERATOR_OWN_ROLE'
  | 'FREEZE_REVERSAL_DUE'
  | 'ADJUSTMENT_NOT_FOUND'
  | 'ADJUSTMENT_OWN_PROPOSAL'
  | 'ADJUSTMENT_DECIDED'
  | 'ADJUSTMENT_INSUFFICIENT_FUNDS'
  | 'MAIL_NOT_FOUND'
  | 'MAIL_NOT_RESENDABLE';

export class OperatorError extends DomainError<OperatorCode> {}
