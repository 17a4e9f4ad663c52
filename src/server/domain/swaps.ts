/**
 * Swaps (SPEC §3 swap quote, limits, order; §5 swap rules): quotes fix a rate from the rates port less a spread
 * for 300 s; an order holds the source amount; confirming it inside the quote's life moves, in ONE ledger entry,
 * the source from the user's hold to the swap liquidity account and the destination from that account to the user,
 * with the spread to fee income (in the destination currency). Expired and cancelled orders release their hold.
 * A quote is no free option (issue 14 item 11): ordering and confirming it also need the market not to have moved
 * against the desk by more than SWAP_MAX_SLIPPAGE_BPS since it was taken; otherwise it counts as expired.
 *
 * The swap liquidity account stands for the custodian's market-making counterparty (the venue where it hedges),
 * so, like the world accounts, it may go negative: its balance per currency is the custodian's open position.
 * Every time is the database's (now()), so any number of processes agree on what has expired.
 */
import type pg from 'pg';
import { formatUnits, parseDecimal, AmountError } from '../../lib/amount.ts';
import { decimalsOf, type CoinMeta } from '../../lib/currencies.ts';
import { PRICE_DECIMALS, type RatesPort } from '../adapters/rates/port.ts';
import type { Catalogue } from './catalogue.ts';
import { notifyAccountChanged } from './account-changes.ts';
import { honoursFixedRate } from './slippage.ts';
import { ensureUserLedgerAccount, hold, LedgerError, post, release, SYSTEM_ACCOUNTS, systemAccountId, type Posting, type Queryable } from './ledger.ts';

/** SPEC §9: swap review validity. Fixed by the product, not configuration. */
export const SWAP_QUOTE_TTL_SECONDS = 300;

/** At most this many digits after the point in any amount a user sees or types (SPEC §5). */
const SHOWN_DECIMALS = 8;

/**
 * Default limits per source asset (by base currency, so USDT_TRX and USDT_ETH share one), in source units:
 * about 10 USD to 100 000 USD at the reference prices. SWAP_LIMITS overrides them per source or per pair.
 */
export const DEFAULT_SWAP_LIMITS: Readonly<Record<string, { min: string; max: string }>> = {
  BTC: { min: '0.0002', max: '1.5' },
  ETH: { min: '0.004', max: '30' },
  USDT: { min: '10', max: '100000' },
  USDC: { min: '10', max: '100000' },
  TRX: { min: '100', max: '800000' },
  LTC: { min: '0.15', max: '1300' },
  DOGE: { min: '70', max: '650000' },
  TON: { min: '2', max: '18000' },
};

export type SwapProblem =
  | 'UNSUPPORTED_PAIR'
  | 'AMOUNT_TOO_SMALL'
  | 'MIN_LIMIT'
  | 'MAX_LIMIT'
  | 'NOT_ENOUGH'
  | 'QUOTE_NOT_FOUND'
  | 'QUOTE_EXPIRED'
  | 'QUOTE_USED'
  | 'QUOTE_MISMATCH'
  | 'KEY_REUSED'
  | 'ORDER_NOT_FOUND'
  | 'ORDER_EXPIRED'
  | 'ORDER_CANCELLED'
  | 'ORDER_CLOSED'
  | 'NO_PRICE';

export class SwapError extends Error {
  readonly problem: SwapProblem;
  constructor(problem: SwapProblem, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.problem = problem;
  }
}

export type SwapPair = { sourceCurrency: string; destinationCurrency: string };
export type SwapLimit = { minLimit: bigint; maxLimit: bigint };

/** One computed quote in atomic units: the user pays `source`, gets `destination`; `fee` (destination units) is the spread. */
export type QuoteAmounts = { source: bigint; destination: bigint; fee: bigint; rate: string };

type Side = { price: bigint; decimals: number };

const pow10 = (n: number) => 10n ** BigInt(n);
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
/** Places an amount of a currency may have on screen: its decimals, at most 8. */
const placesOf = (decimals: number) => Math.min(decimals, SHOWN_DECIMALS);
const floorTo = (units: bigint, decimals: number) => {
  const step = pow10(decimals - placesOf(decimals));
  return (units / step) * step;
};
const ceilTo = (units: bigint, decimals: number) => {
  const step = pow10(decimals - placesOf(decimals));
  return ceilDiv(units, step) * step;
};

/** What `source` units buy before the spread, in destination units, rounded down (the custodian never pays more). */
function grossOf(source: bigint, from: Side, to: Side): bigint {
  return (source * from.price * pow10(to.decimals)) / (to.price * pow10(from.decimals));
}

/** Destination units per one source unit, to 8 decimals, rounded down. */
function rateOf(source: bigint, destination: bigint, from: Side, to: Side): string {
  const scaled = (destination * pow10(from.decimals) * pow10(PRICE_DECIMALS)) / (source * pow10(to.decimals));
  return formatUnits(scaled, PRICE_DECIMALS);
}

/** The user typed the source amount: the destination is what it buys less the spread, rounded down to 8 places. */
export function quoteBySource(source: bigint, from: Side, to: Side, spreadBps: number): QuoteAmounts {
  const gross = grossOf(source, from, to);
  const destination = floorTo((gross * BigInt(10_000 - spreadBps)) / 10_000n, to.decimals);
  if (source <= 0n || destination <= 0n) throw new SwapError('AMOUNT_TOO_SMALL', 'The amount is too small to swap');
  return { source, destination, fee: gross - destination, rate: rateOf(source, destination, from, to) };
}

/** The user typed the destination amount: the source is what buys it and the spread, rounded up; they get exactly it. */
export function quoteByDestination(destination: bigint, from: Side, to: Side, spreadBps: number): QuoteAmounts {
  if (destination <= 0n) throw new SwapError('AMOUNT_TOO_SMALL', 'The amount is too small to swap');
  const grossNeeded = ceilDiv(destination * 10_000n, BigInt(10_000 - spreadBps));
  const source = ceilTo(ceilDiv(grossNeeded * to.price * pow10(from.decimals), from.price * pow10(to.decimals)), from.decimals);
  const gross = grossOf(source, from, to);
  return { source, destination, fee: gross - destination, rate: rateOf(source, destination, from, to) };
}

/** An amount from the wire to units of a currency: at most 8 decimals, above zero. */
export function amountUnits(text: string, coin: CoinMeta): bigint {
  try {
    const units = parseDecimal(text, placesOf(coin.decimals));
    if (units <= 0n) throw new SwapError('AMOUNT_TOO_SMALL', 'The amount must be above 0');
    return units * pow10(coin.decimals - placesOf(coin.decimals));
  } catch (error) {
    if (error instanceof AmountError) throw new SwapError('AMOUNT_TOO_SMALL', `${coin.currency} amounts have at most ${placesOf(coin.decimals)} decimals`, { cause: error });
    throw error;
  }
}

export type SwapSettings = { spreadBps: number; limits: Readonly<Record<string, { min: string; max: string }>>; maxSlippageBps: number };

/**
 * Whether a quote (or the order that took it) may still be swapped at its amounts: what its source is worth now in
 * the destination, before the spread, against what it was worth when quoted (destination + spread). Without a
 * current price for either side it may not.
 */
export function quoteHolds(quoted: { source: bigint; destination: bigint; fee: bigint }, from: Side, to: Side, maxSlippageBps: number): boolean {
  if (from.price <= 0n || to.price <= 0n) return false;
  return honoursFixedRate(quoted.destination + quoted.fee, grossOf(quoted.source, from, to), maxSlippageBps);
}

const QUOTE_MOVED = 'The rate has moved since this quote: request a new one';
const ORDER_MOVED = 'The rate of this order has moved: update the rate and try again';

/** The limits of a pair in source units: SWAP_LIMITS for the pair, else for the source, else the default of its asset. */
export function limitOf(settings: Pick<SwapSettings, 'limits'>, from: CoinMeta, to: CoinMeta): SwapLimit | undefined {
  const chosen =
    settings.limits[`${from.currency}/${to.currency}`] ?? settings.limits[from.currency] ?? settings.limits[from.baseCurrency] ?? DEFAULT_SWAP_LIMITS[from.baseCurrency];
  if (!chosen) return undefined;
  const toUnits = (value: string) => parseDecimal(value, Math.max(from.decimals, 18)) / pow10(Math.max(from.decimals, 18) - from.decimals);
  return { minLimit: toUnits(chosen.min), maxLimit: toUnits(chosen.max) };
}

export type QuoteView = {
  quoteId: string;
  sourceCurrency: string;
  destinationCurrency: string;
  sourceAmount: string;
  destinationAmount: string;
  fee: string;
  feeCurrency: string;
  rate: string;
  expiresAt: string;
  expiresInSeconds: number;
};

export type OrderView = {
  id: string;
  sourceCurrency: string;
  destinationCurrency: string;
  sourceAmount: string;
  destinationAmount: string;
  fee: string;
  feeCurrency: string;
  rate: string;
  state: 'PENDING' | 'COMPLETED' | 'EXPIRED' | 'CANCELLED';
  createdDate: string;
  expiresAt: string;
  expiresInSeconds: number;
  transactionId: string | null;
};

type OrderRow = {
  id: string;
  wallet_account_id: string;
  quote_id: string;
  idempotency_key: string;
  state: OrderView['state'];
  source_currency: string;
  destination_currency: string;
  source_amount: string;
  destination_amount: string;
  fee_amount: string;
  rate: string;
  wallet_transaction_id: string | null;
  created_at: Date;
  expires_at: Date;
  expires_in: number;
  expired: boolean;
};

const ORDER_COLUMNS = `id, wallet_account_id, quote_id, idempotency_key, state, source_currency, destination_currency, source_amount,
  destination_amount, fee_amount, rate, wallet_transaction_id, created_at, expires_at,
  greatest(0, ceil(extract(epoch FROM expires_at - now())))::int AS expires_in, expires_at <= now() AS expired`;

export type SwapService = ReturnType<typeof createSwapService>;

export function createSwapService(deps: { pool: pg.Pool; catalogue: Catalogue; rates: RatesPort; settings: SwapSettings }) {
  const { pool, catalogue, rates, settings } = deps;
  const coins = new Map(catalogue.coins.map((coin) => [coin.currency, coin]));

  const coinOf = (currency: string): CoinMeta => {
    const coin = coins.get(currency);
    if (!coin || !coin.active) throw new SwapError('UNSUPPORTED_PAIR', `${currency} is not a currency this wallet swaps`);
    return coin;
  };

  /**
   * SPEC §7 currency-pair: every ordered pair of distinct active coins the price source prices and the limits
   * cover, except into Lightning (BTC_LNG, outside production only): its balance is paid out, never bought.
   */
  const supported = (from: CoinMeta, to: CoinMeta, usd: Readonly<Record<string, bigint>>) =>
    from.currency !== to.currency &&
    to.currency !== 'BTC_LNG' &&
    (usd[from.baseCurrency] ?? 0n) > 0n &&
    (usd[to.baseCurrency] ?? 0n) > 0n &&
    limitOf(settings, from, to) !== undefined;

  async function pairs(): Promise<SwapPair[]> {
    const { usd } = await rates.prices();
    const active = catalogue.coins.filter((coin) => coin.active);
    return active.flatMap((from) => active.filter((to) => supported(from, to, usd)).map((to) => ({ sourceCurrency: from.currency, destinationCurrency: to.currency })));
  }

  async function pair(sourceCurrency: string, destinationCurrency: string) {
    const from = coinOf(sourceCurrency);
    const to = coinOf(destinationCurrency);
    const { usd } = await rates.prices();
    if (!supported(from, to, usd)) throw new SwapError('UNSUPPORTED_PAIR', `${sourceCurrency} cannot be swapped to ${destinationCurrency}`);
    const limit = limitOf(settings, from, to);
    if (!limit) throw new SwapError('UNSUPPORTED_PAIR', `${sourceCurrency} cannot be swapped to ${destinationCurrency}`);
    return { from, to, limit, usd };
  }

  /** quoteHolds for a stored quote or order, at the current prices; a currency no longer in the catalogue fails it. */
  const holds = (
    row: { source_currency: string; destination_currency: string; source_amount: string; destination_amount: string; fee_amount: string },
    usd: Readonly<Record<string, bigint>>,
  ): boolean => {
    const from = coins.get(row.source_currency);
    const to = coins.get(row.destination_currency);
    if (!from || !to) return false;
    return quoteHolds(
      { source: BigInt(row.source_amount), destination: BigInt(row.destination_amount), fee: BigInt(row.fee_amount) },
      { price: usd[from.baseCurrency] ?? 0n, decimals: from.decimals },
      { price: usd[to.baseCurrency] ?? 0n, decimals: to.decimals },
      settings.maxSlippageBps,
    );
  };

  async function limit(sourceCurrency: string, destinationCurrency: string): Promise<{ minLimit: string; maxLimit: string; currency: string }> {
    const { from, limit: l } = await pair(sourceCurrency, destinationCurrency);
    return { minLimit: formatUnits(l.minLimit, from.decimals), maxLimit: formatUnits(l.maxLimit, from.decimals), currency: from.currency };
  }

  /** SPEC §7 exchange/pre-calculate: a quote by whichever side was typed, kept for 300 s. Limits are not applied here. */
  async function preCalculate(
    account: string,
    input: { sourceCurrency: string; destinationCurrency: string; sourceAmount?: string | undefined; destinationAmount?: string | undefined },
  ): Promise<QuoteView> {
    const { from, to, usd } = await pair(input.sourceCurrency, input.destinationCurrency);
    const sides = { from: { price: usd[from.baseCurrency] ?? 0n, decimals: from.decimals }, to: { price: usd[to.baseCurrency] ?? 0n, decimals: to.decimals } };
    const bySource = input.sourceAmount !== undefined;
    const amounts = bySource
      ? quoteBySource(amountUnits(input.sourceAmount ?? '', from), sides.from, sides.to, settings.spreadBps)
      : quoteByDestination(amountUnits(input.destinationAmount ?? '', to), sides.from, sides.to, settings.spreadBps);
    const saved = await pool.query<{ id: string; expires_at: Date; expires_in: number }>(
      `INSERT INTO swap_quotes (wallet_account_id, source_currency, destination_currency, source_amount, destination_amount, fee_amount,
                                spread_bps, rate, fixed_side, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + make_interval(secs => $10))
       RETURNING id, expires_at, greatest(0, ceil(extract(epoch FROM expires_at - now())))::int AS expires_in`,
      [
        account,
        from.currency,
        to.currency,
        amounts.source.toString(),
        amounts.destination.toString(),
        amounts.fee.toString(),
        settings.spreadBps,
        amounts.rate,
        bySource ? 'SOURCE' : 'DESTINATION',
        SWAP_QUOTE_TTL_SECONDS,
      ],
    );
    const row = saved.rows[0];
    if (!row) throw new Error('the quote was not saved');
    return {
      quoteId: row.id,
      sourceCurrency: from.currency,
      destinationCurrency: to.currency,
      sourceAmount: formatUnits(amounts.source, from.decimals),
      destinationAmount: formatUnits(amounts.destination, to.decimals),
      fee: formatUnits(amounts.fee, to.decimals),
      feeCurrency: to.currency,
      rate: amounts.rate,
      expiresAt: row.expires_at.toISOString(),
      expiresInSeconds: row.expires_in,
    };
  }

  /**
   * SPEC §7 POST exchange: accepts a live quote for this account (and its source amount, as a check), enforces the
   * pair's limits, holds the source amount and shows a Swapping item in the history. Once per idempotency key: the
   * same key and request give the same order, the same key with another request is KEY_REUSED.
   */
  async function createOrder(
    account: string,
    input: { quoteId: string; sourceAmount: string; idempotencyKey: string; sourceCurrency?: string | undefined; destinationCurrency?: string | undefined },
  ): Promise<OrderView> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const existing = await findByKey(client, account, input.idempotencyKey);
      if (existing) {
        await client.query('COMMIT');
        return sameRequest(existing, input);
      }
      const quoted = await client.query<{
        source_currency: string;
        destination_currency: string;
        source_amount: string;
        destination_amount: string;
        fee_amount: string;
        rate: string;
        live: boolean;
      }>(
        `SELECT source_currency, destination_currency, source_amount, destination_amount, fee_amount, rate, expires_at > now() AS live
           FROM swap_quotes WHERE id = $1 AND wallet_account_id = $2 FOR UPDATE`,
        [input.quoteId, account],
      );
      const quote = quoted.rows[0];
      if (!quote) throw new SwapError('QUOTE_NOT_FOUND', 'No such quote for this account');
      if (!quote.live) throw new SwapError('QUOTE_EXPIRED', 'The quote has expired: request a new one');
      if ((input.sourceCurrency ?? quote.source_currency) !== quote.source_currency || (input.destinationCurrency ?? quote.destination_currency) !== quote.destination_currency) {
        throw new SwapError('QUOTE_MISMATCH', 'The currencies differ from the quote');
      }
      const { from, to, limit: l, usd } = await pair(quote.source_currency, quote.destination_currency);
      const source = BigInt(quote.source_amount);
      if (amountUnits(input.sourceAmount, from) !== source) throw new SwapError('QUOTE_MISMATCH', 'sourceAmount differs from the quote');
      if (source < l.minLimit) throw new SwapError('MIN_LIMIT', `Min amount limit is: ${formatUnits(l.minLimit, from.decimals)} ${from.currency}`);
      if (source > l.maxLimit) throw new SwapError('MAX_LIMIT', `Max amount limit is: ${formatUnits(l.maxLimit, from.decimals)} ${from.currency}`);
      if (!holds(quote, usd)) throw new SwapError('QUOTE_EXPIRED', QUOTE_MOVED);

      const inserted = await client.query<OrderRow>(
        `INSERT INTO swap_orders (wallet_account_id, quote_id, idempotency_key, state, source_currency, destination_currency, source_amount,
                                  destination_amount, fee_amount, rate, expires_at)
         SELECT $1, id, $3, 'PENDING', source_currency, destination_currency, source_amount, destination_amount, fee_amount, rate, expires_at
           FROM swap_quotes WHERE id = $2
         ON CONFLICT DO NOTHING
         RETURNING ${ORDER_COLUMNS}`,
        [account, input.quoteId, input.idempotencyKey],
      );
      const order = inserted.rows[0];
      if (!order) {
        // Either the key (another request with it committed meanwhile) or the quote (taken by another order).
        await client.query('ROLLBACK');
        const raced = await findByKey(client, account, input.idempotencyKey);
        if (raced) return sameRequest(raced, input);
        throw new SwapError('QUOTE_USED', 'This quote was already accepted by another order');
      }
      await ensureUserLedgerAccount(client, account);
      try {
        await hold(client, { key: `swap:hold:${order.id}`, kind: 'SWAP_HOLD', reference: `swap:${order.id}`, account, currency: from.currency, amount: source });
      } catch (error) {
        if (error instanceof LedgerError && error.problem === 'INSUFFICIENT_FUNDS') throw new SwapError('NOT_ENOUGH', 'Not enough funds', { cause: error });
        throw error;
      }
      const shown = await client.query<{ id: string }>(
        `INSERT INTO wallet_transactions (wallet_account_id, transaction_type, direction, state, currency, amount, fee, fee_currency,
                                          account_from_type, account_to_type, from_currency, to_currency, from_amount, to_amount, exchange_rate, reference)
         VALUES ($1, 'EXCHANGE', 'WITHDRAWAL', 'IN_PROGRESS', $2, $3, $4, $5, 'B2C', 'B2C', $2, $5, $3, $6, $7, $8) RETURNING id`,
        [account, from.currency, order.source_amount, order.fee_amount, to.currency, order.destination_amount, order.rate, `swap:${order.id}`],
      );
      const transactionId = shown.rows[0]?.id ?? null;
      await client.query('UPDATE swap_orders SET wallet_transaction_id = $2 WHERE id = $1', [order.id, transactionId]);
      await notifyAccountChanged(client, account);
      await client.query('COMMIT');
      return view({ ...order, wallet_transaction_id: transactionId });
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * SPEC §7 exchange/confirm: exchanges once whatever runs at once. The order row is locked: a second confirm
   * waits, then finds it COMPLETED and answers the same. An expired order is closed (hold released) and refused, and
   * so is one whose rate the market has since moved against the desk beyond the slippage (this is where money moves).
   */
  async function confirm(account: string, orderId: string): Promise<OrderView> {
    const { usd } = await rates.prices();
    const client = await pool.connect();
    let refusal: SwapError | undefined;
    try {
      await client.query('BEGIN');
      const locked = await client.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM swap_orders WHERE id = $1 AND wallet_account_id = $2 FOR UPDATE`, [orderId, account]);
      const order = locked.rows[0];
      if (!order) throw new SwapError('ORDER_NOT_FOUND', 'No such swap order in this account');
      if (order.state === 'COMPLETED') {
        await client.query('COMMIT');
        return view(order);
      }
      if (order.state === 'PENDING' && order.expired) {
        await close(client, order, 'EXPIRED');
        refusal = new SwapError('ORDER_EXPIRED', 'The rate of this order has expired: update the rate and try again');
      } else if (order.state === 'EXPIRED') {
        refusal = new SwapError('ORDER_EXPIRED', 'The rate of this order has expired: update the rate and try again');
      } else if (order.state === 'CANCELLED') {
        refusal = new SwapError('ORDER_CANCELLED', 'This swap order was cancelled');
      } else if (!holds(order, usd)) {
        await close(client, order, 'EXPIRED', 'The rate moved before the swap was confirmed');
        refusal = new SwapError('ORDER_EXPIRED', ORDER_MOVED);
      } else {
        await settleOrder(client, order);
      }
      await client.query('COMMIT');
      if (refusal) throw refusal;
      return view({ ...order, state: 'COMPLETED' });
    } catch (error) {
      if (error !== refusal) await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** Gives a pending order up (the review's 'Update rate', leaving it): releases its hold. Idempotent. */
  async function cancel(account: string, orderId: string): Promise<OrderView> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const locked = await client.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM swap_orders WHERE id = $1 AND wallet_account_id = $2 FOR UPDATE`, [orderId, account]);
      const order = locked.rows[0];
      if (!order) throw new SwapError('ORDER_NOT_FOUND', 'No such swap order in this account');
      if (order.state === 'COMPLETED') throw new SwapError('ORDER_CLOSED', 'This swap is already done');
      let state = order.state;
      if (state === 'PENDING') {
        state = order.expired ? 'EXPIRED' : 'CANCELLED';
        await close(client, order, state);
      }
      await client.query('COMMIT');
      return view({ ...order, state });
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async function order(account: string, orderId: string): Promise<OrderView> {
    const found = await pool.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM swap_orders WHERE id = $1 AND wallet_account_id = $2`, [orderId, account]);
    const row = found.rows[0];
    if (!row) throw new SwapError('ORDER_NOT_FOUND', 'No such swap order in this account');
    return view(row);
  }

  return { pairs, limit, preCalculate, createOrder, confirm, cancel, order };
}

/**
 * The worker's job: closes pending orders whose quote has run out (the user left the review), releasing their
 * holds; then forgets quotes no order took, a day after they expired. Rows another process holds are skipped.
 */
export async function expireSwapOrders(pool: pg.Pool, batch = 100): Promise<number> {
  let expired = 0;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const due = await client.query<OrderRow>(
      `SELECT ${ORDER_COLUMNS} FROM swap_orders WHERE state = 'PENDING' AND expires_at <= now()
        ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [batch],
    );
    for (const order of due.rows) {
      await close(client, order, 'EXPIRED');
      expired++;
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
  await pool.query(
    `DELETE FROM swap_quotes q WHERE q.expires_at < now() - interval '1 day' AND NOT EXISTS (SELECT 1 FROM swap_orders o WHERE o.quote_id = q.id)`,
  );
  return expired;
}

/** The one entry of a confirmed swap: source hold → liquidity, liquidity → user (destination), spread → fee income. */
async function settleOrder(db: Queryable, order: OrderRow): Promise<void> {
  const liquidity = systemAccountId(SYSTEM_ACCOUNTS.swapLiquidity());
  const source = BigInt(order.source_amount);
  const destination = BigInt(order.destination_amount);
  const fee = BigInt(order.fee_amount);
  const postings: Posting[] = [
    { account: order.wallet_account_id, currency: order.source_currency, bucket: 'ON_HOLD', amount: -source },
    { account: liquidity, currency: order.source_currency, bucket: 'AVAILABLE', amount: source },
    { account: liquidity, currency: order.destination_currency, bucket: 'AVAILABLE', amount: -(destination + fee) },
    { account: order.wallet_account_id, currency: order.destination_currency, bucket: 'AVAILABLE', amount: destination },
  ];
  if (fee > 0n) postings.push({ account: systemAccountId(SYSTEM_ACCOUNTS.feeIncome()), currency: order.destination_currency, bucket: 'AVAILABLE', amount: fee });
  await post(db, { key: `swap:confirm:${order.id}`, kind: 'SWAP', reference: `swap:${order.id}`, postings });
  await db.query(`UPDATE swap_orders SET state = 'COMPLETED', closed_at = now() WHERE id = $1`, [order.id]);
  await db.query(`UPDATE wallet_transactions SET state = 'COMPLETED', completed_at = now(), updated_at = now() WHERE reference = $1`, [`swap:${order.id}`]);
  // The destination shows in the account even if the user never added it (or hid it).
  await db.query(
    `INSERT INTO account_assets (wallet_account_id, currency) VALUES ($1, $2)
     ON CONFLICT (wallet_account_id, currency) DO UPDATE SET archived_at = NULL`,
    [order.wallet_account_id, order.destination_currency],
  );
  await notifyAccountChanged(db, order.wallet_account_id);
}

/**
 * Releases a pending order's hold. An expired one stays in the history as 'Failed to swap'; a cancelled one (the
 * user asked for a fresh rate) leaves no item: nothing happened to their money.
 */
async function close(db: Queryable, order: OrderRow, state: 'EXPIRED' | 'CANCELLED', reason = 'The rate expired before the swap was confirmed'): Promise<void> {
  await release(db, {
    key: `swap:release:${order.id}`,
    kind: 'SWAP_RELEASE',
    reference: `swap:${order.id}`,
    account: order.wallet_account_id,
    currency: order.source_currency,
    amount: BigInt(order.source_amount),
  });
  await db.query(`UPDATE swap_orders SET state = $2, closed_at = now() WHERE id = $1`, [order.id, state]);
  if (state === 'EXPIRED') {
    await db.query(
      `UPDATE wallet_transactions SET state = 'FAILED', failure_reason = $2, updated_at = now() WHERE reference = $1`,
      [`swap:${order.id}`, reason],
    );
  } else {
    await db.query('UPDATE swap_orders SET wallet_transaction_id = NULL WHERE id = $1', [order.id]);
    await db.query('DELETE FROM wallet_transactions WHERE reference = $1', [`swap:${order.id}`]);
  }
  await notifyAccountChanged(db, order.wallet_account_id);
}

async function findByKey(db: Queryable, account: string, key: string): Promise<OrderRow | undefined> {
  const found = await db.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM swap_orders WHERE wallet_account_id = $1 AND idempotency_key = $2`, [account, key]);
  return found.rows[0];
}

function sameRequest(order: OrderRow, input: { quoteId: string; sourceAmount: string }): OrderView {
  const shown = view(order);
  const sameAmount = (() => {
    try {
      return parseDecimal(input.sourceAmount, 18) === parseDecimal(shown.sourceAmount, 18);
    } catch {
      return false;
    }
  })();
  if (order.quote_id !== input.quoteId || !sameAmount) throw new SwapError('KEY_REUSED', 'This idempotency key was used for another swap order');
  return shown;
}

function view(order: OrderRow): OrderView {
  const decimals = (currency: string) => decimalsFor(currency);
  return {
    id: order.id,
    sourceCurrency: order.source_currency,
    destinationCurrency: order.destination_currency,
    sourceAmount: formatUnits(BigInt(order.source_amount), decimals(order.source_currency)),
    destinationAmount: formatUnits(BigInt(order.destination_amount), decimals(order.destination_currency)),
    fee: formatUnits(BigInt(order.fee_amount), decimals(order.destination_currency)),
    feeCurrency: order.destination_currency,
    rate: order.rate,
    state: order.state,
    createdDate: order.created_at.toISOString(),
    expiresAt: order.expires_at.toISOString(),
    expiresInSeconds: order.state === 'PENDING' ? order.expires_in : 0,
    transactionId: order.wallet_transaction_id,
  };
}

function decimalsFor(currency: string): number {
  const decimals = decimalsOf(currency);
  if (decimals === undefined) throw new Error(`unknown currency ${currency}`);
  return decimals;
}
