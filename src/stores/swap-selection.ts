import { atom } from 'nanostores';

/** A swap pair chosen outside the swap flow. */
export type SwapPair = { from: string; to: string };

/**
 * SPEC §2 quick swap path: Home asks for BTC → USDT_TRX before /swap/order opens; the swap flow takes the pair
 * (the open visit at once, else the next one) and starts with empty amounts. Apart from the lazily loaded flow.
 */
export const $requestedSwapPair = atom<SwapPair | null>(null);

export function requestSwapPair(pair: SwapPair): void {
  $requestedSwapPair.set({ ...pair });
}

/** The requested pair, once: whoever takes it clears it. */
export function takeRequestedSwapPair(): SwapPair | null {
  const pair = $requestedSwapPair.get();
  if (pair) $requestedSwapPair.set(null);
  return pair;
}
