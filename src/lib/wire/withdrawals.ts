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

/**
 * Why a withdrawal is still pending, as a code the client translates (decided in domain/withdrawals/view.ts
 * `pendingReasonOf`): WAITING_FOR_FUNDS, the hot wallet cannot pay it now and it waits for a refill instead of being
 * sent (withdrawals.waiting_for_funds_since); UNDER_REVIEW, held for an operator's review. null: nothing to explain
 * (on its way as usual, or no longer pending).
 */
export type PendingReason = 'WAITING_FOR_FUNDS' | 'UNDER_REVIEW';

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
  /** IN_PROGRESS for a reason the user is told (`PendingReason`), else null. */
  pendingReason?: PendingReason | null;
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

/**
 * POST /api/{account}/address-book/caution { blockchain, address }: why an address the user typed deserves a second
 * look (issue 36 item 3), from the account's own history and address book only. LOOKALIKE: it shares its ends with
 * `similarTo`, an address the account saved, sent to or received real money from, but is not it. DUST_ONLY: the
 * account has only ever received dust from it and never sent to it or saved it.
 */
export type AddressCaution = { kind: 'LOOKALIKE'; similarTo: string } | { kind: 'DUST_ONLY' };
export type AddressCautionView = { caution: AddressCaution | null };
