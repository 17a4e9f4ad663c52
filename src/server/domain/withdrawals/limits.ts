/**
 * Withdrawal limits and review (README "Operating", Withdrawal limits and review): what one user may send in a rolling
 * 24 hours, in USD at the market's current price (WITHDRAWAL_DAILY_LIMIT_USD: over it the request is refused), and
 * what waits for an operator's review with its amount held (review.ts): one above WITHDRAWAL_REVIEW_ABOVE_USD, the
 * first to an address above WITHDRAWAL_REVIEW_NEW_ADDRESS_ABOVE_USD, and any without a current price while a limit is
 * on (it is neither refused nor passed unchecked). Transfers to other users of this wallet count the same.
 */
import type { CoinMeta } from '../../../lib/currencies.ts';
import type { Units } from '../../../lib/money.ts';
import { parseDecimal } from '../../../lib/amount.ts';
import { PRICE_DECIMALS, PRICE_SCALE, type RatesPort } from '../../adapters/rates/port.ts';
import { balancesOf, type Queryable } from '../ledger.ts';
import { WithdrawalError } from './rules.ts';

/** USD amounts scaled by PRICE_SCALE; 0 turns a rule off. */
export type WithdrawalLimits = Readonly<{ dailyUsd: bigint; reviewAboveUsd: bigint; reviewNewAddressAboveUsd: bigint }>;

export const NO_WITHDRAWAL_LIMITS: WithdrawalLimits = { dailyUsd: 0n, reviewAboveUsd: 0n, reviewNewAddressAboveUsd: 0n };

/** Why a withdrawal waits for review: over the threshold, the first to its address above the lower one, no price. */
export const REVIEW_REASONS = ['ABOVE_THRESHOLD', 'NEW_ADDRESS', 'NO_PRICE'] as const;
export type ReviewReason = (typeof REVIEW_REASONS)[number];

/** The rolling window of the daily limit. */
export const DAILY_WINDOW = '24 hours';

export function limitsOn(limits: WithdrawalLimits): boolean {
  return limits.dailyUsd > 0n || limits.reviewAboveUsd > 0n || limits.reviewNewAddressAboveUsd > 0n;
}

/** The USD value (PRICE_SCALE) of `units` of a coin at a USD price (PRICE_SCALE), rounded up: rounding never slips a limit. */
export function usdOf(units: Units, decimals: number, price: bigint): bigint {
  const scale = 10n ** BigInt(decimals);
  return (units * price + scale - 1n) / scale;
}

/** A USD amount (PRICE_SCALE) in dollars and cents, rounded down: "1250.5" → "1250.50". */
export function usdText(usd: bigint): string {
  const cents = usd / (PRICE_SCALE / 100n);
  return `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;
}

export type LimitVerdict = { refused: { limitUsd: bigint; leftUsd: bigint } } | { reasons: ReviewReason[] };

/**
 * The rules on one withdrawal: `usd` its value (undefined without a current price), `usedUsd` what the user sent in
 * the last 24 hours (rejected ones not counted), `newAddress` whether no withdrawal of theirs ever completed to it.
 */
export function judgeWithdrawal(limits: WithdrawalLimits, input: { usd: bigint | undefined; usedUsd: bigint; newAddress: boolean }): LimitVerdict {
  if (!limitsOn(limits)) return { reasons: [] };
  const left = limits.dailyUsd > input.usedUsd ? limits.dailyUsd - input.usedUsd : 0n;
  if (input.usd === undefined) {
    // Nothing left refuses whatever the amount; otherwise an operator values it.
    if (limits.dailyUsd > 0n && left === 0n) return { refused: { limitUsd: limits.dailyUsd, leftUsd: 0n } };
    return { reasons: ['NO_PRICE'] };
  }
  if (limits.dailyUsd > 0n && input.usd > left) return { refused: { limitUsd: limits.dailyUsd, leftUsd: left } };
  const reasons: ReviewReason[] = [];
  if (limits.reviewAboveUsd > 0n && input.usd > limits.reviewAboveUsd) reasons.push('ABOVE_THRESHOLD');
  if (input.newAddress && limits.reviewNewAddressAboveUsd > 0n && input.usd > limits.reviewNewAddressAboveUsd) reasons.push('NEW_ADDRESS');
  return { reasons };
}

/** What the request's transaction records of the rules: the value (for the next ones' daily sum) and the review's reasons. */
export type LimitCheck = { usd: bigint | undefined; reasons: ReviewReason[] };

/**
 * Applies the rules in the request's transaction, under a lock per user held to its end, so two requests racing for
 * the last of the limit are counted one after the other. Refuses with WITHDRAWAL_DAILY_LIMIT (details: the limit and
 * what is left, in USD, and the user's language for the gateway's words).
 */
export async function checkWithdrawalLimits(
  db: Queryable,
  input: { account: string; coin: CoinMeta; units: Units; address: string; limits: WithdrawalLimits; rates: RatesPort },
): Promise<LimitCheck> {
  const { limits, coin } = input;
  if (!limitsOn(limits)) return { usd: undefined, reasons: [] };
  const owner = (
    await db.query<{ userId: string; language: string }>(
      'SELECT wa.user_id AS "userId", u.language FROM wallet_accounts wa JOIN users u ON u.id = wa.user_id WHERE wa.id = $1',
      [input.account],
    )
  ).rows[0];
  if (!owner) throw new WithdrawalError('WITHDRAWAL_NOT_FOUND', 'No such account');
  // The price first: nothing under the lock but the user's own sums, so racing requests wait as little as they can.
  const price = (await input.rates.prices()).usd[coin.baseCurrency];
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('withdrawal-limits:' || $1::text, 0))`, [owner.userId]);
  const usd = price === undefined || price <= 0n ? undefined : usdOf(input.units, coin.decimals, price);
  const used = await db.query<{ total: string }>(
    `SELECT coalesce(sum(w.usd_value), 0)::text AS total FROM withdrawals w JOIN wallet_accounts wa ON wa.id = w.wallet_account_id
      WHERE wa.user_id = $1 AND w.created_at > now() - $2::interval AND w.state <> 'FAILED'`,
    [owner.userId, DAILY_WINDOW],
  );
  const usedUsd = parseDecimal(used.rows[0]?.total ?? '0', PRICE_DECIMALS);
  let newAddress = false;
  if (limits.reviewNewAddressAboveUsd > 0n) {
    const before = await db.query(
      `SELECT 1 FROM withdrawals w JOIN wallet_accounts wa ON wa.id = w.wallet_account_id
        WHERE wa.user_id = $1 AND w.network = $2 AND w.to_address = $3 AND w.state = 'COMPLETED' LIMIT 1`,
      [owner.userId, coin.network, input.address],
    );
    newAddress = before.rowCount === 0;
  }
  const verdict = judgeWithdrawal(limits, { usd, usedUsd, newAddress });
  if ('refused' in verdict) {
    // A request the balance cannot cover says so first, as it did before there were limits.
    const balance = (await balancesOf(db, input.account)).find((b) => b.currency === coin.currency);
    if ((balance?.available ?? 0n) < input.units) throw new WithdrawalError('WITHDRAWAL_NOT_ENOUGH_FUNDS', 'Not enough funds');
    const { limitUsd, leftUsd } = verdict.refused;
    throw new WithdrawalError('WITHDRAWAL_DAILY_LIMIT', `This is over the daily withdrawal limit of ${usdText(limitUsd)} USD: ${usdText(leftUsd)} USD is left for the next 24 hours`, {
      details: { language: owner.language, limitUsd: usdText(limitUsd), leftUsd: usdText(leftUsd) },
    });
  }
  return { usd, reasons: verdict.reasons };
}
