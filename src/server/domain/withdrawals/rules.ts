/**
 * The rules of a withdrawal (SPEC §5 send rules): how an amount is read, how an address is spelled, what the fee is.
 * The amount entered is debited; the recipient receives it less the fee.
 */
import { Address as TonAddress } from '@ton/core';
import { AmountError, parseDecimal } from '../../../lib/amount.ts';
import { parseMoney, type Units } from '../../../lib/money.ts';
import type { CoinMeta, Network } from '../../../lib/currencies.ts';
import { DomainError } from '../errors.ts';
import { toChecksumAddress } from '../addresses.ts';
import type { CheckResult, AccountType, AddressCheck } from '../../../lib/wire/withdrawals.ts';
export type { CheckResult, AccountType, AddressCheck };

/** SPEC §5: at most 8 digits after the point in any amount a user types. */
const SHOWN_DECIMALS = 8;

/** The wire exceptionCodes of a refused withdrawal (http/errors.ts maps them to statuses). */
export type WithdrawalCode =
  | 'UNKNOWN_CURRENCY'
  | 'WITHDRAWAL_WRONG_ADDRESS'
  | 'WITHDRAWAL_ADDRESS_NOT_USED'
  | 'WITHDRAWAL_SAME_USER'
  | 'WITHDRAWAL_NOT_ENOUGH_FUNDS'
  | 'WITHDRAWAL_AMOUNT_PRECISION'
  | 'WITHDRAWAL_AMOUNT_TOO_SMALL'
  | 'WITHDRAWAL_NOT_FOUND'
  /** The network's fee could not be estimated (its node is down): nothing is sent at a fee that may not cover it (503). */
  | 'WITHDRAWAL_FEE_UNAVAILABLE'
  /** A credited deposit left the chain and the balance could not give it back (domain/withdrawal-freeze.ts). */
  | 'WITHDRAWALS_FROZEN'
  /** Over the user's rolling 24-hour limit in USD (limits.ts); details say the limit and what is left (403). */
  | 'WITHDRAWAL_DAILY_LIMIT'
  /** An operator decided on a withdrawal that is not waiting for review (review.ts, 409). */
  | 'WITHDRAWAL_NOT_UNDER_REVIEW'
  | 'WITHDRAWAL_NOT_UNSEALED'
  /** The deciding operator is no user of this wallet (review.ts, 404). */
  | 'OPERATOR_NOT_FOUND'
  /** A rejection in review must say why (review.ts, 400). */
  | 'REVIEW_REASON_REQUIRED';

export class WithdrawalError extends DomainError<WithdrawalCode> {}

/**
 * Why a withdrawal failed, as a code the client translates (the user never reads a node's English): the network
 * refused the transaction, it was mined and failed (EVM revert, TON action failure), it left the chain unconfirmed, or
 * an operator rejected it in review (review.ts). Whatever the code, the held amount and its fee went back to the balance.
 */
export const WITHDRAWAL_FAILURES = ['REJECTED', 'FAILED_ON_CHAIN', 'DROPPED', 'REVIEW_REJECTED', 'UNKNOWN'] as const;
export type WithdrawalFailure = (typeof WITHDRAWAL_FAILURES)[number];

/** What the request needs beyond the wire answer: who receives an internal transfer, who sends. */
export type CheckedAddress = AddressCheck & { recipientAccountId: string | null; senderType: AccountType; senderName: string | null };

/**
 * The form in which deposit addresses are stored, so a user's address typed in another valid spelling is still
 * recognised: EIP-55 for Ethereum, lower case for bech32, TON's non-bounceable url-safe form.
 */
export function canonicalAddress(network: Network, address: string): string {
  try {
    if (network === 'ETHEREUM') return toChecksumAddress(address.slice(2).toLowerCase());
    if ((network === 'BITCOIN' || network === 'LITECOIN') && /^(bc1|ltc1|tb1|bcrt1|tltc1|rltc1)/i.test(address)) return address.toLowerCase();
    if (network === 'TON') return TonAddress.parse(address).toString({ bounceable: false, urlSafe: true });
  } catch {
    return address;
  }
  return address;
}

/**
 * The spelling an address is kept in where its user chose it (the address book): the canonical one, except that a
 * TON address keeps the bounce flag it was entered with (`EQ…`/`Ef…` bounceable, `UQ…`/`Uf…` not; url-safe), since
 * the flag is the sender's instruction for an undeployed recipient. A raw `0:…` address carries no flag: it becomes
 * bounceable, TON's default (TEP-2), which is what toncenter and @ton/core print for it.
 */
export function bookAddress(network: Network, address: string): string {
  if (network !== 'TON') return canonicalAddress(network, address);
  try {
    if (!TonAddress.isFriendly(address)) return TonAddress.parse(address).toString({ bounceable: true, urlSafe: true });
    const { address: parsed, isBounceable, isTestOnly } = TonAddress.parseFriendly(address);
    return parsed.toString({ bounceable: isBounceable, testOnly: isTestOnly, urlSafe: true });
  } catch {
    return address;
  }
}

/** A TON address a transfer is sent to with the bounce flag set (raw addresses included, see `bookAddress`). */
export function isBounceableTonAddress(address: string): boolean {
  try {
    return !TonAddress.isFriendly(address) || TonAddress.parseFriendly(address).isBounceable;
  } catch {
    return false;
  }
}

/** An amount from the wire to units of the coin: at most 8 decimals and no more than the coin has, above zero. */
export function withdrawalUnits(text: string, coin: CoinMeta): Units {
  const places = Math.min(coin.decimals, SHOWN_DECIMALS);
  let units: Units;
  try {
    units = parseMoney(coin.currency, text, { places }).units;
  } catch (error) {
    if (error instanceof AmountError) throw new WithdrawalError('WITHDRAWAL_AMOUNT_PRECISION', `${coin.currency} amounts have at most ${places} decimals`, { cause: error });
    throw error;
  }
  if (units <= 0n) throw new WithdrawalError('WITHDRAWAL_AMOUNT_TOO_SMALL', 'The amount must be above 0');
  return units;
}

/** The fee of each coin in units, read once; one finer than its currency allows is a configuration mistake, refused at start. */
export function withdrawalFees(coins: readonly CoinMeta[], configured: Readonly<Record<string, string>>): Map<string, bigint> {
  const fees = new Map<string, bigint>();
  for (const coin of coins) {
    const fee = configured[coin.currency] ?? '0';
    try {
      fees.set(coin.currency, parseDecimal(fee, coin.decimals));
    } catch {
      throw new Error(`WITHDRAWAL_FEES: the ${coin.currency} fee ${fee} has more decimals than ${coin.currency} (${coin.decimals})`);
    }
  }
  return fees;
}

/** What defines a withdrawal request for its idempotency key: the coin, the units and the address however it was spelled. */
export function withdrawalRequestFields(coin: CoinMeta, units: Units, typedAddress: string) {
  return { currency: coin.currency, amount: units, address: bookAddress(coin.network, typedAddress) };
}
