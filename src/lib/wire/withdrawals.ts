import type { Network } from '../currencies.ts';

/** SPEC §3 address check result: BLOCKED and NOT_USED both refuse the address ('send_error_address_not_used'). */
export type CheckResult = 'VALID' | 'INVALID' | 'BLOCKED' | 'NOT_USED';
export type AccountType = 'B2C' | 'B2B';

/** POST /api/{account}/withdrawal/check-address. */
export type CheckAddressRequest = { account: string; currency: string; address: string };

export type AddressCheck = {
  checkResult: CheckResult;
  belongsToSameUser: boolean;
  accountType: AccountType;
  /** Another user of this wallet: the transfer settles at once, without a fee. */
  internal: boolean;
  /** The address as it will be used (trimmed; the network's canonical spelling for a wallet user's address). */
  address: string;
  network: Network;
  /** The sender's own name for the address in their address book, or a business recipient's name. */
  recipientName: string | null;
  /** Whether the sender's address book already holds the address on this network. */
  saved: boolean;
  /** Present when sending there is allowed but risky (`AddressWarning`). */
  warning?: AddressWarning;
};

/**
 * BOUNCEABLE_UNINITIALISED: a bounceable TON address (`EQ…`) of a wallet not deployed yet: the transfer comes back
 * to the sender less fees instead of reaching it; the non-bounceable spelling (`UQ…`) is what to send to.
 */
export type AddressWarning = 'BOUNCEABLE_UNINITIALISED';

/** POST /api/{account}/withdrawal/preliminary/fee. */
export type FeeRequest = { account: string; currency: string; amount: string; depositAddress: string | undefined };
export type FeeView = {
  currency: string;
  feeCurrency: string;
  fee: string;
  amount: string;
  receiveAmount: string;
  internal: boolean;
  /**
   * The fee fixed for the review, to pass to POST withdrawal, until `expiresAt` (ISO 8601; SPEC §9: 300 s); null
   * when nothing is fixed (no address yet, another user's, or one that cannot be sent to).
   */
  feeQuoteId: string | null;
  expiresAt: string | null;
};

/** POST /api/{account}/withdrawal; the pincode travels in its header. `feeQuoteId`: the fee the review showed (FeeView). */
export type WithdrawalRequest = { account: string; pinCode: null; currency: string; amount: string; depositAddress: string; idempotencyKey: string; feeQuoteId?: string };

export type WithdrawalView = {
  id: string;
  account: string;
  currency: string;
  network: string;
  amount: string;
  fee: string;
  feeCurrency: string;
  receiveAmount: string;
  depositAddress: string;
  internal: boolean;
  /** As the history shows it: IN_PROGRESS until the chain confirms it. */
  state: 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';
  /** IN_PROGRESS and waiting for an operator's review (over a limit's threshold): nothing is sent until approved. */
  underReview?: boolean;
  hash: string | null;
  explorerUrl: string | null;
  transactionId: string | null;
  accountToType: AccountType | null;
  confirmations: number;
  confirmationsRequired: number | null;
  /** Why it failed, as a code the client translates (domain/withdrawals/rules.ts WITHDRAWAL_FAILURES). */
  failureReason: string | null;
  createdDate: string;
  completedDate: string | null;
};
