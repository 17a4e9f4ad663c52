/**
 * Withdrawal requests (SPEC §7 withdrawal, check-address, preliminary fee): check an address, tell the fee, create a
 * withdrawal once per idempotency key, read one or the open ones. The worker carries it on (worker.ts).
 */
import type pg from 'pg';
import { formatUnits } from '../../../lib/amount.ts';
import type { CoinMeta } from '../../../lib/currencies.ts';
import type { ChainAddressing, WithdrawalChainPort } from '../../adapters/chains/port.ts';
import type { Catalogue } from '../catalogue.ts';
import { oncePerKey, requestHash } from '../orders/idempotency.ts';
import { createAddressChecker } from './address-check.ts';
import { openWithdrawal } from './open.ts';
import { refuseFrozenWithdrawals } from '../withdrawal-freeze.ts';
import { canonicalAddress, WithdrawalError, withdrawalFees, withdrawalRequestFields, withdrawalUnits, type CheckedAddress } from './rules.ts';
import { findWithdrawal, findWithdrawalByKey, openWithdrawals, withdrawalView, type WithdrawalRow, type WithdrawalView } from './view.ts';
import type { FeeView } from '../../../lib/wire/withdrawals.ts';
export type { FeeView };

export type WithdrawalSettings = { fees: Readonly<Record<string, string>>; blockedAddresses: readonly string[] };
export type WithdrawalService = ReturnType<typeof createWithdrawalService>;

/** `changed` hears of each account whose balances a request changed, once committed (this process's caches). */
export function createWithdrawalService(deps: { pool: pg.Pool; chain: WithdrawalChainPort; addresses: ChainAddressing; catalogue: Catalogue; settings: WithdrawalSettings; changed?: (walletAccountId: string) => void }) {
  const { pool, catalogue, settings } = deps;
  const coins = new Map(catalogue.coins.map((coin) => [coin.currency, coin]));
  const fees = withdrawalFees(catalogue.coins, settings.fees);
  const check = createAddressChecker({ chain: deps.chain, addresses: deps.addresses, blockedAddresses: settings.blockedAddresses });

  const coinOf = (currency: string): CoinMeta => {
    const coin = coins.get(currency);
    if (!coin || !coin.active) throw new WithdrawalError('UNKNOWN_CURRENCY', `${currency} is not a currency this wallet sends`);
    return coin;
  };
  const feeOf = (coin: CoinMeta) => fees.get(coin.currency) ?? 0n;

  async function checkAddress(account: string, currency: string, rawAddress: string): Promise<CheckedAddress> {
    return check(pool, account, coinOf(currency), rawAddress);
  }

  /** SPEC §7 preliminary fee: the fee for this currency and address (none to another user of this wallet). */
  async function preliminaryFee(account: string, input: { currency: string; amount?: string | undefined; depositAddress?: string | undefined }): Promise<FeeView> {
    const coin = coinOf(input.currency);
    let internal = false;
    if (input.depositAddress !== undefined && input.depositAddress.trim() !== '') {
      const checked = await check(pool, account, coin, input.depositAddress);
      if (checked.checkResult === 'INVALID') throw new WithdrawalError('WITHDRAWAL_WRONG_ADDRESS', 'The withdrawal address format is wrong.');
      internal = checked.internal;
    }
    const fee = internal ? 0n : feeOf(coin);
    const amount = withdrawalUnits(input.amount ?? '100', coin);
    return {
      currency: coin.currency,
      feeCurrency: coin.currency,
      fee: formatUnits(fee, coin.decimals),
      amount: formatUnits(amount, coin.decimals),
      receiveAmount: formatUnits(amount > fee ? amount - fee : 0n, coin.decimals),
      internal,
    };
  }

  /**
   * SPEC §7 POST withdrawal, once per idempotency key (orders/idempotency.ts). The hold (or the internal transfer)
   * commits together with the withdrawal and its history items.
   */
  async function create(account: string, input: { currency: string; amount: string; depositAddress: string; idempotencyKey: string }): Promise<WithdrawalView> {
    const coin = coinOf(input.currency);
    const units = withdrawalUnits(input.amount, coin);
    const typed = input.depositAddress.trim();
    const request = { scope: 'withdrawal', account, key: input.idempotencyKey, hash: requestHash(withdrawalRequestFields(coin, units, typed)) };
    let opened: { recipient: string | null } | undefined;
    const id = await oncePerKey(pool, request, {
      find: (db) => findWithdrawalByKey(db, account, input.idempotencyKey),
      // Rows from before request hashes: the same coin, units and address (as typed or as stored).
      sameAsLegacy: (row: WithdrawalRow) => row.currency === coin.currency && BigInt(row.amount) === units && (row.toAddress === typed || row.toAddress === canonicalAddress(coin.network, typed)),
      replay: (row) => row.id,
      create: async (db) => {
        await refuseFrozenWithdrawals(db, account);
        const checked = await check(db, account, coin, typed);
        if (checked.checkResult === 'INVALID') throw new WithdrawalError('WITHDRAWAL_WRONG_ADDRESS', 'The withdrawal address format is wrong.');
        if (checked.checkResult === 'BLOCKED' || checked.checkResult === 'NOT_USED') throw new WithdrawalError('WITHDRAWAL_ADDRESS_NOT_USED', 'Address not used');
        if (checked.belongsToSameUser) throw new WithdrawalError('WITHDRAWAL_SAME_USER', "You can't make a transfer to yourself");
        const fee = checked.internal ? 0n : feeOf(coin);
        if (units <= fee) throw new WithdrawalError('WITHDRAWAL_AMOUNT_TOO_SMALL', `The amount must be above the fee of ${formatUnits(fee, coin.decimals)} ${coin.baseCurrency}`);
        opened = { recipient: checked.recipientAccountId };
        return openWithdrawal(db, { account, coin, units, fee, check: checked, idempotencyKey: input.idempotencyKey, requestHash: request.hash });
      },
    });
    if (opened) deps.changed?.(account);
    if (opened?.recipient) deps.changed?.(opened.recipient);
    return get(account, id);
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

  return { checkAddress, preliminaryFee, create, get, listOpen, feeOf: (currency: string) => formatUnits(feeOf(coinOf(currency)), coinOf(currency).decimals) };
}
