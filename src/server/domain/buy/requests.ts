/**
 * SPEC §3 buy orders: an order fixes the crypto amount its fiat amount buys at the quote's rate, once per
 * idempotency key (orders/idempotency.ts); confirming it asks the card provider for a payment and shows the purchase
 * as pending. A fixed rate is no free option (issue 14 item 11): both take it only while the coin's price has not
 * risen by more than BUY_MAX_SLIPPAGE_BPS since it was fixed.
 */
import type pg from 'pg';
import { formatUnits, parseDecimal } from '../../../lib/amount.ts';
import { PRICE_DECIMALS } from '../../adapters/rates/port.ts';
import type { PayerDetails } from '../../adapters/card/port.ts';
import type { buyRateQuotes } from '../../db/schema/buy.ts';
import { inTransaction } from '../../db/transaction.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { orderReference } from '../orders/entry-keys.ts';
import { recordHistory } from '../orders/history.ts';
import { oncePerKey, requestHash } from '../orders/idempotency.ts';
import { NOW } from '../orders/sql-set.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';
import { BuyError, orderExpired } from './errors.ts';
import { buyingOn, coinOf, fixedRateHolds, paymentsOn, type BuyDeps } from './context.ts';
import { confirmOnRampOrder } from './onramp-orders.ts';
import { checkReturnUrl, cryptoFor, FIAT_DECIMALS, limitMessage, parseFiat } from './rules.ts';
import { BUY_ORDER_COLUMNS, buyHistoryItem, buyOrderByKey, loadBuyOrder, type BuyOrderRow } from './store.ts';
import { buyOrderView, type BuyOrderView } from './view.ts';
import { unitsFromRow } from '../../db/amounts.ts';

export type OrderInput = { account: string; rateId: string; itemId: string; description: string; returnUrl: string; idempotencyKey: string; fiatAmount: string };

type FixedQuote = Pick<typeof buyRateQuotes.$inferSelect, 'currency' | 'fiatCurrency' | 'items'> & { expired: boolean };

/** The order itself, in the request's transaction: the quote's method, its limits and its rate, still honoured. */
async function openOrder(deps: BuyDeps, db: pg.PoolClient, input: OrderInput, cents: bigint, hash: string): Promise<BuyOrderView> {
  const returnUrl = checkReturnUrl(input.returnUrl, new URL(deps.publicUrl).origin);
  const quoted = await db.query<FixedQuote>(
    `SELECT currency, fiat_currency AS "fiatCurrency", items, expires_at <= now() AS expired FROM buy_rate_quotes WHERE id = $1 AND wallet_account_id = $2`,
    [input.rateId, input.account],
  );
  const fixed = quoted.rows[0];
  if (!fixed) throw new BuyError('B2C_RATE_NOT_FOUND', 'No such rate for this account: request the payment methods first');
  if (fixed.expired) throw new BuyError('B2C_RATE_EXPIRED', 'The rate has expired. Please request a new one.');
  const item = fixed.items.find((i) => i.itemId === input.itemId);
  if (!item) throw new BuyError('B2C_METHOD_NOT_FOUND', 'No such payment method in this rate');
  const min = BigInt(item.minLimit);
  const max = BigInt(item.maxLimit);
  if (cents < min || cents > max) throw new BuyError('B2C_LIMIT', limitMessage(formatUnits(min, FIAT_DECIMALS), formatUnits(max, FIAT_DECIMALS), fixed.fiatCurrency));
  const coin = coinOf(deps, fixed.currency);
  // An on-ramp's quote is its estimate (item.estimate): it fixes its own price when the buyer pays, so there is no rate of ours to hold.
  const onRamp = item.estimate !== undefined;
  if (!onRamp && !(await fixedRateHolds(deps, coin, fixed.fiatCurrency, BigInt(item.rate)))) throw new BuyError('B2C_RATE_EXPIRED', 'The rate has changed. Please request a new one.');
  const amount = onRamp && item.fiatCents === cents.toString() ? BigInt(item.estimate ?? '0') : cryptoFor(cents, BigInt(item.rate), coin.decimals);
  if (amount <= 0n) throw new BuyError('B2C_LIMIT', 'The amount is too small');
  const inserted = await db.query<BuyOrderRow>(
    `INSERT INTO buy_orders AS o (wallet_account_id, idempotency_key, request_hash, rate_id, item_id, method_code, currency, amount, fiat_currency, fiat_amount,
                                  rate, description, return_url, expires_at, delivery)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, now() + $14 * interval '1 second', $15) RETURNING ${BUY_ORDER_COLUMNS}`,
    [
      input.account,
      input.idempotencyKey,
      hash,
      input.rateId,
      item.itemId,
      item.code,
      coin.currency,
      amount.toString(),
      fixed.fiatCurrency,
      cents.toString(),
      formatUnits(BigInt(item.rate), PRICE_DECIMALS),
      input.description,
      returnUrl,
      deps.settings.orderTtlS,
      onRamp ? 'CHAIN' : 'LEDGER',
    ],
  );
  const order = inserted.rows[0];
  if (!order) throw new Error('the buy order was not saved');
  return buyOrderView(order);
}

/** SPEC §3 buy order request: the crypto amount the fiat buys at the quote's fixed rate, once per idempotency key. */
export async function createOrder(deps: BuyDeps, input: OrderInput): Promise<BuyOrderView> {
  buyingOn(deps);
  const cents = parseFiat(input.fiatAmount);
  const hash = requestHash({ rateId: input.rateId, itemId: input.itemId, description: input.description, returnUrl: input.returnUrl, fiatCents: cents.toString() });
  const request = { scope: 'buy', account: input.account, key: input.idempotencyKey, hash } as const;
  return oncePerKey(deps.pool, request, {
    find: (db) => buyOrderByKey(db, input.account, input.idempotencyKey),
    replay: (row) => buyOrderView(row),
    create: (db) => openOrder(deps, db, input, cents, hash),
  });
}

export async function findOrder(deps: BuyDeps, account: string, id: string): Promise<BuyOrderView> {
  return buyOrderView(await loadBuyOrder(deps.pool, account, id));
}

/** NEW → PENDING with the provider's payment, and the purchase's history item; false when it expired or moved meanwhile. */
async function markPending(deps: BuyDeps, order: BuyOrderRow, payment: { paymentId: string; redirectUrl: string }): Promise<boolean> {
  return inTransaction(deps.pool, async (client) => {
    // Under the row lock: an order past its time is not confirmed, even before the worker has expired it.
    const open = await client.query<{ open: boolean }>('SELECT expires_at > now() AS open FROM buy_orders WHERE id = $1 FOR UPDATE', [order.id]);
    if (!open.rows[0]?.open) return false;
    const set = { provider_payment_id: payment.paymentId, redirect_url: payment.redirectUrl, updated_at: NOW } as const;
    if (!(await moveOrder(client, ORDER_TABLES.buy, order.id, { from: 'NEW', to: 'PENDING', set, ifMoved: 'skip' }))) return false;
    const shown = await recordHistory(client, buyHistoryItem(order));
    await client.query('UPDATE buy_orders SET wallet_transaction_id = $2 WHERE id = $1', [order.id, shown]);
    await notifyAccountChanged(client, order.walletAccountId);
    return true;
  });
}

/**
 * SPEC §3 order confirm: asks the provider for the payment (once per order: the reference is the order) and shows
 * the purchase in the history as Pending; answers the provider's page to send the browser to.
 */
export async function confirmOrder(deps: BuyDeps, account: string, id: string, payer: PayerDetails): Promise<{ redirectUrl: string }> {
  buyingOn(deps);
  const order = await loadBuyOrder(deps.pool, account, id);
  if (order.delivery === 'CHAIN') return confirmOnRampOrder(deps, order, payer);
  const cards = paymentsOn(deps);
  if (order.redirectUrl && order.state !== 'NEW') return { redirectUrl: order.redirectUrl };
  if (order.state === 'EXPIRED' || order.expiresAt.getTime() <= Date.now()) throw orderExpired();
  // The last moment before the card can be charged: an order left waiting is no option on a rising price either.
  if (!(await fixedRateHolds(deps, coinOf(deps, order.currency), order.fiatCurrency, parseDecimal(order.rate, PRICE_DECIMALS)))) {
    throw new BuyError('B2C_ORDER_EXPIRED', 'The rate has changed. Please start again.');
  }
  const payment = await cards
    .createPayment({
      reference: orderReference('buy', order.id),
      amount: unitsFromRow(order.fiatAmount, 'fiat_amount'),
      currency: order.fiatCurrency,
      description: order.description,
      returnUrl: order.returnUrl,
      expiresAt: order.expiresAt,
      payer,
    })
    .catch((error: unknown) => {
      throw new BuyError('B2C_UNAVAILABLE', 'Card payments are temporarily unavailable. Please try again later.', { cause: error });
    });
  if (await markPending(deps, order, payment)) return { redirectUrl: payment.redirectUrl };
  // Confirmed by a request that ran at the same time, or expired meanwhile.
  const now = await loadBuyOrder(deps.pool, account, id);
  if (now.redirectUrl && now.state !== 'NEW' && now.state !== 'EXPIRED') return { redirectUrl: now.redirectUrl };
  throw orderExpired();
}
