/**
 * Buying crypto with a card (SPEC §2 Buy, §3, §4, §5, §7). A quote fixes, per payment method, the fiat price of one
 * coin (market price plus the fee) and the method's limits for 300 s; an order fixes the crypto amount its fiat
 * amount buys at that price; confirming it asks the card provider for a payment and returns its hosted page. The
 * provider's signed events then move the order once: paid credits the fixed crypto amount from the card settlement
 * account in one ledger entry, failed or cancelled ends it with nothing credited. Unconfirmed orders expire; unpaid
 * ones are cancelled at the provider first, so a payment can never succeed after its order was given up.
 * A fixed rate is no free option (issue 14 item 11): the order and its confirmation take it only while the coin's
 * price has not risen by more than BUY_MAX_SLIPPAGE_BPS since it was fixed.
 */
import type pg from 'pg';
import { createHash, randomUUID } from 'node:crypto';
import { formatUnits, parseDecimal } from '../../lib/amount.ts';
import { decimalsOf, type CoinMeta } from '../../lib/currencies.ts';
import type { Logger } from '../log.ts';
import type { BuyConfig } from '../config-buy.ts';
import { PRICE_DECIMALS, PRICE_SCALE, type PriceTable, type RatesPort } from '../adapters/rates/port.ts';
import type { CardPaymentEvent, CardPaymentStatus, CardProvider, PayerDetails } from '../adapters/card/port.ts';
import type { BuyQuoteItem } from '../db/schema/buy.ts';
import { notifyAccountChanged } from './account-changes.ts';
import { ensureUserLedgerAccount, SYSTEM_ACCOUNTS, systemAccountId, transfer } from './ledger.ts';
import { priceIn } from './rates.ts';
import { honoursFixedRate } from './slippage.ts';

const FIAT_DECIMALS = 2;
const FIAT_SCALE = 10n ** BigInt(FIAT_DECIMALS);

/** The payment methods the provider offers; each has its own limits (BUY_LIMITS). */
export const BUY_METHODS: readonly { code: string; name: string }[] = [{ code: 'CARD', name: 'Bank card' }];
/** A method's limits when BUY_LIMITS names none, in USD, converted to the fiat at the reference rate. */
export const DEFAULT_LIMITS_USD = { min: '10', max: '5000' } as const;
/** SPEC §3 fiat availability: the region (geoId) each fiat currency is sold in. */
export const GEO_OF_FIAT: Readonly<Record<string, string>> = { USD: 'US', EUR: 'EU', KZT: 'KZ', UAH: 'UA', AZN: 'AZ', CAD: 'CA' };

export const NOT_PAID_IN_TIME = 'The order was not paid in time';
export const BUYING_OFF_MESSAGE = 'Buying with a card is not available on this wallet.';

export type BuyProblem =
  | 'UNKNOWN_CURRENCY'
  | 'UNSUPPORTED_FIAT'
  | 'ACCOUNT_NOT_FOUND'
  | 'AMOUNT'
  | 'RATE_NOT_FOUND'
  | 'RATE_EXPIRED'
  | 'ITEM_NOT_FOUND'
  | 'LIMIT'
  | 'RETURN_URL'
  | 'KEY_REUSED'
  | 'ORDER_NOT_FOUND'
  | 'ORDER_EXPIRED'
  | 'UNAVAILABLE';

export class BuyError extends Error {
  readonly problem: BuyProblem;
  constructor(problem: BuyProblem, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.problem = problem;
  }
}

export type FiatAvailability = { fiatCurrency: string; geoId: string };
export type PaymentMethodItem = {
  paymentMethodCode: string;
  paymentMethodName: string;
  fiatAmount: string;
  fiatCurrency: string;
  cryptoAmount: string;
  minLimit: string;
  maxLimit: string;
  itemId: string;
  /** Fiat per one coin at this method, the fee included. */
  rate: string;
};
export type BuyQuote = { methods: PaymentMethodItem[]; fixedRateId: string; currency: string; fiatCurrency: string; expiresInSeconds: number; expiresAt: string };
export type QuoteInput = { account: string; currency: string; fiatCurrency: string; fiatAmount?: string | undefined; cryptoAmount?: string | undefined };
export type OrderInput = { account: string; rateId: string; itemId: string; description: string; returnUrl: string; idempotencyKey: string; fiatAmount: string };

export type BuyOrderState = 'NEW' | 'PENDING' | 'COMPLETED' | 'FAILED' | 'EXPIRED';
export type BuyOrderView = {
  id: string;
  state: BuyOrderState;
  currency: string;
  cryptoAmount: string;
  fiatCurrency: string;
  fiatAmount: string;
  rate: string;
  paymentMethodCode: string;
  redirectUrl: string | null;
  transactionId: string | null;
  failureReason: string | null;
  createdDate: string;
  expiresAt: string;
  completedDate: string | null;
};

type OrderRow = {
  id: string;
  wallet_account_id: string;
  request_hash: string;
  rate_id: string;
  item_id: string;
  method_code: string;
  currency: string;
  amount: string;
  fiat_currency: string;
  fiat_amount: string;
  rate: string;
  description: string;
  return_url: string;
  state: BuyOrderState;
  provider_payment_id: string | null;
  redirect_url: string | null;
  failure_reason: string | null;
  wallet_transaction_id: string | null;
  expires_at: Date;
  created_at: Date;
  completed_at: Date | null;
};

/** The ledger key of an order's one credit (also read by the audit). */
export const buyCreditKey = (orderId: string) => `buy:credit:${orderId}`;

/** Coins (atomic units, rounded down to at most 8 decimals) that `fiatCents` buy at `rate` (fiat per coin, 8 decimals). */
export function cryptoFor(fiatCents: bigint, rate: bigint, decimals: number): bigint {
  if (rate <= 0n) return 0n;
  const units = (fiatCents * 10n ** BigInt(decimals) * PRICE_SCALE) / (rate * FIAT_SCALE);
  const step = decimals > 8 ? 10n ** BigInt(decimals - 8) : 1n;
  return (units / step) * step;
}

/** The fiat cents (rounded up) that buy at least `units` coins at `rate`. */
export function fiatFor(units: bigint, rate: bigint, decimals: number): bigint {
  const denominator = 10n ** BigInt(decimals) * PRICE_SCALE;
  return (units * rate * FIAT_SCALE + denominator - 1n) / denominator;
}

/** SPEC §5 limit message: 'Min {min} - max {max} {currency}'. */
export function limitMessage(min: string, max: string, currency: string): string {
  return `Min ${min} - max ${max} ${currency}`;
}

export type BuyDesk = ReturnType<typeof createBuyDesk>;

export function createBuyDesk(deps: {
  pool: pg.Pool;
  rates: RatesPort;
  coins: () => readonly CoinMeta[];
  /** Undefined when buying is off (no card provider): every call but reading an order is refused as UNAVAILABLE. */
  provider: CardProvider | undefined;
  settings: Pick<BuyConfig, 'fiatCurrencies' | 'feeBps' | 'limits' | 'rateTtlS' | 'orderTtlS' | 'maxSlippageBps'>;
  publicUrl: string;
  log: Logger;
}) {
  const { pool, provider, settings, log } = deps;
  const origin = new URL(deps.publicUrl).origin;

  const paymentsOn = (): CardProvider => {
    if (!provider) throw new BuyError('UNAVAILABLE', BUYING_OFF_MESSAGE);
    return provider;
  };
  const coinOf = (currency: string): CoinMeta => {
    const coin = deps.coins().find((c) => c.currency === currency && c.active);
    if (!coin) throw new BuyError('UNKNOWN_CURRENCY', `${currency} is not a currency this wallet sells`);
    return coin;
  };
  const checkFiat = (fiat: string) => {
    if (!settings.fiatCurrencies.includes(fiat)) throw new BuyError('UNSUPPORTED_FIAT', `Purchases are paid in ${settings.fiatCurrencies.join(', ')} only`);
  };
  const prices = async (): Promise<PriceTable> =>
    deps.rates.prices().catch((error: unknown) => {
      throw new BuyError('UNAVAILABLE', 'Rates are unavailable right now. Please try again later.', { cause: error });
    });
  const parseFiat = (text: string, field = 'fiatAmount'): bigint => {
    try {
      const cents = parseDecimal(text, FIAT_DECIMALS);
      if (cents < 0n) throw new Error('negative');
      return cents;
    } catch (error) {
      throw new BuyError('AMOUNT', `${field}: an amount with at most ${FIAT_DECIMALS} decimals`, { cause: error });
    }
  };

  async function checkAccount(account: string): Promise<void> {
    const found = await pool.query({ name: 'buy_account_exists', text: 'SELECT 1 FROM wallet_accounts WHERE id = $1', values: [account] });
    if (!found.rowCount) throw new BuyError('ACCOUNT_NOT_FOUND', 'No such account');
  }

  /** A method's limits in cents of `fiat`: BUY_LIMITS by method and fiat, else by method (in USD), else the default. */
  function limitsOf(code: string, fiat: string, table: PriceTable): { min: bigint; max: bigint } {
    const own = settings.limits[`${code}/${fiat}`];
    if (own) return { min: parseDecimal(own.min, FIAT_DECIMALS), max: parseDecimal(own.max, FIAT_DECIMALS) };
    const usd = settings.limits[code] ?? DEFAULT_LIMITS_USD;
    const perUsd = table.fiatPerUsd[fiat] ?? PRICE_SCALE;
    // Whole units of the fiat: the minimum rounded up, the maximum down.
    const min = (parseDecimal(usd.min, FIAT_DECIMALS) * perUsd + PRICE_SCALE * FIAT_SCALE - 1n) / (PRICE_SCALE * FIAT_SCALE);
    const max = (parseDecimal(usd.max, FIAT_DECIMALS) * perUsd) / (PRICE_SCALE * FIAT_SCALE);
    return { min: min * FIAT_SCALE, max: max * FIAT_SCALE };
  }

  function availability(): FiatAvailability[] {
    paymentsOn();
    return settings.fiatCurrencies.map((fiatCurrency) => ({ fiatCurrency, geoId: GEO_OF_FIAT[fiatCurrency] ?? fiatCurrency }));
  }

  function fiatOfGeo(geoId: string): string {
    const found = availability().find((a) => a.geoId === geoId || a.fiatCurrency === geoId);
    if (!found) throw new BuyError('UNSUPPORTED_FIAT', `No purchases are offered in the region ${geoId}`);
    return found.fiatCurrency;
  }

  /** Fiat per coin, 8 decimals, the fee included (rounded up: the rate never favours the buyer past the fee). */
  async function rateOf(coin: CoinMeta, fiat: string, table?: PriceTable): Promise<bigint> {
    const price = priceIn(table ?? (await prices()), coin, fiat);
    if (price === undefined || price <= 0n) throw new BuyError('UNAVAILABLE', `No rate for ${coin.currency} in ${fiat} right now`);
    return (price * BigInt(10_000 + settings.feeBps) + 9_999n) / 10_000n;
  }

  /**
   * Whether a rate fixed earlier (fiat per coin, fee included) may still be taken: the user gets 1/rate coins per fiat
   * unit, so the desk loses when the current rate has risen above it; beyond the slippage it may not.
   */
  async function fixedRateHolds(coin: CoinMeta, fiat: string, fixed: bigint): Promise<boolean> {
    return honoursFixedRate(await rateOf(coin, fiat), fixed, settings.maxSlippageBps);
  }

  /** POST /b2c/rate: the current price of one coin in the fiat, fee included; nothing is fixed. */
  async function rate(currency: string, fiat: string): Promise<{ currency: string; fiatCurrency: string; rate: string }> {
    paymentsOn();
    checkFiat(fiat);
    const coin = coinOf(currency);
    return { currency, fiatCurrency: fiat, rate: formatUnits(await rateOf(coin, fiat), PRICE_DECIMALS) };
  }

  /** SPEC §3 rate quote: every method with the amounts for the side given, under one fixedRateId good for 300 s. */
  async function quote(input: QuoteInput): Promise<BuyQuote> {
    paymentsOn();
    checkFiat(input.fiatCurrency);
    const coin = coinOf(input.currency);
    if ((input.fiatAmount === undefined) === (input.cryptoAmount === undefined)) throw new BuyError('AMOUNT', 'Give either fiatAmount or cryptoAmount');
    let units: bigint | undefined;
    if (input.cryptoAmount !== undefined) {
      try {
        units = parseDecimal(input.cryptoAmount, Math.min(coin.decimals, 8));
        if (units < 0n) throw new Error('negative');
      } catch (error) {
        throw new BuyError('AMOUNT', `cryptoAmount: an amount with at most ${Math.min(coin.decimals, 8)} decimals`, { cause: error });
      }
      units *= coin.decimals > 8 ? 10n ** BigInt(coin.decimals - 8) : 1n;
    }
    const typedCents = input.fiatAmount !== undefined ? parseFiat(input.fiatAmount) : undefined;
    await checkAccount(input.account);
    const table = await prices();
    const base = await rateOf(coin, input.fiatCurrency, table);
    const items: BuyQuoteItem[] = BUY_METHODS.map((method) => {
      const limits = limitsOf(method.code, input.fiatCurrency, table);
      return { itemId: randomUUID(), code: method.code, name: method.name, rate: base.toString(), minLimit: limits.min.toString(), maxLimit: limits.max.toString() };
    });
    const stored = await pool.query<{ id: string; expires_at: Date }>(
      `INSERT INTO buy_rate_quotes (wallet_account_id, currency, fiat_currency, items, expires_at)
       VALUES ($1, $2, $3, $4, now() + $5 * interval '1 second') RETURNING id, expires_at`,
      [input.account, coin.currency, input.fiatCurrency, JSON.stringify(items), settings.rateTtlS],
    );
    const row = stored.rows[0];
    if (!row) throw new Error('the quote was not stored');
    const methods = items.map((item): PaymentMethodItem => {
      const itemRate = BigInt(item.rate);
      const cents = typedCents ?? fiatFor(units ?? 0n, itemRate, coin.decimals);
      return {
        paymentMethodCode: item.code,
        paymentMethodName: item.name,
        fiatAmount: formatUnits(cents, FIAT_DECIMALS),
        fiatCurrency: input.fiatCurrency,
        cryptoAmount: formatUnits(cryptoFor(cents, itemRate, coin.decimals), coin.decimals),
        minLimit: formatUnits(BigInt(item.minLimit), FIAT_DECIMALS),
        maxLimit: formatUnits(BigInt(item.maxLimit), FIAT_DECIMALS),
        itemId: item.itemId,
        rate: formatUnits(itemRate, PRICE_DECIMALS),
      };
    });
    return {
      methods,
      fixedRateId: row.id,
      currency: coin.currency,
      fiatCurrency: input.fiatCurrency,
      expiresInSeconds: settings.rateTtlS,
      expiresAt: row.expires_at.toISOString(),
    };
  }

  function checkReturnUrl(text: string): string {
    let url: URL;
    try {
      url = new URL(text);
    } catch (error) {
      throw new BuyError('RETURN_URL', 'returnUrl must be an absolute address of this wallet', { cause: error });
    }
    // Only back into this wallet: the provider's page must not become an open redirect.
    if (url.origin !== origin) throw new BuyError('RETURN_URL', `returnUrl must be an address on ${origin}`);
    return url.toString();
  }

  async function existing(account: string, key: string, hash: string): Promise<BuyOrderView | undefined> {
    const found = await pool.query<OrderRow>('SELECT * FROM buy_orders WHERE wallet_account_id = $1 AND idempotency_key = $2', [account, key]);
    const row = found.rows[0];
    if (!row) return undefined;
    if (row.request_hash !== hash) throw new BuyError('KEY_REUSED', 'This idempotency key was used for another order');
    return view(row);
  }

  /** SPEC §3 buy order request: the crypto amount the fiat buys at the quote's fixed rate, once per idempotency key. */
  async function createOrder(input: OrderInput): Promise<BuyOrderView> {
    paymentsOn();
    const cents = parseFiat(input.fiatAmount);
    const hash = createHash('sha256')
      .update(JSON.stringify({ rateId: input.rateId, itemId: input.itemId, description: input.description, returnUrl: input.returnUrl, fiatCents: cents.toString() }))
      .digest('hex');
    const replay = await existing(input.account, input.idempotencyKey, hash);
    if (replay) return replay;
    const returnUrl = checkReturnUrl(input.returnUrl);
    const quoted = await pool.query<{ currency: string; fiat_currency: string; items: BuyQuoteItem[]; expired: boolean }>(
      'SELECT currency, fiat_currency, items, expires_at <= now() AS expired FROM buy_rate_quotes WHERE id = $1 AND wallet_account_id = $2',
      [input.rateId, input.account],
    );
    const fixed = quoted.rows[0];
    if (!fixed) throw new BuyError('RATE_NOT_FOUND', 'No such rate for this account: request the payment methods first');
    if (fixed.expired) throw new BuyError('RATE_EXPIRED', 'The rate has expired. Please request a new one.');
    const item = fixed.items.find((i) => i.itemId === input.itemId);
    if (!item) throw new BuyError('ITEM_NOT_FOUND', 'No such payment method in this rate');
    const min = BigInt(item.minLimit);
    const max = BigInt(item.maxLimit);
    if (cents < min || cents > max) throw new BuyError('LIMIT', limitMessage(formatUnits(min, FIAT_DECIMALS), formatUnits(max, FIAT_DECIMALS), fixed.fiat_currency));
    const coin = coinOf(fixed.currency);
    if (!(await fixedRateHolds(coin, fixed.fiat_currency, BigInt(item.rate)))) throw new BuyError('RATE_EXPIRED', 'The rate has changed. Please request a new one.');
    const amount = cryptoFor(cents, BigInt(item.rate), coin.decimals);
    if (amount <= 0n) throw new BuyError('LIMIT', 'The amount is too small');
    const inserted = await pool.query<OrderRow>(
      `INSERT INTO buy_orders (wallet_account_id, idempotency_key, request_hash, rate_id, item_id, method_code, currency, amount, fiat_currency, fiat_amount,
                               rate, description, return_url, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, now() + $14 * interval '1 second')
       ON CONFLICT (wallet_account_id, idempotency_key) DO NOTHING RETURNING *`,
      [
        input.account,
        input.idempotencyKey,
        hash,
        input.rateId,
        item.itemId,
        item.code,
        coin.currency,
        amount.toString(),
        fixed.fiat_currency,
        cents.toString(),
        formatUnits(BigInt(item.rate), PRICE_DECIMALS),
        input.description,
        returnUrl,
        settings.orderTtlS,
      ],
    );
    const order = inserted.rows[0];
    if (order) return view(order);
    // The same key, committed by a request that ran at the same time: its answer is ours.
    const raced = await existing(input.account, input.idempotencyKey, hash);
    if (!raced) throw new Error('an order with this key vanished');
    return raced;
  }

  async function load(account: string, id: string): Promise<OrderRow> {
    const found = await pool.query<OrderRow>('SELECT * FROM buy_orders WHERE id = $1 AND wallet_account_id = $2', [id, account]);
    const row = found.rows[0];
    if (!row) throw new BuyError('ORDER_NOT_FOUND', 'No such order in this account');
    return row;
  }

  async function findOrder(account: string, id: string): Promise<BuyOrderView> {
    return view(await load(account, id));
  }

  /**
   * SPEC §3 order confirm: asks the provider for the payment (once per order: the reference is the order) and shows
   * the purchase in the history as Pending; answers the provider's page to send the browser to.
   */
  async function confirmOrder(account: string, id: string, payer: PayerDetails): Promise<{ redirectUrl: string }> {
    const cards = paymentsOn();
    const order = await load(account, id);
    if (order.redirect_url && order.state !== 'NEW') return { redirectUrl: order.redirect_url };
    if (order.state === 'EXPIRED' || order.expires_at.getTime() <= Date.now()) throw new BuyError('ORDER_EXPIRED', 'The order has expired. Please start again.');
    // The last moment before the card can be charged: an order left waiting is no option on a rising price either.
    if (!(await fixedRateHolds(coinOf(order.currency), order.fiat_currency, parseDecimal(order.rate, PRICE_DECIMALS)))) {
      throw new BuyError('ORDER_EXPIRED', 'The rate has changed. Please start again.');
    }
    const payment = await cards
      .createPayment({
        reference: `buy:${order.id}`,
        amount: BigInt(order.fiat_amount),
        currency: order.fiat_currency,
        description: order.description,
        returnUrl: order.return_url,
        expiresAt: order.expires_at,
        payer,
      })
      .catch((error: unknown) => {
        throw new BuyError('UNAVAILABLE', 'Card payments are temporarily unavailable. Please try again later.', { cause: error });
      });
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const moved = await client.query<OrderRow>(
        `UPDATE buy_orders SET state = 'PENDING', provider_payment_id = $2, redirect_url = $3, updated_at = now()
          WHERE id = $1 AND state = 'NEW' AND expires_at > now() RETURNING *`,
        [order.id, payment.paymentId, payment.redirectUrl],
      );
      const pending = moved.rows[0];
      if (pending) {
        const shown = await client.query<{ id: string }>(
          `INSERT INTO wallet_transactions (wallet_account_id, transaction_type, direction, state, currency, amount, account_to_type,
                                            fiat_currency, fiat_amount, exchange_rate, from_currency, to_currency, from_amount, to_amount, reference)
           VALUES ($1, 'FIAT_DEPOSIT', 'DEPOSIT', 'IN_PROGRESS', $2, $3, 'B2C', $4, $5, $6, $4, $2, $5, $3, $7) RETURNING id`,
          [order.wallet_account_id, order.currency, order.amount, order.fiat_currency, order.fiat_amount, order.rate, `buy:${order.id}`],
        );
        await client.query('UPDATE buy_orders SET wallet_transaction_id = $2 WHERE id = $1', [order.id, shown.rows[0]?.id]);
        await notifyAccountChanged(client, order.wallet_account_id);
      }
      await client.query('COMMIT');
      if (pending) return { redirectUrl: payment.redirectUrl };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
    // Confirmed by a request that ran at the same time, or expired meanwhile.
    const now = await load(account, id);
    if (now.redirect_url && now.state !== 'NEW' && now.state !== 'EXPIRED') return { redirectUrl: now.redirect_url };
    throw new BuyError('ORDER_EXPIRED', 'The order has expired. Please start again.');
  }

  /**
   * Moves a PENDING order to its end, once: SUCCEEDED credits the fixed amount from card settlement, FAILED and
   * CANCELLED end it with nothing credited. Anything else (in-progress statuses, a second or late event) changes nothing.
   */
  async function settleOrder(client: pg.PoolClient, order: OrderRow, status: CardPaymentStatus, reason: string | null): Promise<'applied' | 'duplicate' | 'ignored'> {
    const target = status === 'SUCCEEDED' ? 'COMPLETED' : status === 'FAILED' || status === 'CANCELLED' ? 'FAILED' : undefined;
    if (!target) return order.state === 'PENDING' ? 'applied' : 'ignored';
    if (order.state !== 'PENDING') {
      if (order.state === target) return 'duplicate';
      if (order.state === 'COMPLETED' || target === 'COMPLETED') log.error({ order: order.id, state: order.state, status }, "a card payment event contradicts the order's final state");
      return 'ignored';
    }
    if (target === 'COMPLETED') {
      const user = await ensureUserLedgerAccount(client, order.wallet_account_id);
      await transfer(client, {
        key: buyCreditKey(order.id),
        kind: 'BUY_CREDIT',
        reference: `buy:${order.id}`,
        from: systemAccountId(SYSTEM_ACCOUNTS.cardSettlement()),
        to: user,
        currency: order.currency,
        amount: BigInt(order.amount),
      });
    }
    const failure = target === 'FAILED' ? (reason ?? 'The payment failed') : null;
    await client.query(
      `UPDATE buy_orders SET state = $2, failure_reason = $3, updated_at = now(), completed_at = CASE WHEN $2 = 'COMPLETED' THEN now() END WHERE id = $1`,
      [order.id, target, failure],
    );
    await client.query(
      `UPDATE wallet_transactions SET state = $2, failure_reason = $3, updated_at = now(), completed_at = CASE WHEN $2 = 'COMPLETED' THEN now() END WHERE id = $1`,
      [order.wallet_transaction_id, target, failure],
    );
    await notifyAccountChanged(client, order.wallet_account_id);
    return 'applied';
  }

  /** The provider's webhook, already verified: each event id is taken once; the order moves at most once. */
  async function applyPaymentEvent(event: CardPaymentEvent): Promise<'applied' | 'duplicate' | 'ignored' | 'unknown'> {
    const match = /^buy:([0-9a-f-]{36})$/i.exec(event.reference);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const locked = match?.[1] ? await client.query<OrderRow>('SELECT * FROM buy_orders WHERE id = $1 FOR UPDATE', [match[1]]) : undefined;
      const order = locked?.rows[0];
      // Not yet handed to the provider (cannot have been paid): refused, so the provider tries again later.
      if (!order || order.state === 'NEW') {
        await client.query('ROLLBACK');
        return 'unknown';
      }
      const taken = await client.query(`INSERT INTO card_webhook_events (event_id, payment_id, order_id, status, outcome) VALUES ($1, $2, $3, $4, 'pending') ON CONFLICT DO NOTHING`, [
        event.eventId,
        event.paymentId,
        order.id,
        event.status,
      ]);
      if (!taken.rowCount) {
        await client.query('ROLLBACK');
        return 'duplicate';
      }
      let outcome: 'applied' | 'duplicate' | 'ignored';
      const sameMoney = event.currency === order.fiat_currency && safeCents(event.amount) === BigInt(order.fiat_amount);
      if (order.provider_payment_id !== event.paymentId || !sameMoney) {
        log.error({ order: order.id, paymentId: event.paymentId, amount: event.amount, currency: event.currency }, 'a card payment event does not match its order');
        outcome = 'ignored';
      } else {
        outcome = await settleOrder(client, order, event.status, event.reason ?? null);
      }
      await client.query('UPDATE card_webhook_events SET outcome = $2 WHERE event_id = $1', [event.eventId, outcome]);
      await client.query('COMMIT');
      return outcome;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * The worker's expiry: unconfirmed orders past their time expire; unpaid ones are cancelled at the provider and
   * fail (or, had the payment just ended, take its outcome). Old quotes are dropped.
   */
  async function expireOrders(): Promise<number> {
    const fresh = await pool.query(`UPDATE buy_orders SET state = 'EXPIRED', updated_at = now() WHERE state = 'NEW' AND expires_at <= now()`);
    let ended = fresh.rowCount ?? 0;
    // Unpaid orders are cancelled at the provider; with buying off there is none to ask, so they wait.
    const due = provider
      ? await pool.query<{ id: string; provider_payment_id: string }>(
          `SELECT id, provider_payment_id FROM buy_orders WHERE state = 'PENDING' AND expires_at <= now() ORDER BY expires_at LIMIT 20`,
        )
      : { rows: [] };
    for (const row of due.rows) {
      try {
        const status = await paymentsOn().cancelPayment(row.provider_payment_id);
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const locked = await client.query<OrderRow>(`SELECT * FROM buy_orders WHERE id = $1 FOR UPDATE`, [row.id]);
          const order = locked.rows[0];
          const outcome = order ? await settleOrder(client, order, status, status === 'CANCELLED' ? NOT_PAID_IN_TIME : null) : 'ignored';
          await client.query('COMMIT');
          if (outcome === 'applied' && status !== 'PENDING' && status !== 'REQUIRES_ACTION') ended += 1;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {});
          throw error;
        } finally {
          client.release();
        }
      } catch (error) {
        log.warn({ err: error, order: row.id }, 'an unpaid buy order could not be cancelled yet; will retry');
      }
    }
    await pool.query(`DELETE FROM buy_rate_quotes WHERE expires_at < now() - interval '1 day'`);
    return ended;
  }

  return { availability, fiatOfGeo, rate, quote, createOrder, findOrder, confirmOrder, applyPaymentEvent, expireOrders };
}

function safeCents(amount: string): bigint | undefined {
  try {
    return parseDecimal(amount, FIAT_DECIMALS);
  } catch {
    return undefined;
  }
}

function view(row: OrderRow): BuyOrderView {
  return {
    id: row.id,
    state: row.state,
    currency: row.currency,
    cryptoAmount: formatUnits(BigInt(row.amount), decimalsOf(row.currency) ?? 8),
    fiatCurrency: row.fiat_currency,
    fiatAmount: formatUnits(BigInt(row.fiat_amount), FIAT_DECIMALS),
    rate: row.rate,
    paymentMethodCode: row.method_code,
    redirectUrl: row.state === 'NEW' ? null : row.redirect_url,
    transactionId: row.wallet_transaction_id,
    failureReason: row.failure_reason,
    createdDate: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    completedDate: row.completed_at?.toISOString() ?? null,
  };
}
