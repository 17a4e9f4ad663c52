/**
 * Swap requests (SPEC §7 Swap): pairs, limits, quotes kept for 300 s, an order that accepts a quote once per
 * idempotency key (the review: no hold, no history item, nothing the user did yet), its confirmation inside the
 * quote's life (where the source is held and exchanged at once, settlement.ts) and its cancellation. Every time is
 * the database's (now()), so any number of processes agree on what has expired.
 */
import type pg from 'pg';
import { unitsFromRow } from '../../db/amounts.ts';
import { formatUnits, parseDecimal } from '../../../lib/amount.ts';
import { addUnits } from '../../../lib/money.ts';
import type { CoinMeta } from '../../../lib/currencies.ts';
import type { RatesPort } from '../../adapters/rates/port.ts';
import { selectColumns } from '../../db/columns.ts';
import { swapQuotes } from '../../db/schema/swaps.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { Catalogue } from '../catalogue.ts';
import { balancesOf } from '../ledger.ts';
import { oncePerKey, requestHash } from '../orders/idempotency.ts';
import { amountUnits, limitOf, ORDER_MOVED, QUOTE_MOVED, quoteByDestination, quoteBySource, quoteHolds, SWAP_QUOTE_TTL_SECONDS, SwapError, type SourceUnits, type SwapPair, type SwapSettings } from './rules.ts';
import { closeSwap, holdAndSettleSwap } from './settlement.ts';
import { quotePrices, requireUsd } from '../rates.ts';
import { refuseBeyondInventory } from '../market/desk.ts';
import { findSwapOrder, findSwapOrderByKey, orderView, type SwapOrderView, type QuoteView, type SwapOrderRow } from './view.ts';

export type SwapService = ReturnType<typeof createSwapService>;

type Amounts = Pick<typeof swapQuotes.$inferSelect, 'sourceCurrency' | 'destinationCurrency' | 'sourceAmount' | 'destinationAmount' | 'feeAmount'>;
const QUOTE_FIELDS = ['sourceCurrency', 'destinationCurrency', 'sourceAmount', 'destinationAmount', 'feeAmount', 'rate'] as const;

/** A decimal in one spelling ('1.50' and '1.5' are one amount), for the request hash; a malformed one stays as typed. */
function sameDecimal(text: string): string {
  try {
    return parseDecimal(text, 18).toString();
  } catch {
    return text;
  }
}

/** `quoteLimit` counts each quote against the user's allowance and refuses one over it (domain/limits.ts quotesPerUser). */
export function createSwapService(deps: { pool: pg.Pool; catalogue: Catalogue; rates: RatesPort; settings: SwapSettings; quoteLimit?: (account: string) => Promise<void> }) {
  const { pool, catalogue, rates, settings } = deps;
  const coins = new Map(catalogue.coins.map((coin) => [coin.currency, coin]));

  const coinOf = (currency: string): CoinMeta => {
    const coin = coins.get(currency);
    if (!coin || !coin.active) throw new SwapError('SWAP_UNSUPPORTED_PAIR', `${currency} is not a currency this wallet swaps`);
    return coin;
  };

  /**
   * SPEC §7 currency-pair: every ordered pair of distinct active coins the limits cover, except into Lightning
   * (BTC_LNG, outside production only): its balance is paid out, never bought. A pair whose price is missing for
   * now stays listed: its quote says why it cannot be swapped right now (PRICE_UNAVAILABLE).
   */
  const supported = (from: CoinMeta, to: CoinMeta) => from.currency !== to.currency && to.currency !== 'BTC_LNG' && limitOf(settings, from, to) !== undefined;

  async function pairs(): Promise<SwapPair[]> {
    const active = catalogue.coins.filter((coin) => coin.active);
    return active.flatMap((from) => active.filter((to) => supported(from, to)).map((to) => ({ sourceCurrency: from.currency, destinationCurrency: to.currency })));
  }

  /** A supported pair and its limits (they need no price). */
  function supportedPair(sourceCurrency: string, destinationCurrency: string) {
    const from = coinOf(sourceCurrency);
    const to = coinOf(destinationCurrency);
    const limit = supported(from, to) ? limitOf(settings, from, to) : undefined;
    if (!limit) throw new SwapError('SWAP_UNSUPPORTED_PAIR', `${sourceCurrency} cannot be swapped to ${destinationCurrency}`);
    return { from, to, limit };
  }

  /** A supported pair with both prices current now (no price, no quote), and the table they come from. */
  async function pair(sourceCurrency: string, destinationCurrency: string) {
    const { from, to, limit } = supportedPair(sourceCurrency, destinationCurrency);
    const table = await rates.prices();
    requireUsd(table, from.baseCurrency);
    requireUsd(table, to.baseCurrency);
    return { from, to, limit, usd: table.usd, table };
  }

  /** quoteHolds for a stored quote or order, at the current prices; a currency no longer in the catalogue fails it. */
  const holds = (row: Amounts, usd: Readonly<Record<string, bigint>>): boolean => {
    const from = coins.get(row.sourceCurrency);
    const to = coins.get(row.destinationCurrency);
    if (!from || !to) return false;
    return quoteHolds(
      {
        source: unitsFromRow<'source'>(row.sourceAmount, 'sourceAmount'),
        destination: unitsFromRow<'destination'>(row.destinationAmount, 'destinationAmount'),
        fee: unitsFromRow<'destination'>(row.feeAmount, 'feeAmount'),
      },
      { price: usd[from.baseCurrency] ?? 0n, decimals: from.decimals },
      { price: usd[to.baseCurrency] ?? 0n, decimals: to.decimals },
      settings.maxSlippageBps,
    );
  };

  async function limit(sourceCurrency: string, destinationCurrency: string): Promise<{ minLimit: string; maxLimit: string; currency: string }> {
    const { from, limit: l } = supportedPair(sourceCurrency, destinationCurrency);
    return { minLimit: formatUnits(l.minLimit, from.decimals), maxLimit: formatUnits(l.maxLimit, from.decimals), currency: from.currency };
  }

  /** SPEC §7 exchange/pre-calculate: a quote by whichever side was typed, kept for 300 s. Limits are not applied here. */
  async function preCalculate(
    account: string,
    input: { sourceCurrency: string; destinationCurrency: string; sourceAmount?: string | undefined; destinationAmount?: string | undefined },
  ): Promise<QuoteView> {
    const { from, to, usd, table } = await pair(input.sourceCurrency, input.destinationCurrency);
    const sides = { from: { price: usd[from.baseCurrency] ?? 0n, decimals: from.decimals }, to: { price: usd[to.baseCurrency] ?? 0n, decimals: to.decimals } };
    const bySource = input.sourceAmount !== undefined;
    const amounts = bySource
      ? quoteBySource(amountUnits<'source'>(input.sourceAmount ?? '', from), sides.from, sides.to, settings.spreadBps)
      : quoteByDestination(amountUnits<'destination'>(input.destinationAmount ?? '', to), sides.from, sides.to, settings.spreadBps);
    // The desk pays the destination and the spread: a quote it could not fill now is no quote.
    await refuseBeyondInventory(pool, to.currency, addUnits(amounts.destination, amounts.fee), settings.inventoryLimits);
    // Counted once it is a quote to keep: a malformed amount or a missing price costs nothing of the allowance.
    await deps.quoteLimit?.(account);
    const saved = await pool.query<Pick<typeof swapQuotes.$inferSelect, 'id' | 'expiresAt'> & { expiresIn: number }>(
      `INSERT INTO swap_quotes (wallet_account_id, source_currency, destination_currency, source_amount, destination_amount, fee_amount,
                                spread_bps, rate, fixed_side, prices, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + make_interval(secs => $11))
       RETURNING id, expires_at AS "expiresAt", greatest(0, ceil(extract(epoch FROM expires_at - now())))::int AS "expiresIn"`,
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
        quotePrices(table, [from.baseCurrency, to.baseCurrency]),
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
      expiresAt: row.expiresAt.toISOString(),
      expiresInSeconds: row.expiresIn,
    };
  }

  /**
   * SPEC §7 POST exchange: accepts a live quote for this account (and its source amount, as a check), enforces the
   * pair's limits and the balance as it is now; once per idempotency key. It writes no money state: nothing is held
   * and nothing shows in the history until the user confirms (an abandoned review leaves no trace but the row).
   */
  async function createOrder(
    account: string,
    input: { quoteId: string; sourceAmount: string; idempotencyKey: string; sourceCurrency?: string | undefined; destinationCurrency?: string | undefined },
  ): Promise<SwapOrderView> {
    const request = { scope: 'swap', account, key: input.idempotencyKey, hash: requestHash({ quoteId: input.quoteId, sourceAmount: sameDecimal(input.sourceAmount) }) };
    return oncePerKey(pool, request, {
      find: (db) => findSwapOrderByKey(db, account, input.idempotencyKey),
      // Rows from before request hashes: the same quote and source amount.
      sameAsLegacy: (row: SwapOrderRow) => row.quoteId === input.quoteId && sameDecimal(input.sourceAmount) === sameDecimal(orderView(row).sourceAmount),
      replay: (row) => orderView(row),
      create: async (db) => {
        const quoted = await db.query<Amounts & { rate: string; live: boolean }>(
          `SELECT ${selectColumns(swapQuotes, 'q', QUOTE_FIELDS)}, q.expires_at > now() AS live FROM swap_quotes q WHERE q.id = $1 AND q.wallet_account_id = $2 FOR UPDATE`,
          [input.quoteId, account],
        );
        const quote = quoted.rows[0];
        if (!quote) throw new SwapError('SWAP_QUOTE_NOT_FOUND', 'No such quote for this account');
        if (!quote.live) throw new SwapError('SWAP_QUOTE_EXPIRED', 'The quote has expired: request a new one');
        if ((input.sourceCurrency ?? quote.sourceCurrency) !== quote.sourceCurrency || (input.destinationCurrency ?? quote.destinationCurrency) !== quote.destinationCurrency) {
          throw new SwapError('SWAP_QUOTE_MISMATCH', 'The currencies differ from the quote');
        }
        const { from, limit: l, usd } = await pair(quote.sourceCurrency, quote.destinationCurrency);
        const source = unitsFromRow<'source'>(quote.sourceAmount, 'sourceAmount');
        if (amountUnits<'source'>(input.sourceAmount, from) !== source) throw new SwapError('SWAP_QUOTE_MISMATCH', 'sourceAmount differs from the quote');
        const limitError = (code: 'SWAP_MIN_LIMIT' | 'SWAP_MAX_LIMIT', units: SourceUnits) => {
          const amount = formatUnits(units, from.decimals);
          return new SwapError(code, `${code === 'SWAP_MIN_LIMIT' ? 'Min' : 'Max'} amount limit is: ${amount} ${from.currency}`, { details: { amount, currency: from.currency } });
        };
        if (source < l.minLimit) throw limitError('SWAP_MIN_LIMIT', l.minLimit);
        if (source > l.maxLimit) throw limitError('SWAP_MAX_LIMIT', l.maxLimit);
        if (!holds(quote, usd)) throw new SwapError('SWAP_QUOTE_EXPIRED', QUOTE_MOVED);

        // Not a hold: the review shows what the balance allows now; the confirmation holds and exchanges at once.
        const available = (await balancesOf(db, account)).find((b) => b.currency === from.currency)?.available ?? 0n;
        if (available < source) throw new SwapError('SWAP_NOT_ENOUGH', 'Not enough funds');

        // The key is this request's (claimed above): a conflict here is the quote, taken by another order.
        const inserted = await db.query<{ id: string }>(
          `INSERT INTO swap_orders (wallet_account_id, quote_id, idempotency_key, request_hash, state, source_currency, destination_currency, source_amount,
                                    destination_amount, fee_amount, rate, expires_at)
           SELECT $1, id, $3, $4, 'PENDING', source_currency, destination_currency, source_amount, destination_amount, fee_amount, rate, expires_at
             FROM swap_quotes WHERE id = $2
           ON CONFLICT DO NOTHING RETURNING id`,
          [account, input.quoteId, input.idempotencyKey, request.hash],
        );
        const id = inserted.rows[0]?.id;
        if (!id) throw new SwapError('SWAP_QUOTE_USED', 'This quote was already accepted by another order');
        const created = await findSwapOrder(db, account, id);
        if (!created) throw new Error('the swap order vanished in its own transaction');
        return orderView(created);
      },
    });
  }

  /**
   * SPEC §7 exchange/confirm: exchanges once whatever runs at once. The order row is locked: a second confirm
   * waits, then finds it COMPLETED and answers the same. An expired order is closed and refused, and so is one whose
   * rate the market has since moved against the desk beyond the slippage. This is where money moves: the source is
   * held, exchanged and the history item written in one transaction (a short balance is SWAP_NOT_ENOUGH, nothing moved).
   */
  async function confirm(account: string, orderId: string): Promise<SwapOrderView> {
    const table = await rates.prices();
    const usd = table.usd;
    // A refusal that closed the order commits the closing, then is thrown.
    const outcome = await inTransaction(pool, async (db): Promise<SwapOrderView | SwapError> => {
      const order = await findSwapOrder(db, account, orderId, true);
      if (!order) throw new SwapError('SWAP_ORDER_NOT_FOUND', 'No such swap order in this account');
      const expired = () => new SwapError('SWAP_ORDER_EXPIRED', 'The rate of this order has expired: update the rate and try again');
      if (order.state === 'COMPLETED') return orderView(order);
      if (order.state === 'EXPIRED') return expired();
      if (order.state === 'CANCELLED') return new SwapError('SWAP_ORDER_CANCELLED', 'This swap order was cancelled');
      if (order.expired) {
        await closeSwap(db, order, 'EXPIRED');
        return expired();
      }
      // No current price: nothing is exchanged now; the order stays open until it expires or prices return.
      const from = coins.get(order.sourceCurrency);
      const to = coins.get(order.destinationCurrency);
      if (from) requireUsd(table, from.baseCurrency);
      if (to) requireUsd(table, to.baseCurrency);
      if (!holds(order, usd)) {
        await closeSwap(db, order, 'EXPIRED', 'The rate moved before the swap was confirmed');
        return new SwapError('SWAP_ORDER_EXPIRED', ORDER_MOVED);
      }
      const shown = await holdAndSettleSwap(db, order, settings.inventoryLimits);
      return orderView({ ...order, state: 'COMPLETED', walletTransactionId: shown });
    });
    if (outcome instanceof SwapError) throw outcome;
    return outcome;
  }

  /** Gives a pending order up (the review's 'Update rate', leaving it); an order from before confirm-time holds gets its hold back. Idempotent. */
  async function cancel(account: string, orderId: string): Promise<SwapOrderView> {
    return inTransaction(pool, async (db) => {
      const order = await findSwapOrder(db, account, orderId, true);
      if (!order) throw new SwapError('SWAP_ORDER_NOT_FOUND', 'No such swap order in this account');
      if (order.state === 'COMPLETED') throw new SwapError('SWAP_ORDER_CLOSED', 'This swap is already done');
      if (order.state !== 'PENDING') return orderView(order);
      const state = order.expired ? 'EXPIRED' : 'CANCELLED';
      await closeSwap(db, order, state);
      return orderView({ ...order, state });
    });
  }

  async function order(account: string, orderId: string): Promise<SwapOrderView> {
    const row = await findSwapOrder(pool, account, orderId);
    if (!row) throw new SwapError('SWAP_ORDER_NOT_FOUND', 'No such swap order in this account');
    return orderView(row);
  }

  return { pairs, limit, preCalculate, createOrder, confirm, cancel, order };
}
