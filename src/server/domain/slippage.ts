/**
 * Issue 14 item 11: a fixed rate (a swap quote, a sell rate) is not a free option. While it lives it is honoured only
 * if the market has not moved against the desk by more than the allowed slippage since it was fixed; a move in the
 * user's disfavour is honoured (the user accepted that rate).
 */

import { MAX_SLIPPAGE_BPS } from '../../lib/slippage.ts';

/**
 * Whether a rate fixed at `quoted` may still be honoured now that the same thing is worth `current` to the user
 * (both in the same units: what the user gets for what they give). True while current ≥ quoted × (1 − maxBps).
 */
export function honoursFixedRate(quoted: bigint, current: bigint, maxBps: number): boolean {
  if (!Number.isInteger(maxBps) || maxBps < 0 || maxBps > MAX_SLIPPAGE_BPS) throw new RangeError(`slippage must be 0..${MAX_SLIPPAGE_BPS} bps, got ${maxBps}`);
  return current * 10_000n >= quoted * BigInt(10_000 - maxBps);
}
