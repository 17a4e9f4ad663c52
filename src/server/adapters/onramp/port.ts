/**
 * The port to an on-ramp: a provider (MoonPay) that takes the card payment and checks the buyer on its own page,
 * then sends the coins itself, on chain, to the address we give it. It answers what it sells and where, its limits
 * and quotes, signs the link to its page, tells a transaction's status by our reference, and reports changes by
 * signed webhooks that may come twice or out of order. Amounts are decimal strings, exactly as the provider wrote
 * them; fiat codes are upper-case (USD), the provider's coin codes its own (usdc).
 */
import type { Network } from '../../../lib/currencies.ts';

/** The provider's transaction statuses, in the order a purchase goes through them (completed and failed are final). */
export const ON_RAMP_STATUSES = ['pending', 'waitingAuthorization', 'waitingPayment', 'completed', 'failed'] as const;
export type OnRampStatus = (typeof ON_RAMP_STATUSES)[number];

/** A coin the provider sells: its own code, the network it pays out on (ours, when it is one we know) and the token contract. */
export type OnRampCrypto = { code: string; name: string; network: Network | undefined; contractAddress: string | null; suspended: boolean };

export type OnRampFiat = { code: string; name: string };

/** What its IP check says of the buyer's address: the country (ISO 3166 alpha-2) and whether buying is allowed there. */
export type OnRampCountry = { country: string | undefined; buyAllowed: boolean };

/** A method's limits in `fiat`, what the buyer pays in all (fees included). */
export type OnRampLimits = { method: string; fiat: string; min: string; max: string };

/** Its fees in the fiat, inside `fiatAmount`: its own, the network's and ours (the partner fee). */
export type OnRampFees = { provider: string; network: string; partner: string };

/** An estimate: the coins `fiatAmount` buys now (fees included); the provider fixes the price when the buyer pays. */
export type OnRampQuote = { method: string; fiat: string; fiatAmount: string; cryptoAmount: string; fees: OnRampFees };

export type OnRampQuoteRequest = { code: string; fiat: string; method: string } & ({ fiatAmount: string } | { cryptoAmount: string });

/** The link to the provider's page for one purchase, paying `fiatAmount` to `walletAddress`. */
export type OnRampWidgetRequest = {
  code: string;
  walletAddress: string;
  fiat: string;
  fiatAmount: string;
  method: string;
  /** Ours (the buy order's id): the provider's transaction carries it back. */
  reference: string;
  /** Who buys, as we know them (the wallet account): the provider links its customer to it. */
  customer: string;
  /** Where the provider's page sends the browser when the buyer is done. */
  returnUrl: string;
  email?: string | undefined;
  language?: string | undefined;
};

/** The provider's transaction as it reports it. */
export type OnRampTransaction = {
  id: string;
  /** Ours, given in the widget link; null for a transaction not started from this wallet. */
  reference: string | null;
  status: OnRampStatus;
  walletAddress: string;
  code: string | null;
  cryptoAmount: string | null;
  /** The hash of the transaction that sends the coins, once sent. */
  txHash: string | null;
  /** Its words on a failure (English), and the code of the step that failed (payment_authorization_declined, rejected_kyc…). */
  failureReason: string | null;
  failureCode: string | null;
  updatedAt: string;
};

/** A webhook that passed the signature check: its event type and the transaction it carries. */
export type OnRampEvent = { type: string; transaction: OnRampTransaction };

export type OnRampSignatureProblem = 'MISSING' | 'MALFORMED' | 'STALE' | 'MISMATCH';

export type OnRampWebhook = { ok: true; event: OnRampEvent } | { ok: false; problem: OnRampSignatureProblem | 'BODY' };

/** The provider did not answer, timed out or failed on its side: nothing was done, try again later. */
export class OnRampUnavailableError extends Error {}
/** The provider refused the request itself (an amount it does not take, an unknown coin); its message says why. */
export class OnRampRefusedError extends Error {}

export type OnRampProvider = {
  /** The provider's name as the start line and the logs show it. */
  readonly name: string;
  /** The header its webhooks are signed in. */
  readonly signatureHeader: string;
  cryptoCurrencies(): Promise<OnRampCrypto[]>;
  fiatCurrencies(): Promise<OnRampFiat[]>;
  country(ipAddress: string): Promise<OnRampCountry>;
  limits(code: string, fiat: string, method: string): Promise<OnRampLimits>;
  quote(request: OnRampQuoteRequest): Promise<OnRampQuote>;
  /** The signed link to its page; pure, no request is made. */
  widgetUrl(request: OnRampWidgetRequest): string;
  /** The newest transaction started with our `reference`, or undefined when the buyer never started one. */
  transaction(reference: string): Promise<OnRampTransaction | undefined>;
  /** A webhook's raw body checked against its signature header at `nowS` (unix seconds), then read. */
  readWebhook(signature: string | undefined, body: string, nowS: number): OnRampWebhook;
};
