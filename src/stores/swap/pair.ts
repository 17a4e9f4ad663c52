// Choosing the swap's pair (SPEC §2 Swap /swap/from, /swap/to): what the account holds that swaps into something,
// what the chosen source swaps into, and the arrow that reverses the pair where the reverse is supported.
import { atom, computed } from 'nanostores';
import { openPage } from '@nanostores/router';
import { getCurrencyPairs, type SwapPair } from '../../api/swap.ts';
import { $accountId } from '../account.ts';
import { $balances } from '../balances.ts';
import { $activeCoins } from '../catalogue.ts';
import { createQuery } from '../query.ts';
import { $router } from '../router.ts';
import { $disabledAssets } from '../settings.ts';
import { takeRequestedSwapPair } from '../swap-selection.ts';
import { destinationChoices, sourceChoices, supportsPair, type SwapSelection } from './rules.ts';

export const pairsQuery = createQuery<string, SwapPair[]>({ key: (account) => account, load: (account) => getCurrencyPairs(account) });
export const $swapPairs = pairsQuery.watch($accountId);

export const $sourceChoices = computed([$activeCoins, $balances, $swapPairs, $disabledAssets], (coins, balances, pairs, hidden) => sourceChoices(coins, balances.data, pairs.data, hidden));

/** `resetAmounts`: a new pair starts with empty amounts (the amount step's). */
export function createSwapPair({ resetAmounts }: { resetAmounts: () => void }) {
  const requested = takeRequestedSwapPair();
  const $swapSelection = atom<SwapSelection>(requested ? { ...requested, fresh: true } : { from: null, to: null, fresh: true });
  const $destinationChoices = computed([$activeCoins, $balances, $swapPairs, $swapSelection], (coins, balances, pairs, pair) => destinationChoices(coins, balances.data, pairs.data, pair.from));
  /** SPEC §2: the arrow is disabled when the reverse pair is unsupported. */
  const $canReverse = computed([$swapPairs, $swapSelection], (pairs, pair) => supportsPair(pairs.data, pair.to, pair.from));

  /** Choosing a source: on to the order when the destination still fits, else to choosing one. */
  function chooseSource(currency: string): void {
    const { to } = $swapSelection.get();
    const keepTo = to !== currency && supportsPair($swapPairs.get().data, currency, to);
    $swapSelection.set({ from: currency, to: keepTo ? to : null, fresh: false });
    resetAmounts();
    openPage($router, keepTo ? 'swapOrder' : 'swapTo');
  }

  function chooseDestination(currency: string): void {
    $swapSelection.set({ ...$swapSelection.get(), to: currency, fresh: false });
    resetAmounts();
    openPage($router, 'swapOrder');
  }

  return { $swapSelection, $destinationChoices, $canReverse, chooseSource, chooseDestination };
}

export type SwapPairStep = ReturnType<typeof createSwapPair>;
