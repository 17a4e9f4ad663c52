/**
 * What a withdrawal to an outside address pays: the network's current estimate for the transaction, priced in the
 * withdrawn asset, plus WITHDRAWAL_FEE_MARGIN_BPS, never below the currency's WITHDRAWAL_FEES floor, rounded up to
 * what the coin shows. A token's fee is paid in the network's coin (ETH for USDT_ETH), so it is converted through
 * current market prices, exactly and rounded up; with no current price the withdrawal is refused (PRICE_UNAVAILABLE)
 * rather than priced on a guess, and with no estimate (the node is down) it is refused WITHDRAWAL_FEE_UNAVAILABLE
 * rather than undercharged.
 */
import { divideUnits, pow10 } from '../../../lib/amount.ts';
import { findCoin, type CoinMeta, type Network } from '../../../lib/currencies.ts';
import { unitsOf, type Units } from '../../../lib/money.ts';
import { ChainUnavailableError, type FeeEstimate, type HotWalletFees, type WithdrawalChainPort } from '../../adapters/chains/port.ts';
import type { PriceTable, RatesPort } from '../../adapters/rates/port.ts';
import { requireUsd } from '../rates.ts';
import { WithdrawalError } from './rules.ts';

/** SPEC §5: amounts are shown with at most 8 decimals, so a fee never has more. */
const SHOWN_DECIMALS = 8;
const BPS = 10_000n;
/** How long one estimate answers for its network, currency and recipient: a user typing does not ask the node each time. */
export const FEE_ESTIMATE_CACHE_MS = 5_000;
/** Past this many cached estimates the expired ones are dropped (recipients are many, the cache is a few seconds deep). */
const CACHE_LIMIT = 1_000;

/** The network's estimate in units of `coin`: as it is in the network's coin, else converted at current USD prices, rounded up. */
export function estimateInAsset(estimate: Pick<FeeEstimate, 'currency' | 'amount'>, coin: CoinMeta, prices: PriceTable | undefined): bigint {
  if (estimate.currency === coin.currency) return estimate.amount;
  const feeCoin = findCoin(estimate.currency);
  if (!feeCoin) throw new Error(`the network's fee is in ${estimate.currency}, which is not a known coin`);
  const scaleUp = pow10(coin.decimals);
  const scaleDown = pow10(feeCoin.decimals);
  // The same asset on another rail (BTC_LNG's fee in BTC) needs no price, only its decimals.
  if (feeCoin.baseCurrency === coin.baseCurrency) return divideUnits(estimate.amount * scaleUp, scaleDown, 'up');
  if (!prices) throw new Error('a token fee is converted through prices: none were given');
  const feePrice = requireUsd(prices, feeCoin.baseCurrency);
  const assetPrice = requireUsd(prices, coin.baseCurrency);
  return divideUnits(estimate.amount * feePrice * scaleUp, assetPrice * scaleDown, 'up');
}

/** Units rounded up to what `coin` shows (its decimals, at most 8): the user never sees a fee smaller than charged. */
export function roundUpToShown(units: Units, coin: Pick<CoinMeta, 'decimals'>): Units {
  const hidden = coin.decimals - Math.min(coin.decimals, SHOWN_DECIMALS);
  if (hidden <= 0) return units;
  const step = pow10(hidden);
  return unitsOf(divideUnits(units, step, 'up') * step);
}

/** fee = max(floor, ceil(estimate in the asset × (10000 + margin) / 10000)), rounded up to what the coin shows. */
export function withdrawalFee(input: { floor: bigint; estimateInAsset: bigint; marginBps: number; coin: Pick<CoinMeta, 'decimals'> }): Units {
  const withMargin = roundUpToShown(unitsOf(divideUnits(input.estimateInAsset * (BPS + BigInt(input.marginBps)), BPS, 'up')), input.coin);
  return unitsOf(withMargin > input.floor ? withMargin : input.floor);
}

/** A fee as it is charged now, and the estimate it was made from (kept with a fee quote). */
export type CurrentFee = { fee: Units; estimate: FeeEstimate };

export type FeeChain = Pick<WithdrawalChainPort, 'hotWalletAddress'> & Pick<HotWalletFees, 'estimateFee'>;

/**
 * The fee of an outside withdrawal now. Estimates are cached per network, currency and recipient for a few seconds
 * (the recipient counts: TRON activates a new account, a token's first balance costs more gas); a request without a
 * recipient yet is estimated as a transfer to the hot wallet's own address.
 */
export function createFeeCalculator(deps: { chain: FeeChain; rates: RatesPort; floors: ReadonlyMap<string, bigint>; marginBps: number; cacheMs?: number; now?: () => number }) {
  const cacheMs = deps.cacheMs ?? FEE_ESTIMATE_CACHE_MS;
  const now = deps.now ?? Date.now;
  const cache = new Map<string, { until: number; estimate: Promise<FeeEstimate> }>();

  const prune = (at: number) => {
    if (cache.size < CACHE_LIMIT) return;
    for (const [key, entry] of cache) if (entry.until <= at) cache.delete(key);
    if (cache.size >= CACHE_LIMIT) cache.clear();
  };

  async function ask(network: Network, currency: string, toAddress: string | undefined, amount: Units): Promise<FeeEstimate> {
    try {
      const recipient = toAddress ?? (await deps.chain.hotWalletAddress(network));
      return await deps.chain.estimateFee({ network, currency, toAddress: recipient, amount });
    } catch (error) {
      // A node that does not answer at all is its network's outage (503 NETWORK_UNAVAILABLE), not a fee it cannot tell.
      if (error instanceof ChainUnavailableError) throw error;
      throw new WithdrawalError('WITHDRAWAL_FEE_UNAVAILABLE', `The ${network} network's fee cannot be estimated right now; try again shortly`, { cause: error });
    }
  }

  /** The network's estimate, shared by the requests of a few seconds (a failed one is not kept). */
  function estimate(coin: CoinMeta, toAddress: string | undefined, amount: Units): Promise<FeeEstimate> {
    const key = `${coin.network}:${coin.currency}:${toAddress ?? ''}`;
    const at = now();
    const cached = cache.get(key);
    if (cached && cached.until > at) return cached.estimate;
    prune(at);
    const pending = ask(coin.network, coin.currency, toAddress, amount);
    cache.set(key, { until: at + cacheMs, estimate: pending });
    pending.catch(() => {
      if (cache.get(key)?.estimate === pending) cache.delete(key);
    });
    return pending;
  }

  /** `amount`: the units asked to be sent (a TRC-20 transfer is simulated with it). */
  async function current(coin: CoinMeta, toAddress: string | undefined, amount: Units): Promise<CurrentFee> {
    const estimated = await estimate(coin, toAddress, amount);
    const feeCoin = findCoin(estimated.currency);
    // Prices are read only where the fee is in another asset (a token's): a coin's own withdrawal never waits for them.
    const prices = feeCoin && feeCoin.baseCurrency !== coin.baseCurrency ? await deps.rates.prices() : undefined;
    const fee = withdrawalFee({ floor: deps.floors.get(coin.currency) ?? 0n, estimateInAsset: estimateInAsset(estimated, coin, prices), marginBps: deps.marginBps, coin });
    return { fee, estimate: estimated };
  }

  return { current };
}

export type FeeCalculator = ReturnType<typeof createFeeCalculator>;
