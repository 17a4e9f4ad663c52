/**
 * SPEC §3 sell orders: an order holds the crypto at once (one ledger entry) and is then handed to the payout
 * provider, once per idempotency key. A fixed rate is no free option (issue 14 item 11): an order takes it only while
 * the coin's RUB price has not fallen by more than SELL_MAX_SLIPPAGE_BPS since; otherwise the rate counts as expired.
 */
import { createHash } from 'node:crypto';
import { parseDecimal } from '../../../lib/amount.ts';
import type { sellRateQuotes } from '../../db/schema/sell.ts';
import { inTransaction } from '../../db/transaction.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { ensureUserLedgerAccount, hold, LedgerError } from '../ledger.ts';
import { honoursFixedRate } from '../slippage.ts';
import { newCard, savedCard, type PayoutCard } from './cards.ts';
import { coinOf, currentRate, type SellDeps } from './context.ts';
import { SellError } from './errors.ts';
import { sellEntryKeys } from './payouts.ts';
import { checkFiat, coinsFor, FIAT_DECIMALS, limitsOf, ONLY_SBER_MESSAGE, orderKopecks, SELL_BANK_CODE } from './rules.ts';
import { SELL_ORDER_COLUMNS, sellOrderById, sellOrderByKey } from './store.ts';
import { submitOrder } from './submission.ts';
import { sellOrderView, type SellOrderRow, type SellOrderView } from './view.ts';

type OrderBase = { currency: string; fiatCurrency: string; fixedRateId: string; fiatAmount: string; idempotencyKey: string };
export type ByCardInput = OrderBase & { card: string; saveCard: boolean };
export type BySavedCardInput = OrderBase & { cardId: string };

type FixedQuote = Pick<typeof sellRateQuotes.$inferSelect, 'rate'> & { expired: boolean };

/** The order an earlier request with this key made, when its input was the same; another input is refused. */
async function existing(deps: SellDeps, account: string, key: string, hash: string): Promise<SellOrderView | undefined> {
  const row = await sellOrderByKey(deps.pool, account, key);
  if (!row) return undefined;
  if (row.requestHash !== hash) throw new SellError('IDEMPOTENCY_KEY_REUSED', 'This idempotency key was used for another order');
  return sellOrderView(row);
}

/** The stored request_hash: the card's part first, then these fields, so the rows written before still replay. */
function requestHash(input: OrderBase, cardParts: Record<string, unknown>): string {
  const normalised = { ...cardParts, currency: input.currency, fiatCurrency: input.fiatCurrency, rateId: input.fixedRateId, fiatAmount: input.fiatAmount };
  return createHash('sha256').update(JSON.stringify(normalised)).digest('hex');
}

/** The rate fixed by the quote, while it lives and the market has not fallen too far under it. */
async function fixedRate(deps: SellDeps, account: string, input: OrderBase): Promise<{ rate: string; kopecks: bigint }> {
  const quoted = await deps.pool.query<FixedQuote>(
    `SELECT rate, expires_at <= now() AS expired FROM sell_rate_quotes WHERE id = $1 AND wallet_account_id = $2 AND currency = $3 AND fiat_currency = $4`,
    [input.fixedRateId, account, input.currency, input.fiatCurrency],
  );
  const fixed = quoted.rows[0];
  if (!fixed) throw new SellError('C2F_RATE_NOT_FOUND', 'No such rate for this account and currency: request a rate first');
  if (fixed.expired) throw new SellError('C2F_RATE_EXPIRED', 'The rate has expired. Please request a new one.');
  const kopecks = parseDecimal(fixed.rate, FIAT_DECIMALS);
  // The rate at which the desk would buy the coin now, the same spread off: fallen too far means the rate is stale.
  if (!honoursFixedRate(kopecks, await currentRate(deps, coinOf(deps, input.currency)), deps.settings.maxSlippageBps)) {
    throw new SellError('C2F_RATE_EXPIRED', 'The rate has changed. Please request a new one.');
  }
  return { rate: fixed.rate, kopecks };
}

async function place(deps: SellDeps, account: string, input: OrderBase, card: PayoutCard, cardParts: Record<string, unknown>): Promise<SellOrderView> {
  checkFiat(input.fiatCurrency);
  const hash = requestHash(input, cardParts);
  const replay = await existing(deps, account, input.idempotencyKey, hash);
  if (replay) return replay;

  const coin = coinOf(deps, input.currency);
  if (card.code !== SELL_BANK_CODE) throw new SellError('C2F_ONLY_SBER', ONLY_SBER_MESSAGE);
  const fiatKopecks = orderKopecks(input.fiatAmount, limitsOf(deps.settings));
  const fixed = await fixedRate(deps, account, input);
  const amount = coinsFor(fiatKopecks, fixed.kopecks, coin.decimals);

  const order = await inTransaction(deps.pool, async (client) => {
    const inserted = await client.query<SellOrderRow>(
      `INSERT INTO sell_orders (wallet_account_id, idempotency_key, request_hash, currency, amount, fiat_currency, fiat_amount, rate, rate_id,
                                provider_token, masked_card, bank_code, bank_system, saved_card_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       ON CONFLICT (wallet_account_id, idempotency_key) DO NOTHING RETURNING ${SELL_ORDER_COLUMNS}`,
      [account, input.idempotencyKey, hash, input.currency, amount.toString(), input.fiatCurrency, fiatKopecks.toString(), fixed.rate, input.fixedRateId, card.token, card.masked, card.code, card.system, card.savedCardId],
    );
    const created = inserted.rows[0];
    // The same key, committed by a request that ran at the same time: nothing of ours to write.
    if (!created) return undefined;
    const user = await ensureUserLedgerAccount(client, account);
    try {
      await hold(client, { key: sellEntryKeys(created.id).hold, kind: 'SELL_HOLD', reference: `sell:${created.id}`, account: user, currency: input.currency, amount });
    } catch (error) {
      if (error instanceof LedgerError && error.problem === 'INSUFFICIENT_FUNDS') throw new SellError('C2F_NOT_ENOUGH_FUNDS', 'Not enough funds', { cause: error });
      throw error;
    }
    const shown = await client.query<{ id: string }>(
      `INSERT INTO wallet_transactions (wallet_account_id, transaction_type, direction, state, currency, amount, to_address,
                                        account_from_type, fiat_currency, fiat_amount, exchange_rate, from_currency, to_currency, from_amount, to_amount, reference)
       VALUES ($1, 'C2F', 'WITHDRAWAL', 'IN_PROGRESS', $2, $3, $4, 'B2C', $5, $6, $7, $2, $5, $3, $6, $8) RETURNING id`,
      [account, input.currency, amount.toString(), card.masked, input.fiatCurrency, fiatKopecks.toString(), fixed.rate, `sell:${created.id}`],
    );
    let savedCardId = card.savedCardId;
    if (card.save && !savedCardId) {
      const saved = await client.query<{ id: string }>(
        `INSERT INTO sell_saved_cards (wallet_account_id, fiat_currency, provider_token, masked_card, bank_code, bank_system)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (wallet_account_id, fiat_currency, provider_token) DO UPDATE SET masked_card = excluded.masked_card RETURNING id`,
        [account, input.fiatCurrency, card.token, card.masked, card.code, card.system],
      );
      savedCardId = saved.rows[0]?.id ?? null;
    }
    await client.query('UPDATE sell_orders SET wallet_transaction_id = $2, saved_card_id = $3 WHERE id = $1', [created.id, shown.rows[0]?.id, savedCardId]);
    await notifyAccountChanged(client, account);
    return created;
  });
  if (!order) {
    const raced = await existing(deps, account, input.idempotencyKey, hash);
    if (!raced) throw new Error('an order with this key vanished');
    return raced;
  }
  // Handed to the provider after the hold commits; if this fails, the submit job tries again.
  await submitOrder(deps, order).catch((error: unknown) => deps.log.warn({ err: error, order: order.id }, 'sell order not yet accepted by the payout provider; will retry'));
  return sellOrderView((await sellOrderById(deps.pool, order.id)) ?? order);
}

export async function orderByCard(deps: SellDeps, account: string, input: ByCardInput): Promise<SellOrderView> {
  const card = await newCard(deps, input.card, input.saveCard);
  return place(deps, account, input, card, { kind: 'byCard', token: card.token, saveCard: input.saveCard });
}

export async function orderBySavedCard(deps: SellDeps, account: string, input: BySavedCardInput): Promise<SellOrderView> {
  const card = await savedCard(deps, account, input.fiatCurrency, input.cardId);
  return place(deps, account, input, card, { kind: 'bySavedCard', cardId: input.cardId });
}

export async function findOrder(deps: SellDeps, account: string, id: string): Promise<SellOrderView> {
  const row = await sellOrderById(deps.pool, id, account);
  if (!row) throw new SellError('C2F_ORDER_NOT_FOUND', 'No such order in this account');
  return sellOrderView(row);
}
