/**
 * Payout cards: the bank behind a card number's first six digits, the cards an account saved, and the card an order
 * pays out to. The full card number only passes through on its way to the provider's tokeniser: what is kept is the
 * token, the masked number and the bank.
 */
import type { CardInfo } from '../../adapters/payout/port.ts';
import type { sellSavedCards } from '../../db/schema/sell.ts';
import { SellError } from './errors.ts';
import { payoutsOn, unavailable, type SellDeps } from './context.ts';
import { checkFiat, ONLY_SBER_MESSAGE, SELL_BANK_CODE } from './rules.ts';
import type { SavedCard } from '../../../lib/wire/sell.ts';
export type { SavedCard };

/** The card an order pays out to; `save` keeps a new card for next time. */
export type PayoutCard = { token: string; masked: string; code: string; system: string; savedCardId: string | null; save: boolean };

type SavedCardRow = typeof sellSavedCards.$inferSelect;
const SAVED_CARD_COLUMNS = `id, provider_token AS "providerToken", masked_card AS "maskedCard", bank_code AS "bankCode", bank_system AS "bankSystem"`;

export async function lookupBin(deps: Pick<SellDeps, 'provider'>, bin: string): Promise<CardInfo> {
  const info = await payoutsOn(deps).lookupBin(bin).catch(unavailable);
  if (!info) throw new SellError('C2F_BIN_NOT_FOUND', 'The bank of this card is unknown');
  return { code: info.code, system: info.system };
}

export async function savedCards(deps: SellDeps, account: string, fiat: string): Promise<SavedCard[]> {
  payoutsOn(deps);
  checkFiat(fiat);
  const rows = await deps.pool.query<Pick<SavedCardRow, 'id' | 'maskedCard' | 'bankCode' | 'bankSystem'>>(
    `SELECT ${SAVED_CARD_COLUMNS} FROM sell_saved_cards WHERE wallet_account_id = $1 AND fiat_currency = $2 ORDER BY created_at DESC`,
    [account, fiat],
  );
  return rows.rows.map((r) => ({ cardId: r.id, mascCard: r.maskedCard, bankCode: r.bankCode, bankSystem: r.bankSystem }));
}

/** A new card number: its bank must be the one that takes payouts; then the provider tokenises it. */
export async function newCard(deps: SellDeps, card: string, save: boolean): Promise<PayoutCard> {
  const info = await lookupBin(deps, card.slice(0, 6)).catch((error: unknown) => {
    // An unknown bank is not the one bank that takes payouts.
    if (error instanceof SellError && error.code === 'C2F_BIN_NOT_FOUND') throw new SellError('C2F_ONLY_SBER', ONLY_SBER_MESSAGE, { cause: error });
    throw error;
  });
  if (info.code !== SELL_BANK_CODE) throw new SellError('C2F_ONLY_SBER', ONLY_SBER_MESSAGE);
  const tokenized = await payoutsOn(deps).tokenizeCard(card).catch(unavailable);
  return { token: tokenized.token, masked: tokenized.masked, code: info.code, system: info.system, savedCardId: null, save };
}

export async function savedCard(deps: SellDeps, account: string, fiat: string, cardId: string): Promise<PayoutCard> {
  payoutsOn(deps);
  const found = await deps.pool.query<Pick<SavedCardRow, 'providerToken' | 'maskedCard' | 'bankCode' | 'bankSystem'>>(
    `SELECT ${SAVED_CARD_COLUMNS} FROM sell_saved_cards WHERE id = $1 AND wallet_account_id = $2 AND fiat_currency = $3`,
    [cardId, account, fiat],
  );
  const card = found.rows[0];
  if (!card) throw new SellError('C2F_CARD_NOT_FOUND', 'No such saved card');
  return { token: card.providerToken, masked: card.maskedCard, code: card.bankCode, system: card.bankSystem, savedCardId: cardId, save: false };
}
