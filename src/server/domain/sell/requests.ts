/**
 * SPEC §3 sell orders: an order holds the crypto at once (one ledger entry) and is then handed to the payout
 * provider, once per idempotency key. A fixed rate is no free option (issue 14 item 11): an order takes it only while
 * the coin's RUB price has not fallen by more than SELL_MAX_SLIPPAGE_BPS since; otherwise the rate counts as expired.
 */
import type pg from 'pg';
import { parseDecimal } from '../../../lib/amount.ts';
import type { sellRateQuotes } from '../../db/schema/sell.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { ensureUserLedgerAccount, type Queryable } from '../ledger.ts';
import { holdOrder, type WhenShort } from '../orders/entries.ts';
import { money, unitsOf } from '../../../lib/money.ts';
import { orderReference } from '../orders/entry-keys.ts';
import { recordHistory } from '../orders/history.ts';
import { oncePerKey, requestHash } from '../orders/idempotency.ts';
import { honoursFixedRate } from '../slippage.ts';
import { newCard, savedCard, type PayoutCard } from './cards.ts';
import { coinOf, currentRate, type SellDeps } from './context.ts';
import { SellError } from './errors.ts';
import { checkFiat, coinsFor, FIAT_DECIMALS, limitsOf, ONLY_SBER_MESSAGE, orderKopecks, SELL_BANK_CODE } from './rules.ts';
import { SELL_ORDER_COLUMNS, sellOrderById, sellOrderByKey, type SellOrderRow } from './store.ts';
import { submitOrder } from './submission.ts';
import { sellOrderView, type SellOrderView } from './view.ts';

type OrderBase = { currency: string; fiatCurrency: string; fixedRateId: string; fiatAmount: string; idempotencyKey: string };
export type ByCardInput = OrderBase & { card: string; saveCard: boolean };
export type BySavedCardInput = OrderBase & { cardId: string };

const notEnough: WhenShort = (cause) => new SellError('C2F_NOT_ENOUGH_FUNDS', 'Not enough funds', { cause });

type FixedQuote = Pick<typeof sellRateQuotes.$inferSelect, 'rate'> & { expired: boolean };

/** The rate fixed by the quote, while it lives and the market has not fallen too far under it. */
async function fixedRate(deps: SellDeps, db: Queryable, account: string, input: OrderBase): Promise<{ rate: string; kopecks: bigint }> {
  const quoted = await db.query<FixedQuote>(
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

type Placed = { order: SellOrderRow; created: boolean };

/** The order itself, in the request's transaction: the crypto held at once, its history item, the card saved if asked. */
async function openOrder(deps: SellDeps, db: pg.PoolClient, account: string, input: OrderBase, card: PayoutCard, hash: string): Promise<SellOrderRow> {
  const coin = coinOf(deps, input.currency);
  if (card.code !== SELL_BANK_CODE) throw new SellError('C2F_ONLY_SBER', ONLY_SBER_MESSAGE);
  const fiatKopecks = orderKopecks(input.fiatAmount, limitsOf(deps.settings));
  const fixed = await fixedRate(deps, db, account, input);
  const amount = coinsFor(fiatKopecks, fixed.kopecks, coin.decimals);
  const inserted = await db.query<SellOrderRow>(
    `INSERT INTO sell_orders AS o (wallet_account_id, idempotency_key, request_hash, currency, amount, fiat_currency, fiat_amount, rate, rate_id,
                                   provider_token, masked_card, bank_code, bank_system, saved_card_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING ${SELL_ORDER_COLUMNS}`,
    [account, input.idempotencyKey, hash, input.currency, amount.toString(), input.fiatCurrency, fiatKopecks.toString(), fixed.rate, input.fixedRateId, card.token, card.masked, card.code, card.system, card.savedCardId],
  );
  const order = inserted.rows[0];
  if (!order) throw new Error('the sell order was not saved');
  const user = await ensureUserLedgerAccount(db, account);
  await holdOrder(db, { flow: 'sell', id: order.id }, { account: user, money: money(input.currency, unitsOf(amount)) }, notEnough);
  const shown = await recordHistory(db, {
    walletAccountId: account,
    transactionType: 'C2F',
    direction: 'WITHDRAWAL',
    state: 'IN_PROGRESS',
    currency: input.currency,
    amount: amount.toString(),
    toAddress: card.masked,
    accountFromType: 'B2C',
    fiatCurrency: input.fiatCurrency,
    fiatAmount: fiatKopecks.toString(),
    exchangeRate: fixed.rate,
    fromCurrency: input.currency,
    toCurrency: input.fiatCurrency,
    fromAmount: amount.toString(),
    toAmount: fiatKopecks.toString(),
    reference: orderReference('sell', order.id),
  });
  let savedCardId = card.savedCardId;
  if (card.save && !savedCardId) {
    const saved = await db.query<{ id: string }>(
      `INSERT INTO sell_saved_cards (wallet_account_id, fiat_currency, provider_token, masked_card, bank_code, bank_system)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (wallet_account_id, fiat_currency, provider_token) DO UPDATE SET masked_card = excluded.masked_card RETURNING id`,
      [account, input.fiatCurrency, card.token, card.masked, card.code, card.system],
    );
    savedCardId = saved.rows[0]?.id ?? null;
  }
  await db.query('UPDATE sell_orders SET wallet_transaction_id = $2, saved_card_id = $3 WHERE id = $1', [order.id, shown, savedCardId]);
  await notifyAccountChanged(db, account);
  return order;
}

async function place(deps: SellDeps, account: string, input: OrderBase, card: PayoutCard, cardParts: Record<string, string | boolean>): Promise<SellOrderView> {
  checkFiat(input.fiatCurrency);
  const hash = requestHash({ ...cardParts, currency: input.currency, fiatCurrency: input.fiatCurrency, rateId: input.fixedRateId, fiatAmount: input.fiatAmount });
  const request = { scope: 'sell', account, key: input.idempotencyKey, hash } as const;
  const placed = await oncePerKey<SellOrderRow, Placed>(deps.pool, request, {
    find: (db) => sellOrderByKey(db, account, input.idempotencyKey),
    replay: (order) => ({ order, created: false }),
    create: async (db) => ({ order: await openOrder(deps, db, account, input, card, hash), created: true }),
  });
  if (!placed.created) return sellOrderView(placed.order);
  const { order } = placed;
  // Handed to the provider after the hold commits; if this fails, the submit job tries again.
  await submitOrder(deps, order).catch((error: unknown) => deps.log.warn({ err: error, order: order.id }, 'sell order not yet accepted by the payout provider; will retry'));
  // The order is placed and its coins held: a read that fails now (a pool at its limit) answers the order as placed,
  // not an error that would send the client to retry what is done.
  const current = await sellOrderById(deps.pool, order.id).catch((error: unknown) => deps.log.warn({ err: error, order: order.id }, 'sell order placed; answered as placed, its read failed'));
  return sellOrderView(current ?? order);
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
