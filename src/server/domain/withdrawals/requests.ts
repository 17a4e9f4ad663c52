/**
 * Withdrawal requests (SPEC §7 withdrawal, check-address, preliminary fee): check an address, tell the fee (and fix
 * it for the review: fee-quotes.ts), create a withdrawal once per idempotency key, read one or the open ones. The
 * fee follows the network (fees.ts). The worker carries a withdrawal on (worker.ts).
 */
import type { ApprovalSeal } from '../signing.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import type pg from 'pg';
import { formatUnits } from '../../../lib/amount.ts';
import { unitsOf, type Units } from '../../../lib/money.ts';
import type { CoinMeta } from '../../../lib/currencies.ts';
import type { ChainAddressing, HotWalletFees, WithdrawalChainPort } from '../../adapters/chains/port.ts';
import type { RatesPort } from '../../adapters/rates/port.ts';
import type { Catalogue } from '../catalogue.ts';
import { oncePerKey, requestHash } from '../orders/idempotency.ts';
import { createAddressChecker } from './address-check.ts';
import { openWithdrawal } from './open.ts';
import { saveFeeQuote, takeFeeQuote, useFeeQuote } from './fee-quotes.ts';
import { createFeeCalculator } from './fees.ts';
import { refuseFrozenWithdrawals } from '../withdrawal-freeze.ts';
import { bookAddress, canonicalAddress, WithdrawalError, withdrawalFees, withdrawalRequestFields, withdrawalUnits, type CheckedAddress } from './rules.ts';
import { checkWithdrawalLimits, NO_WITHDRAWAL_LIMITS, type WithdrawalLimits } from './limits.ts';
import { findWithdrawal, findWithdrawalByKey, openWithdrawals, withdrawalView, type WithdrawalRow, type WithdrawalView } from './view.ts';
import type { FeeView } from '../../../lib/wire/withdrawals.ts';
export type { FeeView };

/**
 * WITHDRAWAL_FEES (the floors), WITHDRAWAL_BLOCKED_ADDRESSES, WITHDRAWAL_FEE_MARGIN_BPS, and the limits and review
 * thresholds in USD (config-withdrawals.ts; limits.ts; left out: none).
 */
export type WithdrawalSettings = { fees: Readonly<Record<string, string>>; blockedAddresses: readonly string[]; feeMarginBps: number; limits?: WithdrawalLimits };
export type WithdrawalService = ReturnType<typeof createWithdrawalService>;

/**
 * `chain` estimates the network's fee, `rates` prices a token's fee in the token. `changed` hears of each account
 * whose balances a request changed, once committed (this process's caches).
 */
export function createWithdrawalService(deps: {
  pool: pg.Pool;
  chain: WithdrawalChainPort & Pick<HotWalletFees, 'estimateFee'>;
  rates: RatesPort;
  addresses: ChainAddressing;
  catalogue: Catalogue;
  settings: WithdrawalSettings;
  changed?: (walletAccountId: string) => void;
  /** How long a network's estimate is reused (fees.ts FEE_ESTIMATE_CACHE_MS); a test of rising fees sets 0. */
  feeCacheMs?: number;
  /** Counts each fee asked for against the user's quote allowance and refuses one over it (domain/limits.ts quotesPerUser). */
  quoteLimit?: (account: string) => Promise<void>;
  /** Seals each approved withdrawal's figures for the signer (domain/signing.ts); absent where this process signs itself. */
  approvalSeal?: ApprovalSeal | undefined;
}) {
  const { pool, catalogue, settings } = deps;
  const coins = new Map(catalogue.coins.map((coin) => [coin.currency, coin]));
  const fees = createFeeCalculator({ chain: deps.chain, rates: deps.rates, floors: withdrawalFees(catalogue.coins, settings.fees), marginBps: settings.feeMarginBps, cacheMs: deps.feeCacheMs });
  const check = createAddressChecker({ chain: deps.chain, addresses: deps.addresses, blockedAddresses: settings.blockedAddresses });

  const coinOf = (currency: string): CoinMeta => {
    const coin = coins.get(currency);
    if (!coin || !coin.active) throw new WithdrawalError('UNKNOWN_CURRENCY', `${currency} is not a currency this wallet sends`);
    return coin;
  };
  async function checkAddress(account: string, currency: string, rawAddress: string): Promise<CheckedAddress> {
    return check(pool, account, coinOf(currency), rawAddress);
  }

  /**
   * SPEC §7 preliminary fee: the fee for this currency and address (none to another user of this wallet). To an
   * outside address a withdrawal may be sent to, the fee is fixed for the review (`feeQuoteId` until `expiresAt`);
   * without an address it is only the network's fee now, as the form shows it before one is typed.
   */
  async function preliminaryFee(account: string, input: { currency: string; amount?: string | undefined; depositAddress?: string | undefined }): Promise<FeeView> {
    const coin = coinOf(input.currency);
    const amount = withdrawalUnits(input.amount ?? '100', coin);
    const typed = input.depositAddress?.trim() ?? '';
    let checked: CheckedAddress | undefined;
    if (typed !== '') {
      checked = await check(pool, account, coin, typed);
      if (checked.checkResult === 'INVALID') throw new WithdrawalError('WITHDRAWAL_WRONG_ADDRESS', 'The withdrawal address format is wrong.');
    }
    const internal = checked?.internal ?? false;
    let fee = unitsOf(0n);
    let quote: { id: string; expiresAt: Date } | undefined;
    if (!internal) {
      const sendable = checked?.checkResult === 'VALID' && !checked.belongsToSameUser;
      const toAddress = sendable ? bookAddress(coin.network, typed) : undefined;
      // Each fee with an address keeps a quote (and asks the node): a flood of them is bounded like swap quotes.
      if (toAddress !== undefined) await deps.quoteLimit?.(account);
      const current = await fees.current(coin, toAddress, amount);
      fee = current.fee;
      if (toAddress !== undefined) quote = await saveFeeQuote(pool, { account, currency: coin.currency, toAddress, fee, estimate: current.estimate, marginBps: settings.feeMarginBps });
    }
    return {
      currency: coin.currency,
      feeCurrency: coin.currency,
      fee: formatUnits(fee, coin.decimals),
      amount: formatUnits(amount, coin.decimals),
      receiveAmount: formatUnits(amount > fee ? amount - fee : 0n, coin.decimals),
      internal,
      feeQuoteId: quote?.id ?? null,
      expiresAt: quote?.expiresAt.toISOString() ?? null,
    };
  }

  /**
   * SPEC §7 POST withdrawal, once per idempotency key (orders/idempotency.ts). The hold (or the internal transfer)
   * commits together with the withdrawal and its history items. An outside one pays the fee of `feeQuoteId` when
   * that quote applies (fee-quotes.ts), else the current fee.
   */
  async function create(account: string, input: { currency: string; amount: string; depositAddress: string; idempotencyKey: string; feeQuoteId?: string | undefined }): Promise<WithdrawalView> {
    const coin = coinOf(input.currency);
    const units = withdrawalUnits(input.amount, coin);
    const typed = input.depositAddress.trim();
    // The quote counts only when given, so retries of requests from before quotes keep their hash.
    const request = { scope: 'withdrawal', account, key: input.idempotencyKey, hash: requestHash({ ...withdrawalRequestFields(coin, units, typed), feeQuoteId: input.feeQuoteId }) };
    let opened: { recipient: string | null } | undefined;
    // The answer is read in the request's own transaction: a second connection taken after the commit could time out
    // on a busy pool and answer 503 for a withdrawal that was made.
    const row = await oncePerKey(pool, request, {
      find: (db) => findWithdrawalByKey(db, account, input.idempotencyKey),
      // Rows from before request hashes: the same coin, units and address (as typed or as stored).
      sameAsLegacy: (row: WithdrawalRow) => row.currency === coin.currency && unitsFromRow(row.amount, 'amount') === units && (row.toAddress === typed || row.toAddress === canonicalAddress(coin.network, typed)),
      replay: (row) => row,
      create: async (db) => {
        await refuseFrozenWithdrawals(db, account);
        const checked = await check(db, account, coin, typed);
        if (checked.checkResult === 'INVALID') throw new WithdrawalError('WITHDRAWAL_WRONG_ADDRESS', 'The withdrawal address format is wrong.');
        if (checked.checkResult === 'BLOCKED' || checked.checkResult === 'NOT_USED') throw new WithdrawalError('WITHDRAWAL_ADDRESS_NOT_USED', 'Address not used');
        if (checked.belongsToSameUser) throw new WithdrawalError('WITHDRAWAL_SAME_USER', "You can't make a transfer to yourself");
        let fee = unitsOf(0n);
        let quote: { id: string; fee: Units } | undefined;
        if (!checked.internal) {
          const toAddress = bookAddress(coin.network, typed);
          quote = input.feeQuoteId === undefined ? undefined : await takeFeeQuote(db, { id: input.feeQuoteId, account, currency: coin.currency, toAddress });
          fee = quote ? quote.fee : (await fees.current(coin, toAddress, units)).fee;
        }
        if (units <= fee) throw new WithdrawalError('WITHDRAWAL_AMOUNT_TOO_SMALL', `The amount must be above the fee of ${formatUnits(fee, coin.decimals)} ${coin.baseCurrency}`);
        // Over the daily limit: refused; over a review threshold (or without a price): held for an operator.
        const limits = await checkWithdrawalLimits(db, { account, coin, units, address: checked.address, limits: settings.limits ?? NO_WITHDRAWAL_LIMITS, rates: deps.rates });
        opened = { recipient: limits.reasons.length > 0 ? null : checked.recipientAccountId };
        const id = await openWithdrawal(db, { account, coin, units, fee, check: checked, idempotencyKey: input.idempotencyKey, requestHash: request.hash, limits, seal: deps.approvalSeal });
        if (quote) await useFeeQuote(db, quote.id, id);
        const made = await findWithdrawal(db, account, id);
        if (!made) throw new Error(`the withdrawal ${id} just opened is not found`);
        return made;
      },
    });
    if (opened) deps.changed?.(account);
    if (opened?.recipient) deps.changed?.(opened.recipient);
    return withdrawalView(row, coins.get(row.currency));
  }

  async function get(account: string, id: string): Promise<WithdrawalView> {
    const row = await findWithdrawal(pool, account, id);
    if (!row) throw new WithdrawalError('WITHDRAWAL_NOT_FOUND', 'No such withdrawal in this account');
    return withdrawalView(row, coins.get(row.currency));
  }

  /** The account's withdrawals still on their way: the browser watches them to tell the user how they ended. */
  async function listOpen(account: string): Promise<WithdrawalView[]> {
    return (await openWithdrawals(pool, account)).map((row) => withdrawalView(row, coins.get(row.currency)));
  }

  return { checkAddress, preliminaryFee, create, get, listOpen };
}
