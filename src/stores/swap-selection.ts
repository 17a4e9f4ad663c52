import { atom } from 'nanostores';
import { setSwapPreselector, type SwapPair } from './home.ts';

/**
 * The swap pair being chosen (SPEC §2 Swap), apart from the lazily loaded swap flow so Home's quick swap path
 * (BTC → USDT_TRX when both are held) can preselect it before /swap/order opens. `fresh` tells the flow the
 * pair was set from outside, so its amounts start empty.
 */
export type SwapSelection = { from: string | null; to: string | null; fresh: boolean };

export const $swapSelection = atom<SwapSelection>({ from: null, to: null, fresh: true });

export function preselectSwap(pair: SwapPair): void {
  $swapSelection.set({ from: pair.from, to: pair.to, fresh: true });
}

setSwapPreselector(preselectSwap);
