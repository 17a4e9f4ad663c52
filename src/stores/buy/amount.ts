// The buy's order form (SPEC §2 /buy/order, §5): the amount typed in fiat or crypto, the payment methods quoted for it
// 300 ms after the last keystroke (the newest answer wins), the method's limits it is checked against.
import { computed, map } from 'nanostores';
import { getPaymentMethods, type MethodsRequest } from '../../api/buy.ts';
import { acceptTypedAmount, isZeroAmount, normalTypedAmount } from '../../lib/typed-amount.ts';
import { $accountId } from '../account.ts';
import { errorText } from '../errors.ts';
import { createDebouncedRequest } from '../primitives/debounced-request.ts';
import { $locale } from '../settings.ts';
import { applyQuote, BUY_DEBOUNCE_MS, buyLimitProblem, canReviewBuy, EMPTY_BUY, leadingMethod, type BuySide, type BuyState } from './rules.ts';

export function createBuyAmount() {
  const $buy = map<BuyState>({ ...EMPTY_BUY });
  /** The method the user chose, in the newest quote. */
  const $chosenMethod = computed($buy, (buy) => buy.methods.find((m) => m.paymentMethodCode === buy.method) ?? null);

  const quotes = createDebouncedRequest({
    delayMs: BUY_DEBOUNCE_MS,
    load: (input: { side: BuySide; request: MethodsRequest }, signal) => getPaymentMethods(input.request, signal),
    onResult: (quote, { side }) => $buy.set(applyQuote($buy.get(), side, quote)),
    onError: (error) => $buy.set({ ...$buy.get(), methods: [], rateId: null, quoting: false, quoteFailed: true, quoteError: errorText(error, { fallback: 'common_something_went_wrong' }) }),
  });

  function quoteRequest(side: BuySide, amount: string) {
    const { to, geoId, from } = $buy.get();
    const account = $accountId.get();
    if (!to || !geoId || !account) return undefined;
    const fiat = from ? { fiatCurrency: from } : {};
    return side === 'from' ? { currency: to, geoId, account, ...fiat, fiatAmount: normalTypedAmount(amount) } : { currency: to, geoId, account, ...fiat, cryptoAmount: normalTypedAmount(amount) };
  }

  /** Asks for the methods 300 ms after the last change, by the side typed; only the newest answer counts. */
  function scheduleQuote(): void {
    quotes.cancel();
    const state = $buy.get();
    const side = state.typed;
    const amount = side === 'from' ? state.fromAmount : side === 'to' ? state.toAmount : '';
    const request = side ? quoteRequest(side, amount) : undefined;
    if (!side || !request || isZeroAmount(amount)) {
      $buy.set({ ...$buy.get(), methods: [], rateId: null, quoting: false, quoteFailed: false });
      return;
    }
    $buy.set({ ...$buy.get(), quoting: true, quoteFailed: false });
    quotes.schedule({ side, request });
  }

  /** SPEC §5: digits, an optional point or comma, at most 8 digits either side; editing one side clears the other until the answer. */
  function typeBuyAmount(side: BuySide, typed: string): void {
    const text = acceptTypedAmount(typed);
    if (text === undefined) return;
    const other = side === 'from' ? { toAmount: '' } : { fromAmount: '' };
    $buy.set({ ...$buy.get(), [side === 'from' ? 'fromAmount' : 'toAmount']: text, ...other, typed: text === '' ? null : side, rateId: null });
    scheduleQuote();
  }

  function resetAmounts(patch: Partial<BuyState>): void {
    quotes.cancel();
    $buy.set({ ...$buy.get(), methods: [], method: null, rateId: null, fromAmount: '', toAmount: '', typed: null, quoting: false, quoteFailed: false, ...patch });
  }

  /** The fiat amount the limits apply to: typed, or the leading method's when the crypto side was typed. */
  const $fiatForChecks = computed($buy, (buy) => (buy.typed === 'from' ? normalTypedAmount(buy.fromAmount) : (leadingMethod(buy.methods, buy.method)?.fiatAmount ?? '')));

  const $buyProblem = computed([$fiatForChecks, $buy, $locale], (fiat, buy, locale) => buyLimitProblem(fiat, leadingMethod(buy.methods, buy.method), locale));

  const $canReviewBuy = computed([$buy, $buyProblem], canReviewBuy);

  return { $buy, $chosenMethod, $buyProblem, $canReviewBuy, quoteRequest, typeBuyAmount, resetAmounts, cancelQuotes: () => quotes.cancel() };
}

export type BuyAmountStep = ReturnType<typeof createBuyAmount>;
