/**
 * The port to a payout provider (the bank that pays sells out to cards). The gateway never keeps a full card
 * number: it hands the number to the provider once and keeps the provider's token, the masked number and the bank.
 * Payouts are asynchronous: the provider reports each one's outcome by a webhook signed as in
 * `../webhooks/port.ts`, with a body of the `PayoutReport` shape.
 */
import type { Units } from '../../../lib/money.ts';

/** SPEC §3 card info lookup: the issuing bank's code (SBR for Sberbank) and the card system. */
export type CardInfo = { code: string; system: string; bank?: string | undefined };

export type TokenizedCard = { token: string; masked: string; info: CardInfo };

export type PayoutRequest = {
  /** Ours: the provider answers a second request with the same reference with the first payout. */
  reference: string;
  token: string;
  /** Minor units of `currency` (kopecks). */
  amount: Units;
  currency: string;
};

/** The body of the provider's webhook. */
export type PayoutReport = { payoutId: string; reference: string; status: 'SUCCEEDED' | 'FAILED'; reason?: string | null | undefined };

/** The provider could not be reached or refused to work right now: nothing was done. */
export class PayoutUnavailableError extends Error {}

/** The provider refused the card itself (not a number a card can have). */
export class CardRefusedError extends Error {}

export type PayoutProvider = {
  readonly name: string;
  /** The secret the provider signs its webhooks with. */
  readonly webhookSecret: string;
  /** First 6 digits to the issuing bank, or undefined when the provider does not know them. */
  lookupBin(bin: string): Promise<CardInfo | undefined>;
  /** The same card gives the same token. */
  tokenizeCard(cardNumber: string): Promise<TokenizedCard>;
  createPayout(request: PayoutRequest): Promise<{ payoutId: string }>;
};

/** '4276380000000001' → '427638******0001': what may be shown and kept (first six, last four). */
export function maskCard(cardNumber: string): string {
  return `${cardNumber.slice(0, 6)}${'*'.repeat(Math.max(0, cardNumber.length - 10))}${cardNumber.slice(-4)}`;
}
