// The swap's order form (SPEC §2 /swap/order, §5): the amount typed on either side, the quote 300 ms after the last
// keystroke by that side (the newest answer wins) filling the other, the limits and the balance it is checked against.
import { computed, map } from 'nanostores';
import { getSwapLimit, preCalculateSwap, type QuoteRequest, type SwapLimitView } from '../../api/swap.ts';
import { tickerOf } from '../../lib/format.ts';
import { acceptTypedAmount, isZeroAmount, normalTypedAmount } from '../../lib/typed-amount.ts';
import { $accountId } from '../account.ts';
import { $balances } from '../balances.ts';
import { $coins } from '../catalogue.ts';
import { errorText } from '../errors.ts';
import { createDebouncedRequest } from '../primitives/debounced-request.ts';
import { createQuery } from '../query.ts';
import { $locale } from '../settings.ts';
import type { SwapPairStep } from './pair.ts';
import { EMPTY_SWAP_FORM, quotedSide, requestOf, SWAP_DEBOUNCE_MS, swapProblemOf, type SwapForm, type SwapSide } from './rules.ts';

type LimitArgs = { account: string; from: string; to: string };
export const limitQuery = createQuery<LimitArgs, SwapLimitView>({ key: (a) => `${a.account}:${a.from}:${a.to}`, load: (a) => getSwapLimit(a.account, a.from, a.to) });

export function createSwapAmount({ $swapSelection, $canReverse }: Pick<SwapPairStep, '$swapSelection' | '$canReverse'>) {
  const $swapForm = map<SwapForm>({ ...EMPTY_SWAP_FORM });
  const $limitArgs = computed([$accountId, $swapSelection], (account, pair) => (account && pair.from && pair.to ? { account, from: pair.from, to: pair.to } : null));
  const $swapLimit = limitQuery.watch($limitArgs);

  const quotes = createDebouncedRequest({
    delayMs: SWAP_DEBOUNCE_MS,
    load: (input: { account: string; side: SwapSide; request: QuoteRequest }, signal) => preCalculateSwap(input.account, input.request, signal),
    onResult: (quote, { side }) => {
      $swapForm.set({ ...$swapForm.get(), ...quotedSide(side, quote, $coins.get()), quote, quoting: false, quoteFailed: false });
    },
    onError: (error) => $swapForm.set({ ...$swapForm.get(), quote: undefined, quoting: false, quoteFailed: true, quoteError: errorText(error, { fallback: 'common_something_went_wrong' }) }),
  });

  /** Asks for a quote 300 ms after the last change, by the side typed; only the newest answer counts. */
  function scheduleQuote(): void {
    quotes.cancel();
    const form = $swapForm.get();
    const { from, to } = $swapSelection.get();
    const account = $accountId.get();
    const side = form.typed;
    const amount = side === 'source' ? form.sourceAmount : side === 'destination' ? form.destinationAmount : '';
    if (!side || !from || !to || !account || isZeroAmount(amount)) {
      $swapForm.set({ ...$swapForm.get(), quote: undefined, quoting: false, quoteFailed: false });
      return;
    }
    $swapForm.set({ ...$swapForm.get(), quoting: true, quoteFailed: false });
    quotes.schedule({ account, side, request: requestOf(side, amount, from, to) });
  }

  /** SPEC §5: digits, an optional point or comma, at most 8 digits either side; anything else is not taken. */
  function typeAmount(side: SwapSide, typed: string): void {
    const text = acceptTypedAmount(typed);
    if (text === undefined) return;
    const other = side === 'source' ? { destinationAmount: '' } : { sourceAmount: '' };
    $swapForm.set({ ...$swapForm.get(), [side === 'source' ? 'sourceAmount' : 'destinationAmount']: text, ...other, typed: text === '' ? null : side, quote: undefined });
    scheduleQuote();
  }

  /** SPEC §2: the arrow exchanges the two currencies and the two amounts; the quote follows the side still typed. */
  function reversePair(): void {
    const pair = $swapSelection.get();
    if (!$canReverse.get() || !pair.from || !pair.to) return;
    const form = $swapForm.get();
    $swapSelection.set({ from: pair.to, to: pair.from, fresh: false });
    const typed: SwapSide | null = form.typed === 'source' ? 'destination' : form.typed === 'destination' ? 'source' : null;
    $swapForm.set({ ...form, sourceAmount: form.destinationAmount, destinationAmount: form.sourceAmount, typed, quote: undefined });
    scheduleQuote();
  }

  function resetAmounts(): void {
    quotes.cancel();
    $swapForm.set({ ...EMPTY_SWAP_FORM });
  }

  /** The source amount the limits apply to: typed, or the quote's when the destination was typed. */
  const $sourceForChecks = computed($swapForm, (form) => {
    const typedSource = form.typed === 'source' ? normalTypedAmount(form.sourceAmount) : (form.quote?.sourceAmount ?? '');
    return /^\d+(\.\d+)?$/.test(typedSource) ? typedSource : '';
  });

  const $swapProblem = computed([$sourceForChecks, $swapLimit, $balances, $swapSelection, $locale], (source, limit, balances, pair, locale) =>
    pair.from
      ? swapProblemOf({ source, limit: limit.data, available: balances.data?.find((i) => i.currency === pair.from)?.totalAvailable, currency: pair.from, ticker: tickerOf(pair.from), locale })
      : null,
  );

  const $canContinue = computed([$swapForm, $swapProblem, $swapLimit], (form, problem, limit) => !!form.quote && !form.quoting && !form.submitting && problem === null && !!limit.data);

  return { $swapForm, $swapLimit, $swapProblem, $canContinue, typeAmount, reversePair, resetAmounts, cancelQuotes: () => quotes.cancel() };
}

export type SwapAmountStep = ReturnType<typeof createSwapAmount>;
