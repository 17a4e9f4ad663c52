/**
 * SPEC §3 buy orders: an order fixes the crypto amount its fiat amount buys at the quote's rate, once per
 * idempotency key; confirming it asks the card provider for a payment and shows the purchase as pending.
 * A fixed rate is no free option (issue 14 item 11): both take it only while the coin's price has not risen by more
 * than BUY_MAX_SLIPPAGE_BPS since it was fixed.
 */
import { createHash } from 'node:crypto';
import { formatUnits, parseDecimal } from '../../../lib/amount.ts';
import { PRICE_DECIMALS } from '../../adapters/rates/port.ts';
import type { PayerDetails } from '../../adapters/card/port.ts';
import type { buyRateQuotes } from '../../db/schema/buy.ts';
import { inTransaction } from '../../db/transaction.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { BuyError } from './errors.ts';
import { coinOf, fixedRateHolds, paymentsOn, type BuyDeps } from './context.ts';
import { checkReturnUrl, cryptoFor, FIAT_DECIMALS, limitMessage, parseFiat } from './rules.ts';
import { BUY_ORDER_COLUMNS, buyOrderByKey, loadBuyOrder } from './store.ts';
import { buyOrderView, type BuyOrderRow, type BuyOrderView } from './view.ts';

export type OrderInput = { account: string; rateId: string; itemId: string; description: string; returnUrl: string; idempotencyKey: string; fiatAmount: string };

type FixedQuote = Pick<typeof buyRateQuotes.$inferSelect, 'currency' | 'fiatCurrency' | 'items'> & { expired: boolean };

/** The order an earlier request with this key made, when its input was the same; another input is refused. */
async function existing(deps: BuyDeps, account: string, key: string, hash: string): Promise<BuyOrderView | undefined> {
  const row = await buyOrderByKey(deps.pool, account, key);
  if (!row) return undefined;
  if (row.requestHash !== hash) throw new BuyError('IDEMPOTENCY_KEY_REUSED', 'This idempotency key was used for another order');
  return buyOrderView(row);
}

/** The stored request_hash: these fields, in this order, so the rows written before still replay. */
function requestHash(input: OrderInput, cents: bigint): string {
  const normalised = { rateId: input.rateId, itemId: input.itemId, description: input.description, returnUrl: input.returnUrl, fiatCents: cents.toString() };
  return createHash('sha256').update(JSON.stringify(normalised)).digest('hex');
}

/** SPEC §3 buy order request: the crypto amount the fiat buys at the quote's fixed rate, once per idempotency key. */
export async function createOrder(deps: BuyDeps, input: OrderInput): Promise<BuyOrderView> {
  paymentsOn(deps);
  const cents = parseFiat(input.fiatAmount);
  const hash = requestHash(input, cents);
  const replay = await existing(deps, input.account, input.idempotencyKey, hash);
  if (replay) return replay;
  const returnUrl = checkReturnUrl(input.returnUrl, new URL(deps.publicUrl).origin);
  const quoted = await deps.pool.query<FixedQuote>(
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
  if (!(await fixedRateHolds(deps, coin, fixed.fiatCurrency, BigInt(item.rate)))) throw new BuyError('B2C_RATE_EXPIRED', 'The rate has changed. Please request a new one.');
  const amount = cryptoFor(cents, BigInt(item.rate), coin.decimals);
  if (amount <= 0n) throw new BuyError('B2C_LIMIT', 'The amount is too small');
  const inserted = await deps.pool.query<BuyOrderRow>(
    `INSERT INTO buy_orders (wallet_account_id, idempotency_key, request_hash, rate_id, item_id, method_code, currency, amount, fiat_currency, fiat_amount,
                             rate, description, return_url, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, now() + $14 * interval '1 second')
     ON CONFLICT (wallet_account_id, idempotency_key) DO NOTHING RETURNING ${BUY_ORDER_COLUMNS}`,
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
    ],
  );
  const order = inserted.rows[0];
  if (order) return buyOrderView(order);
  // The same key, committed by a request that ran at the same time: its answer is ours.
  const raced = await existing(deps, input.account, input.idempotencyKey, hash);
  if (!raced) throw new Error('an order with this key vanished');
  return raced;
}

export async function findOrder(deps: BuyDeps, account: string, id: string): Promise<BuyOrderView> {
  return buyOrderView(await loadBuyOrder(deps.pool, account, id));
}

const orderExpired = () => new BuyError('B2C_ORDER_EXPIRED', 'The order has expired. Please start again.');

/**
 * SPEC §3 order confirm: asks the provider for the payment (once per order: the reference is the order) and shows
 * the purchase in the history as Pending; answers the provider's page to send the browser to.
 */
export async function confirmOrder(deps: BuyDeps, account: string, id: string, payer: PayerDetails): Promise<{ redirectUrl: string }> {
  const cards = paymentsOn(deps);
  const order = await loadBuyOrder(deps.pool, account, id);
  if (order.redirectUrl && order.state !== 'NEW') return { redirectUrl: order.redirectUrl };
  if (order.state === 'EXPIRED' || order.expiresAt.getTime() <= Date.now()) throw orderExpired();
  // The last moment before the card can be charged: an order left waiting is no option on a rising price either.
  if (!(await fixedRateHolds(deps, coinOf(deps, order.currency), order.fiatCurrency, parseDecimal(order.rate, PRICE_DECIMALS)))) {
    throw new BuyError('B2C_ORDER_EXPIRED', 'The rate has changed. Please start again.');
  }
  const payment = await cards
    .createPayment({
      reference: `buy:${order.id}`,
      amount: BigInt(order.fiatAmount),
      currency: order.fiatCurrency,
      description: order.description,
      returnUrl: order.returnUrl,
      expiresAt: order.expiresAt,
      payer,
    })
    .catch((error: unknown) => {
      throw new BuyError('B2C_UNAVAILABLE', 'Card payments are temporarily unavailable. Please try again later.', { cause: error });
    });
  const pending = await inTransaction(deps.pool, async (client) => {
    const moved = await client.query(
      `UPDATE buy_orders SET state = 'PENDING', provider_payment_id = $2, redirect_url = $3, updated_at = now()
        WHERE id = $1 AND state = 'NEW' AND expires_at > now()`,
      [order.id, payment.paymentId, payment.redirectUrl],
    );
    if (!moved.rowCount) return false;
    const shown = await client.query<{ id: string }>(
      `INSERT INTO wallet_transactions (wallet_account_id, transaction_type, direction, state, currency, amount, account_to_type,
                                        fiat_currency, fiat_amount, exchange_rate, from_currency, to_currency, from_amount, to_amount, reference)
       VALUES ($1, 'FIAT_DEPOSIT', 'DEPOSIT', 'IN_PROGRESS', $2, $3, 'B2C', $4, $5, $6, $4, $2, $5, $3, $7) RETURNING id`,
      [order.walletAccountId, order.currency, order.amount, order.fiatCurrency, order.fiatAmount, order.rate, `buy:${order.id}`],
    );
    await client.query('UPDATE buy_orders SET wallet_transaction_id = $2 WHERE id = $1', [order.id, shown.rows[0]?.id]);
    await notifyAccountChanged(client, order.walletAccountId);
    return true;
  });
  if (pending) return { redirectUrl: payment.redirectUrl };
  // Confirmed by a request that ran at the same time, or expired meanwhile.
  const now = await loadBuyOrder(deps.pool, account, id);
  if (now.redirectUrl && now.state !== 'NEW' && now.state !== 'EXPIRED') return { redirectUrl: now.redirectUrl };
  throw orderExpired();
}
