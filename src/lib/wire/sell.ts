/** SPEC §3 card info lookup (GET /api/c2f/bin/{bin}). */
export type CardInfo = { code: string; system: string };
/** SPEC §3 saved card. */
export type SavedCard = { cardId: string; mascCard: string; bankCode: string; bankSystem: string };
/** SPEC §3 sell limits, in fiat. */
export type SellLimits = { minLimit: string; maxLimit: string; limitCurrency: string };
/** SPEC §3 sell rate: fiat per coin, fixed under `rateId` until `expiresAt` (`expiresInSeconds` from the answer, for the countdown). */
export type SellQuote = { rate: string; rateId: string; currency: string; fiatCurrency: string; expiresAt: string; expiresInSeconds: number };

type SellOrderBase = { currency: string; fiatCurrency: string; fixedRateId: string; fiatAmount: string; idempotencyKey: string };
/** POST /api/c2f/{account}/order/byCard. */
export type SellByCardRequest = SellOrderBase & { card: string; bankCode: string; bankSystem: string; saveCard: boolean };
/** POST /api/c2f/{account}/order/bySavedCard. */
export type SellBySavedCardRequest = SellOrderBase & { cardId: string };

export type SellOrderView = {
  id: string;
  state: 'PROCESSING' | 'COMPLETED' | 'FAILED';
  currency: string;
  amount: string;
  fiatCurrency: string;
  fiatAmount: string;
  rate: string;
  mascCard: string;
  bankCode: string;
  cardId: string | null;
  transactionId: string | null;
  failureReason: string | null;
  createdDate: string;
  completedDate: string | null;
};
