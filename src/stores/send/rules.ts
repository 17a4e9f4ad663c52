// The send flow's rules and shapes (SPEC §5), pure: the steps in this folder and the tests read them.
import type { AddressCaution, AddressCheck, FeeView } from '../../api/send.ts';
import { toWalletError } from '../../api/errors.ts';
import { isAddressShapeValid } from '../../lib/address.ts';
import { compareDecimals } from '../../lib/amount.ts';
import type { ChainEnv, CoinMeta } from '../../lib/currencies.ts';
import { isZeroAmount, normalTypedAmount } from '../../lib/typed-amount.ts';
import type { MessageKey } from '../../lib/text.ts';

/** SPEC §9: address checks and fee requests wait 300 ms after the last keystroke. */
export const SEND_DEBOUNCE_MS = 300;

export type SendForm = {
  currency: string | null;
  amount: string;
  address: string;
  /** The server's check of `checkedAddress`; stale when the address changed since. */
  check: AddressCheck | undefined;
  checkedAddress: string;
  /** Why `checkedAddress` may be a poisoned one (issue 36 item 3): the review waits until it is acknowledged. */
  caution: AddressCaution | null;
  cautionAcknowledged: boolean;
  /** The fee for `feeAddress` ('' = no address yet: the network's fee). */
  fee: FeeView | undefined;
  feeAddress: string | null;
  checking: boolean;
  checkFailed: boolean;
  /** Why the check or the fee failed, in the user's words (a network that is not answering names it). */
  checkError: string | undefined;
  scannerOpen: boolean;
  pickerOpen: boolean;
  submitting: boolean;
};

export const EMPTY_SEND_FORM: SendForm = {
  currency: null,
  amount: '',
  address: '',
  check: undefined,
  checkedAddress: '',
  caution: null,
  cautionAcknowledged: false,
  fee: undefined,
  feeAddress: null,
  checking: false,
  checkFailed: false,
  checkError: undefined,
  scannerOpen: false,
  pickerOpen: false,
  submitting: false,
};

export const tickerOf = (coin: CoinMeta | undefined, currency: string | null) => coin?.baseCurrency ?? currency ?? '';

/** What a QR code holds: a bare address, or a payment URI (bitcoin:…?amount=, ethereum:…@1, ton://transfer/…). */
export function addressFromQr(text: string): string {
  const value = text.trim();
  const ton = /^ton:\/\/transfer\/([^?#]+)/i.exec(value);
  if (ton?.[1]) return decodeURIComponent(ton[1]);
  const withoutScheme = value.replace(/^[a-z][a-z0-9+.-]*:(?:\/\/)?/i, '');
  return withoutScheme.split(/[?@#]/)[0] ?? '';
}

export type SendProblems = { address: MessageKey | null; amount: MessageKey | null; amountParams?: Record<string, string> };

/** SPEC §5 send rules, in the order the user meets them. */
export function sendProblemsOf(input: { address: string; network: string | undefined; chainEnv: ChainEnv; check: AddressCheck | undefined; checkedAddress: string; amount: string; balance: string; fee: FeeView | undefined; ticker: string }): SendProblems {
  const address = input.address.trim();
  let addressProblem: MessageKey | null = null;
  if (address !== '' && input.network && !isAddressShapeValid(input.network, address, input.chainEnv)) addressProblem = 'send_error_wrong_address';
  else if (input.check && input.checkedAddress === address) {
    if (input.check.checkResult === 'INVALID') addressProblem = 'send_error_wrong_address';
    else if (input.check.checkResult === 'BLOCKED' || input.check.checkResult === 'NOT_USED') addressProblem = 'send_error_address_not_used';
    else if (input.check.belongsToSameUser) addressProblem = 'send_error_same_user';
  }
  const amount = normalTypedAmount(input.amount);
  if (!/^\d+(\.\d+)?$/.test(amount) || isZeroAmount(amount)) return { address: addressProblem, amount: null };
  if (compareDecimals(amount, input.balance) > 0) return { address: addressProblem, amount: 'send_error_not_enough_funds' };
  if (input.fee && !input.fee.internal && !isZeroAmount(input.fee.fee) && compareDecimals(amount, input.fee.fee) <= 0) {
    return { address: addressProblem, amount: 'send_error_below_fee', amountParams: { fee: `${input.fee.fee} ${input.ticker}` } };
  }
  return { address: addressProblem, amount: null };
}

export type SendReview = {
  currency: string;
  amount: string;
  receiveAmount: string;
  fee: string;
  internal: boolean;
  address: string;
  network: string;
  recipientName: string | null;
  accountType: 'B2C' | 'B2B';
  saved: boolean;
  /** One key per review: confirming again after a lost answer cannot send twice. */
  idempotencyKey: string;
  /** The quote that fixed `fee` (FeeView.feeQuoteId) and when it lapses; absent on reviews kept from before quotes. */
  feeQuoteId?: string | null;
  feeQuoteExpiresAt?: string | null;
  /** Set once the withdrawal was asked for: from then on its request, quote included, never changes under its key. */
  requested?: boolean;
  /** The passcode step shows instead of the summary. */
  askingPasscode: boolean;
  busy: boolean;
};

export type SaveRecipient = { open: boolean; name: string; busy: boolean; saved: boolean };

/** A fee quote is renewed this long before the gateway's expiry: the clocks and the request's way there differ. */
export const FEE_QUOTE_MARGIN_MS = 10_000;

/** A refusal of the request itself (4xx, passcode ones included): no withdrawal exists under its key. */
export function refusedOutright(error: unknown): boolean {
  const failure = toWalletError(error);
  return failure.fromServer && (failure.status ?? 500) < 500 && failure.code !== 'IDEMPOTENCY_KEY_IN_USE' && failure.code !== 'IDEMPOTENCY_KEY_REUSED';
}

/** Whether the review's fee quote has lapsed and may still be renewed (never once the withdrawal was asked for). */
export function feeQuoteLapsed(review: Pick<SendReview, 'feeQuoteId' | 'feeQuoteExpiresAt' | 'requested'>, now: number): boolean {
  if (!review.feeQuoteId || !review.feeQuoteExpiresAt || review.requested) return false;
  return Date.parse(review.feeQuoteExpiresAt) - FEE_QUOTE_MARGIN_MS <= now;
}
