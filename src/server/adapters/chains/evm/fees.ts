/**
 * EIP-1559 fee caps from `eth_feeHistory`: the tip is the median of recent blocks' median tips (at least MIN_TIP), the
 * cap twice the next block's base fee plus the tip, so a transaction stays includable through several full blocks.
 */
import type { PublicClient } from 'viem';

/** 0.1 gwei: below it a transaction may wait behind every other on a busy chain. */
export const MIN_TIP = 100_000_000n;

export type FeeCaps = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };

export async function feeCaps(client: PublicClient): Promise<FeeCaps & { nextBase: bigint }> {
  const history = await client.getFeeHistory({ blockCount: 10, rewardPercentiles: [50], blockTag: 'latest' });
  const nextBase = history.baseFeePerGas.at(-1) ?? 0n;
  const tips = (history.reward ?? []).map((r) => r[0] ?? 0n).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const median = tips[Math.floor(tips.length / 2)] ?? 0n;
  const tip = median > MIN_TIP ? median : MIN_TIP;
  return { maxPriorityFeePerGas: tip, maxFeePerGas: nextBase * 2n + tip, nextBase };
}

/**
 * A sweep's caps: the next block's base fee may rise by an eighth at most, so a quarter above it is enough for the
 * next blocks; a sweep is not urgent and waits when fees rise further. The lower the cap, the less ETH stays behind.
 */
export function sweepCaps(caps: FeeCaps, nextBase: bigint): FeeCaps {
  const maxFeePerGas = nextBase + nextBase / 4n + caps.maxPriorityFeePerGas;
  return { maxPriorityFeePerGas: caps.maxPriorityFeePerGas, maxFeePerGas: maxFeePerGas < caps.maxFeePerGas ? maxFeePerGas : caps.maxFeePerGas };
}

/** A replacement's caps: each at least 10 % above the stuck one's (what nodes require, rounded up) and at least today's. */
export function bumped(stuck: FeeCaps, now: FeeCaps, floorMaxFee = 0n): FeeCaps {
  const up = (value: bigint) => value + (value + 9n) / 10n;
  const max = (...values: bigint[]) => values.reduce((a, b) => (a > b ? a : b));
  const maxPriorityFeePerGas = max(up(stuck.maxPriorityFeePerGas), now.maxPriorityFeePerGas);
  return { maxPriorityFeePerGas, maxFeePerGas: max(up(stuck.maxFeePerGas), now.maxFeePerGas, floorMaxFee, maxPriorityFeePerGas) };
}

/** Gas above a plain transfer's gets a fifth more: state may change between the estimate and the block (unused gas is not paid). */
export function withMargin(gas: bigint): bigint {
  return gas <= 21_000n ? gas : gas + gas / 5n;
}
