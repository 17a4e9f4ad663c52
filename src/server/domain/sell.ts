/**
 * Selling crypto to a bank card in RUB (SPEC §2 Sell, §3, §5, §7). An order holds the crypto at once (one ledger
 * entry), is handed to the payout provider, and the provider's signed report either moves the held crypto to the
 * payout settlement account (paid) or gives it back (failed): each step one ledger entry under its own key, so it
 * happens once whoever delivers the report and however often. The full card number only passes through on its way
 * to the provider's tokeniser: what is kept is the token, the masked number and the bank.
 * A fixed rate is no free option (issue 14 item 11): an order takes it only while the coin's RUB price has not fallen
 * by more than SELL_MAX_SLIPPAGE_BPS since; otherwise the rate counts as expired.
 */
import type pg from 'pg';
import { createHash } from 'node:crypto';
import { formatUnits, parseDecimal } from '../../lib/amount.ts';
import { decimalsOf, type CoinMeta } from '../../lib/currencies.ts';
import { ALERT_AFTER_ATTEMPTS, type Logger } from '../log.ts';
import type { RatesPort } from '../adapters/rates/port.ts';
import { PayoutUnavailableError, type CardInfo, type PayoutProvider, type PayoutReport } from '../adapters/payout/port.ts';
import { notifyAccountChanged } from './account-changes.ts';
import { ensureUserLedgerAccount, hold, LedgerError, release, settle, SYSTEM_ACCOUNTS, systemAccountId } from './ledger.ts';
import { priceIn } from './rates.ts';
import { honoursFixedRate } from './slippage.ts';

export const SELL_FIAT = 'RUB';
/** SPEC §5: only this bank's cards take RUB payouts. */
export const SELL_BANK_CODE = 'SBR';
const FIAT_DECIMALS = 2;
const QUOTE_SWEEP_MS = 10 * 60_000;

export const ONLY_SBER_MESSAGE = "RUB payouts are available only to one specific domestic bank's cards. Please provide a different card.";
export const PAYOUTS_UNAVAILABLE_MESSAGE = 'Payouts are temporarily unavailable. Please try again later.';
export const SELLING_OFF_MESSAGE = 'Selling to a card is not available on this wallet.';

export type SellProblem =
  | 'UNSUPPORTED_FIAT'
  | 'UNKNOWN_CURRENCY'
  | 'BIN_NOT_FOUND'
  | 'ONLY_SBER'
  | 'RATE_NOT_FOUND'
  | 'RATE_EXPIRED'
  | 'LIMIT'
  | 'AMOUNT_TOO_SMALL'
  | 'NOT_ENOUGH_FUNDS'
  | 'CARD_NOT_FOUND'
  | 'ORDER_NOT_FOUND'
  | 'KEY_REUSED'
  | 'UNAVAILABLE';

export class SellError extends Error {
  readonly problem: SellProblem;
  constructor(problem: SellProblem, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.problem = problem;
  }
}

export type SellSettings = { minRub: string; maxRub: string; spreadBps: number; rateTtlS: number; maxSlippageBps: number };
export const DEFAULT_SELL_SETTINGS: SellSettings = { minRub: '1000', maxRub: '300000', spreadBps: 150, rateTtlS: 300, maxSlippageBps: 100 };

export type SellLimits = { minLimit: string; maxLimit: string; limitCurrency: string };
export type SellQuote = { rate: string; rateId: string; currency: string; fiatCurrency: string; expiresAt: string };
export type SavedCard = { cardId: string; mascCard: string; bankCode: string; bankSystem: string };
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

type OrderBase = { currency: string; fiatCurrency: string; fixedRateId: string; fiatAmount: string; idempotencyKey: string };
export type ByCardInput = OrderBase & { card: string; saveCard: boolean };
export type BySavedCardInput = OrderBase & { cardId: string };

type OrderRow = {
  id: string;
  wallet_account_id: string;
  request_hash: string;
  state: SellOrderView['state'];
  currency: string;
  amount: string;
  fiat_currency: string;
  fiat_amount: string;
  rate: string;
  provider_token: string;
  masked_card: string;
  bank_code: string;
  saved_card_id: string | null;
  provider_payout_id: string | null;
  submit_attempts: number;
  failure_reason: string | null;
  wallet_transaction_id: string | null;
  created_at: Date;
  completed_at: Date | null;
};

/** The ledger keys of an order's three possible steps (also read by the audit). */
export const sellEntryKeys = (orderId: string) => ({ hold: `sell:hold:${orderId}`, settle: `sell:settle:${orderId}`, release: `sell:release:${orderId}` });

export type SellDesk = ReturnType<typeof createSellDesk>;

export function createSellDesk(deps: { pool: pg.Pool; rates: RatesPort; coins: () => readonly CoinMeta[]; provider: PayoutProvider | undefined; settings: SellSettings; log: Logger }) {
  const { pool, provider, settings, log } = deps;
  const minKopecks = parseDecimal(settings.minRub, FIAT_DECIMALS);
  const maxKopecks = parseDecimal(settings.maxRub, FIAT_DECIMALS);

  const checkFiat = (fiat: string) => {
    if (fiat !== SELL_FIAT) throw new SellError('UNSUPPORTED_FIAT', `Payouts are made in ${SELL_FIAT} only`);
  };
  // Without a payout provider (PAYOUT_PROVIDER=off, and production until a real one is configured) selling is off.
  const payoutsOn = (): PayoutProvider => {
    if (!provider) throw new SellError('UNAVAILABLE', SELLING_OFF_MESSAGE);
    return provider;
  };
  const coinOf = (currency: string): CoinMeta => {
    const coin = deps.coins().find((c) => c.currency === currency && c.active);
    if (!coin) throw new SellError('UNKNOWN_CURRENCY', `${currency} is not a currency this wallet offers`);
    return coin;
  };
  const unavailable = (error: unknown): never => {
    throw new SellError('UNAVAILABLE', PAYOUTS_UNAVAILABLE_MESSAGE, { cause: error });
  };

  async function lookupBin(bin: string): Promise<CardInfo> {
    const info = await payoutsOn().lookupBin(bin).catch(unavailable);
    if (!info) throw new SellError('BIN_NOT_FOUND', 'The bank of this card is unknown');
    return { code: info.code, system: info.system };
  }

  function limits(fiat: string): SellLimits {
    payoutsOn();
    checkFiat(fiat);
    return { minLimit: formatUnits(minKopecks, FIAT_DECIMALS), maxLimit: formatUnits(maxKopecks, FIAT_DECIMALS), limitCurrency: SELL_FIAT };
  }

  /** Fiat kopecks per one coin: the market price less the spread, rounded down to the kopeck. */
  async function currentRate(coin: CoinMeta): Promise<bigint> {
    const table = await deps.rates.prices().catch(unavailable);
    const price = priceIn(table, coin, SELL_FIAT);
    if (price === undefined || price <= 0n) throw new SellError('UNAVAILABLE', PAYOUTS_UNAVAILABLE_MESSAGE);
    // price has 8 decimals; kopecks have 2.
    return (price * BigInt(10_000 - settings.spreadBps)) / 10_000n / 10n ** 6n;
  }

  async function quote(account: string, fiat: string, currency: string): Promise<SellQuote> {
    payoutsOn();
    checkFiat(fiat);
    const coin = coinOf(currency);
    const rate = formatUnits(await currentRate(coin), FIAT_DECIMALS);
    const row = await pool.query<{ id: string; expires_at: Date }>(
      `INSERT INTO sell_rate_quotes (wallet_account_id, currency, fiat_currency, rate, expires_at)
       VALUES ($1, $2, $3, $4, now() + $5 * interval '1 second') RETURNING id, expires_at`,
      [account, currency, fiat, rate, settings.rateTtlS],
    );
    const stored = row.rows[0];
    if (!stored) throw new Error('the quote was not stored');
    return { rate, rateId: stored.id, currency, fiatCurrency: fiat, expiresAt: stored.expires_at.toISOString() };
  }

  async function savedCards(account: string, fiat: string): Promise<SavedCard[]> {
    payoutsOn();
    checkFiat(fiat);
    const rows = await pool.query<{ id: string; masked_card: string; bank_code: string; bank_system: string }>(
      'SELECT id, masked_card, bank_code, bank_system FROM sell_saved_cards WHERE wallet_account_id = $1 AND fiat_currency = $2 ORDER BY created_at DESC',
      [account, fiat],
    );
    return rows.rows.map((r) => ({ cardId: r.id, mascCard: r.masked_card, bankCode: r.bank_code, bankSystem: r.bank_system }));
  }

  async function existing(account: string, key: string, hash: string): Promise<SellOrderView | undefined> {
    const found = await pool.query<OrderRow>('SELECT * FROM sell_orders WHERE wallet_account_id = $1 AND idempotency_key = $2', [account, key]);
    const row = found.rows[0];
    if (!row) return undefined;
    if (row.request_hash !== hash) throw new SellError('KEY_REUSED', 'This idempotency key was used for another order');
    return view(row);
  }

  type Card = { token: string; masked: string; code: string; system: string; savedCardId: string | null; save: boolean };

  async function place(account: string, input: OrderBase, card: Card, hashParts: Record<string, unknown>): Promise<SellOrderView> {
    checkFiat(input.fiatCurrency);
    const hash = createHash('sha256')
      .update(JSON.stringify({ ...hashParts, currency: input.currency, fiatCurrency: input.fiatCurrency, rateId: input.fixedRateId, fiatAmount: input.fiatAmount }))
      .digest('hex');
    const replay = await existing(account, input.idempotencyKey, hash);
    if (replay) return replay;

    const coin = coinOf(input.currency);
    if (card.code !== SELL_BANK_CODE) throw new SellError('ONLY_SBER', ONLY_SBER_MESSAGE);
    let fiatKopecks: bigint;
    try {
      fiatKopecks = parseDecimal(input.fiatAmount, FIAT_DECIMALS);
    } catch (error) {
      throw new SellError('LIMIT', 'fiatAmount: a RUB amount has at most 2 decimals', { cause: error });
    }
    if (fiatKopecks < minKopecks || fiatKopecks > maxKopecks) {
      throw new SellError('LIMIT', `The amount must be between ${formatUnits(minKopecks, FIAT_DECIMALS)} and ${formatUnits(maxKopecks, FIAT_DECIMALS)} ${SELL_FIAT}`);
    }
    const quoted = await pool.query<{ rate: string; expired: boolean }>(
      `SELECT rate, expires_at <= now() AS expired FROM sell_rate_quotes WHERE id = $1 AND wallet_account_id = $2 AND currency = $3 AND fiat_currency = $4`,
      [input.fixedRateId, account, input.currency, input.fiatCurrency],
    );
    const fixed = quoted.rows[0];
    if (!fixed) throw new SellError('RATE_NOT_FOUND', 'No such rate for this account and currency: request a rate first');
    if (fixed.expired) throw new SellError('RATE_EXPIRED', 'The rate has expired. Please request a new one.');
    const rateKopecks = parseDecimal(fixed.rate, FIAT_DECIMALS);
    // The rate at which the desk would buy the coin now, the same spread off: fallen too far means the rate is stale.
    if (!honoursFixedRate(rateKopecks, await currentRate(coin), settings.maxSlippageBps)) {
      throw new SellError('RATE_EXPIRED', 'The rate has changed. Please request a new one.');
    }
    // The coins that buy this many kopecks at the fixed rate, rounded up to the coin's smallest unit.
    const scale = 10n ** BigInt(coin.decimals);
    const amount = (fiatKopecks * scale + rateKopecks - 1n) / rateKopecks;
    if (amount <= 0n) throw new SellError('AMOUNT_TOO_SMALL', 'The amount is too small');

    const client = await pool.connect();
    let order: OrderRow | undefined;
    try {
      await client.query('BEGIN');
      const inserted = await client.query<OrderRow>(
        `INSERT INTO sell_orders (wallet_account_id, idempotency_key, request_hash, currency, amount, fiat_currency, fiat_amount, rate, rate_id,
                                  provider_token, masked_card, bank_code, bank_system, saved_card_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
         ON CONFLICT (wallet_account_id, idempotency_key) DO NOTHING RETURNING *`,
        [
          account,
          input.idempotencyKey,
          hash,
          input.currency,
          amount.toString(),
          input.fiatCurrency,
          fiatKopecks.toString(),
          fixed.rate,
          input.fixedRateId,
          card.token,
          card.masked,
          card.code,
          card.system,
          card.savedCardId,
        ],
      );
      order = inserted.rows[0];
      if (!order) {
        // The same key, committed by a request that ran at the same time: its answer is ours.
        await client.query('ROLLBACK');
        const raced = await existing(account, input.idempotencyKey, hash);
        if (!raced) throw new Error('an order with this key vanished');
        return raced;
      }
      const user = await ensureUserLedgerAccount(client, account);
      try {
        await hold(client, { key: sellEntryKeys(order.id).hold, kind: 'SELL_HOLD', reference: `sell:${order.id}`, account: user, currency: input.currency, amount });
      } catch (error) {
        if (error instanceof LedgerError && error.problem === 'INSUFFICIENT_FUNDS') throw new SellError('NOT_ENOUGH_FUNDS', 'Not enough funds', { cause: error });
        throw error;
      }
      const shown = await client.query<{ id: string }>(
        `INSERT INTO wallet_transactions (wallet_account_id, transaction_type, direction, state, currency, amount, to_address,
                                          account_from_type, fiat_currency, fiat_amount, exchange_rate, from_currency, to_currency, from_amount, to_amount, reference)
         VALUES ($1, 'C2F', 'WITHDRAWAL', 'IN_PROGRESS', $2, $3, $4, 'B2C', $5, $6, $7, $2, $5, $3, $6, $8) RETURNING id`,
        [account, input.currency, amount.toString(), card.masked, input.fiatCurrency, fiatKopecks.toString(), fixed.rate, `sell:${order.id}`],
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
      const updated = await client.query<OrderRow>('UPDATE sell_orders SET wallet_transaction_id = $2, saved_card_id = $3 WHERE id = $1 RETURNING *', [
        order.id,
        shown.rows[0]?.id,
        savedCardId,
      ]);
      order = updated.rows[0] ?? order;
      await notifyAccountChanged(client, account);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
    // Handed to the provider after the hold commits; if this fails, the submit job tries again.
    await submit(order).catch((error: unknown) => log.warn({ err: error, order: order.id }, 'sell order not yet accepted by the payout provider; will retry'));
    return view((await pool.query<OrderRow>('SELECT * FROM sell_orders WHERE id = $1', [order.id])).rows[0] ?? order);
  }

  async function submit(order: Pick<OrderRow, 'id' | 'provider_token' | 'fiat_amount' | 'fiat_currency'>): Promise<void> {
    await pool.query('UPDATE sell_orders SET submit_attempts = submit_attempts + 1 WHERE id = $1', [order.id]);
    const accepted = await payoutsOn().createPayout({ reference: `sell:${order.id}`, token: order.provider_token, amount: BigInt(order.fiat_amount), currency: order.fiat_currency });
    await pool.query('UPDATE sell_orders SET provider_payout_id = $2, updated_at = now() WHERE id = $1 AND provider_payout_id IS NULL', [order.id, accepted.payoutId]);
  }

  async function orderByCard(account: string, input: ByCardInput): Promise<SellOrderView> {
    const info = await lookupBin(input.card.slice(0, 6)).catch((error: unknown) => {
      // An unknown bank is not the one bank that takes payouts.
      if (error instanceof SellError && error.problem === 'BIN_NOT_FOUND') throw new SellError('ONLY_SBER', ONLY_SBER_MESSAGE, { cause: error });
      throw error;
    });
    if (info.code !== SELL_BANK_CODE) throw new SellError('ONLY_SBER', ONLY_SBER_MESSAGE);
    const tokenized = await payoutsOn().tokenizeCard(input.card).catch(unavailable);
    return place(
      account,
      input,
      { token: tokenized.token, masked: tokenized.masked, code: info.code, system: info.system, savedCardId: null, save: input.saveCard },
      { kind: 'byCard', token: tokenized.token, saveCard: input.saveCard },
    );
  }

  async function orderBySavedCard(account: string, input: BySavedCardInput): Promise<SellOrderView> {
    payoutsOn();
    const found = await pool.query<{ provider_token: string; masked_card: string; bank_code: string; bank_system: string }>(
      'SELECT provider_token, masked_card, bank_code, bank_system FROM sell_saved_cards WHERE id = $1 AND wallet_account_id = $2 AND fiat_currency = $3',
      [input.cardId, account, input.fiatCurrency],
    );
    const card = found.rows[0];
    if (!card) throw new SellError('CARD_NOT_FOUND', 'No such saved card');
    return place(
      account,
      input,
      { token: card.provider_token, masked: card.masked_card, code: card.bank_code, system: card.bank_system, savedCardId: input.cardId, save: false },
      { kind: 'bySavedCard', cardId: input.cardId },
    );
  }

  async function findOrder(account: string, id: string): Promise<SellOrderView> {
    const found = await pool.query<OrderRow>('SELECT * FROM sell_orders WHERE id = $1 AND wallet_account_id = $2', [id, account]);
    const row = found.rows[0];
    if (!row) throw new SellError('ORDER_NOT_FOUND', 'No such order in this account');
    return view(row);
  }

  /**
   * Applies the provider's report once: paid moves the held crypto to payout settlement, failed gives it back.
   * 'applied', 'duplicate' (already in that state), 'conflict' (already in the other) or 'unknown'.
   */
  async function applyPayoutReport(report: PayoutReport): Promise<'applied' | 'duplicate' | 'conflict' | 'unknown'> {
    const match = /^sell:([0-9a-f-]{36})$/i.exec(report.reference);
    if (!match?.[1]) return 'unknown';
    const orderId = match[1];
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const locked = await client.query<OrderRow>('SELECT * FROM sell_orders WHERE id = $1 FOR UPDATE', [orderId]);
      const order = locked.rows[0];
      if (!order) {
        await client.query('ROLLBACK');
        return 'unknown';
      }
      if (order.provider_payout_id && report.payoutId !== order.provider_payout_id) {
        await client.query('ROLLBACK');
        log.error({ order: orderId, payout: report.payoutId, expected: order.provider_payout_id }, 'a payout report names another payout than the order\'s');
        return 'conflict';
      }
      const target = report.status === 'SUCCEEDED' ? 'COMPLETED' : 'FAILED';
      if (order.state !== 'PROCESSING') {
        await client.query('ROLLBACK');
        if (order.state !== target) log.error({ order: orderId, state: order.state, report: report.status }, 'a payout report contradicts the order\'s final state');
        return order.state === target ? 'duplicate' : 'conflict';
      }
      const amount = BigInt(order.amount);
      const keys = sellEntryKeys(orderId);
      const reason = report.status === 'FAILED' ? (report.reason ?? 'The payout failed') : null;
      if (target === 'COMPLETED') {
        await settle(client, {
          key: keys.settle,
          kind: 'SELL_PAYOUT',
          reference: `sell:${orderId}`,
          account: order.wallet_account_id,
          currency: order.currency,
          to: [{ account: systemAccountId(SYSTEM_ACCOUNTS.payoutSettlement()), amount }],
        });
      } else {
        await release(client, { key: keys.release, kind: 'SELL_RETURN', reference: `sell:${orderId}`, account: order.wallet_account_id, currency: order.currency, amount });
      }
      await client.query(
        `UPDATE sell_orders SET state = $2, failure_reason = $3, provider_payout_id = coalesce(provider_payout_id, $4), updated_at = now(),
                completed_at = CASE WHEN $2 = 'COMPLETED' THEN now() END WHERE id = $1`,
        [orderId, target, reason, report.payoutId],
      );
      await client.query(
        `UPDATE wallet_transactions SET state = $2, failure_reason = $3, updated_at = now(), completed_at = CASE WHEN $2 = 'COMPLETED' THEN now() END WHERE id = $1`,
        [order.wallet_transaction_id, target, reason],
      );
      await notifyAccountChanged(client, order.wallet_account_id);
      await client.query('COMMIT');
      return 'applied';
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  let lastQuoteSweep = 0;

  /**
   * The worker's retry of orders the provider has not yet taken (the request's own attempt failed or crashed); also
   * drops quotes a day after they expired (an order keeps its own copy of the rate).
   */
  async function submitPending(): Promise<number> {
    if (Date.now() - lastQuoteSweep > QUOTE_SWEEP_MS) {
      lastQuoteSweep = Date.now();
      await pool.query(`DELETE FROM sell_rate_quotes WHERE expires_at < now() - interval '1 day'`);
    }
    const pending = await pool.query<OrderRow>(
      `SELECT * FROM sell_orders WHERE state = 'PROCESSING' AND provider_payout_id IS NULL AND updated_at < now() - interval '3 seconds'
        ORDER BY created_at LIMIT 20`,
    );
    let submitted = 0;
    for (const order of pending.rows) {
      try {
        await submit(order);
        await pool.query('UPDATE sell_orders SET updated_at = now() WHERE id = $1', [order.id]);
        submitted++;
      } catch (error) {
        await pool.query('UPDATE sell_orders SET updated_at = now() WHERE id = $1', [order.id]);
        const attempts = order.submit_attempts + 1;
        // The crypto stays held until the provider takes the order; from the tenth try on the operator should look.
        log[attempts >= ALERT_AFTER_ATTEMPTS ? 'error' : 'warn'](
          { err: error instanceof PayoutUnavailableError ? error.message : error, order: order.id, attempts },
          'sell order still not accepted by the payout provider',
        );
      }
    }
    return submitted;
  }

  return { lookupBin, limits, quote, savedCards, orderByCard, orderBySavedCard, findOrder, applyPayoutReport, submitPending };
}

function view(row: OrderRow): SellOrderView {
  return {
    id: row.id,
    state: row.state,
    currency: row.currency,
    amount: formatUnits(BigInt(row.amount), decimalsFor(row.currency)),
    fiatCurrency: row.fiat_currency,
    fiatAmount: formatUnits(BigInt(row.fiat_amount), FIAT_DECIMALS),
    rate: row.rate,
    mascCard: row.masked_card,
    bankCode: row.bank_code,
    cardId: row.saved_card_id,
    transactionId: row.wallet_transaction_id,
    failureReason: row.failure_reason,
    createdDate: row.created_at.toISOString(),
    completedDate: row.completed_at?.toISOString() ?? null,
  };
}

function decimalsFor(currency: string): number {
  return decimalsOf(currency) ?? 8;
}
