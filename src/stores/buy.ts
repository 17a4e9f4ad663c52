import { atom, computed, map } from 'nanostores';
import { getPagePath, openPage, redirectPage } from '@nanostores/router';
import { cancelBuyOrder, confirmBuyOrder, createBuyOrder, getFiatAvailability, getPaymentMethods, type BuyQuote, type BuyRequestParams, type FiatAvailability, type MethodsRequest, type PaymentMethodItem } from '../api/buy.ts';
import { toWalletError } from '../api/errors.ts';
import { compareDecimals } from '../lib/amount.ts';
import { formatCrypto } from '../lib/format.ts';
import type { Locale } from '../lib/preferences.ts';
import type { CoinMeta } from '../lib/currencies.ts';
import { realEmail } from '../lib/messenger-email.ts';
import { newIdempotencyKey } from '../lib/idempotency-key.ts';
import { acceptTypedAmount, isZeroAmount, normalTypedAmount } from '../lib/typed-amount.ts';
import type { MessageKey } from '../lib/text.ts';
import { platform } from '../platform/platform.ts';
import { $accountId } from './account.ts';
import { $balances, addCurrencies } from './balances.ts';
import { $activeCoins } from './catalogue.ts';
import { $buyCurrencies } from './buy-sell.ts';
import { errorText, showErrorToast } from './errors.ts';
import { createCountdown } from './primitives/countdown.ts';
import { createDebouncedRequest } from './primitives/debounced-request.ts';
import { createFlow } from './primitives/flow.ts';
import { createResume } from './primitives/resume.ts';
import { showToast } from './toasts.ts';
import { $t } from './i18n.ts';
import { refreshBalances } from './balances.ts';
import { createQuery } from './query.ts';
import { $router } from './router.ts';
import { $locale } from './settings.ts';
import { $profile } from './user.ts';

/** SPEC §5, §9: rate requests wait 300 ms after the last keystroke; the review lasts 300 s. */
export const BUY_DEBOUNCE_MS = 300;
export const BUY_REVIEW_SECONDS = 300;
/** SPEC §2 /buy/get: only active crypto currencies whose name contains this are offered. */
export const BUY_CURRENCY_MARK = 'USDC';

/** /buy/get: the active coins on sale; of those, the ones the gateway's provider sells when it has said which. */
export function buyableCoins(coins: readonly CoinMeta[], offered?: readonly string[]): CoinMeta[] {
  return coins.filter((coin) => coin.active && coin.currency.includes(BUY_CURRENCY_MARK) && (!offered || offered.includes(coin.currency)));
}
export const $buyCoins = computed([$activeCoins, $buyCurrencies], (coins, offered) => buyableCoins(coins, offered.data?.currencies ?? []));

export type BuySide = 'from' | 'to';

/** SPEC §3 buy state: methods, method, rateId, from (fiat), to (crypto), fromAmount, toAmount; and the form's own flags. */
export type BuyState = {
  to: string | null;
  from: string | null;
  geoId: string | null;
  methods: PaymentMethodItem[];
  /** The chosen method's code (item ids change with every quote). */
  method: string | null;
  rateId: string | null;
  fromAmount: string;
  toAmount: string;
  /** Which amount the user typed: the quote goes by it and fills the other. */
  typed: BuySide | null;
  quoting: boolean;
  quoteFailed: boolean;
  /** Why the last quote failed, in the user's words (no current price...). */
  quoteError?: string | undefined;
  /** The fiat chooser was opened from the order screen: it is then never skipped. */
  backFromOrder: boolean;
  choosing: string | null;
};

const EMPTY: BuyState = {
  to: null,
  from: null,
  geoId: null,
  methods: [],
  method: null,
  rateId: null,
  fromAmount: '',
  toAmount: '',
  typed: null,
  quoting: false,
  quoteFailed: false,
  backFromOrder: false,
  choosing: null,
};
const availabilityQuery = createQuery<string, FiatAvailability[]>({ key: (address) => address || '-', load: (address) => getFiatAvailability(address || undefined) });

/** The method whose amounts fill the other side: the chosen one, else the first returned (SPEC §5). */
export function leadingMethod(methods: readonly PaymentMethodItem[], code: string | null): PaymentMethodItem | undefined {
  return methods.find((m) => m.paymentMethodCode === code) ?? methods[0];
}

/** A quote's answer applied to the form: the side not typed is filled from the leading method. */
export function applyQuote(state: BuyState, side: BuySide, quote: Pick<BuyQuote, 'methods' | 'fixedRateId'>): BuyState {
  const lead = leadingMethod(quote.methods, state.method);
  const other = side === 'from' ? { toAmount: lead?.cryptoAmount ?? '' } : { fromAmount: lead?.fiatAmount ?? '' };
  // With one method there is nothing to choose: it is preselected (issue 19 item 18).
  const only = quote.methods.length === 1 ? (quote.methods[0]?.paymentMethodCode ?? null) : null;
  const method = state.method && quote.methods.some((m) => m.paymentMethodCode === state.method) ? state.method : only;
  return { ...state, ...other, methods: quote.methods, rateId: quote.fixedRateId, method, quoting: false, quoteFailed: false };
}

/** SPEC §2: with one fiat option, /buy/pay picks it and is skipped, unless the user came back to it from the order. */
export function shouldSkipFiatChooser(options: readonly FiatAvailability[] | undefined, backFromOrder: boolean): FiatAvailability | undefined {
  return options && options.length === 1 && !backFromOrder ? options[0] : undefined;
}

export type BuyProblem = { key: MessageKey; params: Record<string, string> };

/** SPEC §5: outside the method's limits the fiat field is in error with 'Min {min} - max {max} {currency}'. */
export function buyLimitProblem(fiatAmount: string, method: PaymentMethodItem | undefined, locale: Locale = 'en'): BuyProblem | null {
  if (!method || !/^\d+(\.\d+)?$/.test(fiatAmount) || isZeroAmount(fiatAmount)) return null;
  if (compareDecimals(fiatAmount, method.minLimit) >= 0 && compareDecimals(fiatAmount, method.maxLimit) <= 0) return null;
  // Written as the labels are: the language's decimal mark and grouping.
  const amount = (value: string) => formatCrypto(value, 2, locale);
  return { key: 'buy_limit_error', params: { min: amount(method.minLimit), max: amount(method.maxLimit), currency: method.fiatCurrency } };
}

/** SPEC §5: review is disabled while the crypto amount is 0, no method is chosen, or limits are violated. */
export function canReviewBuy(state: BuyState, problem: BuyProblem | null): boolean {
  const method = state.methods.find((m) => m.paymentMethodCode === state.method);
  return !!method && !!state.rateId && !state.quoting && problem === null && !isZeroAmount(method.cryptoAmount);
}
export type BuyReview = {
  method: PaymentMethodItem;
  rateId: string;
  currency: string;
  /** Local time (ms) at which the fixed rate runs out. */
  deadline: number;
  busy: boolean;
};
/** SPEC §3 order confirm's request parameters, from the browser (the ip is the gateway's to see, so empty). */
export function requestParamsOf(email: string | null): BuyRequestParams {
  const nav = globalThis.navigator as Navigator | undefined;
  const screen = globalThis.screen as Screen | undefined;
  return {
    email: email ?? '',
    browserLanguage: nav?.language ?? 'en',
    screenHeight: screen?.height ?? 0,
    screenWidth: screen?.width ?? 0,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    userAgent: nav?.userAgent ?? '',
    javascriptEnabled: true,
    ip: '',
  };
}

/** Where the provider's page sends the browser back: the bought asset's screen, where the purchase shows as Pending. */
function returnUrlOf(currency: string): string {
  return `${globalThis.location?.origin ?? ''}${getPagePath($router, 'asset', { currency })}`;
}

/** What a reload, or the browser coming back from the provider's page, brings back (issue 19 items 14, 15). */
type BuyResume = {
  buy: Pick<BuyState, 'to' | 'from' | 'geoId' | 'methods' | 'method' | 'rateId' | 'fromAmount' | 'toAmount' | 'typed'>;
  review: BuyReview | null;
  /** The order handed to the provider's page: coming back here without paying gives it up. */
  handedOff: string | null;
};
const buyResume = createResume<BuyResume>('buy');
const BUY_RESUMED_ROUTES: readonly string[] = ['buyMethod', 'buyOrder', 'buyOrderReview'];

/** The buy flow (SPEC §2 Buy): get, pay, order (and method), review; one visit's state, guards and cleanup. */
export const buyFlow = createFlow(['buyGet', 'buyPay', 'buyMethod', 'buyOrder', 'buyOrderReview'], (scope) => {
  const $buy = map<BuyState>({ ...EMPTY });
  const $availabilityArgs = computed([$buy, $balances], (buy, balances) => {
    if (!buy.to) return null;
    return balances.data?.find((item) => item.currency === buy.to)?.depositAddress ?? '';
  });
  /** /buy/pay: the fiat currencies a purchase of the chosen crypto can be paid in. */
  const $fiatOptions = availabilityQuery.watch($availabilityArgs);
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

  /** /buy/get: picking a crypto the account lacks adds it first (SPEC §2), then on to the fiat. */
  async function chooseBuyCrypto(currency: string): Promise<void> {
    if ($buy.get().choosing) return;
    $buy.setKey('choosing', currency);
    try {
      await addCurrencies([currency]);
      const state = $buy.get();
      if (state.to !== currency) resetAmounts({ to: currency });
      $buy.setKey('backFromOrder', false);
      openPage($router, 'buyPay');
    } catch (error) {
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    } finally {
      $buy.setKey('choosing', null);
    }
  }

  /** /buy/pay: the fiat chosen; amounts in another currency start again. */
  function chooseBuyFiat(option: FiatAvailability, replace = false): void {
    const state = $buy.get();
    if (state.from !== option.fiatCurrency) resetAmounts({ from: option.fiatCurrency, geoId: option.geoId });
    $buy.setKey('backFromOrder', false);
    if (replace) redirectPage($router, 'buyOrder');
    else openPage($router, 'buyOrder');
  }

  /** /buy/pay with one fiat option: it is picked and the chooser skipped (replaced in history). */
  const $onlyFiat = computed([$router, $buy, $fiatOptions], (page, buy, options) => (page?.route === 'buyPay' && buy.to ? shouldSkipFiatChooser(options.data, buy.backFromOrder) : undefined));
  scope.follow($onlyFiat, (only) => {
    if (only) chooseBuyFiat(only, true);
  });

  /** The order screen's currency chip: back to the fiat chooser, which then never skips itself. */
  function changeBuyFiat(): void {
    $buy.setKey('backFromOrder', true);
    openPage($router, 'buyPay');
  }

  /** /buy/method: the method chosen; the side not typed follows its amounts. */
  function chooseBuyMethod(code: string): void {
    const state = $buy.get();
    const method = state.methods.find((m) => m.paymentMethodCode === code);
    if (!method) return;
    const other = state.typed === 'to' ? { fromAmount: method.fiatAmount } : { toAmount: method.cryptoAmount };
    $buy.set({ ...state, ...other, method: code });
    openPage($router, 'buyOrder');
  }

  /** The fiat amount the limits apply to: typed, or the leading method's when the crypto side was typed. */
  const $fiatForChecks = computed($buy, (buy) => (buy.typed === 'from' ? normalTypedAmount(buy.fromAmount) : (leadingMethod(buy.methods, buy.method)?.fiatAmount ?? '')));

  const $buyProblem = computed([$fiatForChecks, $buy, $locale], (fiat, buy, locale) => buyLimitProblem(fiat, leadingMethod(buy.methods, buy.method), locale));

  const $canReviewBuy = computed([$buy, $buyProblem], canReviewBuy);

  const $buyReview = atom<BuyReview | null>(null);
  const $reviewing = atom(false);
  const countdown = createCountdown(computed($buyReview, (review) => review?.deadline ?? null), () => platform().now());
  /** Seconds left on the review, ticking once a second while a screen shows it. */
  const $buySecondsLeft = countdown.$secondsLeft;

  /** A fresh quote for the chosen method's fiat amount: the review's 300 s start with it. */
  async function freshReview(): Promise<BuyReview> {
    const state = $buy.get();
    const method = $chosenMethod.get();
    if (!method || !state.to) throw new Error('nothing to review');
    const request = quoteRequest('from', method.fiatAmount);
    if (!request) throw new Error('nothing to review');
    const quote = await getPaymentMethods(request);
    const fresh = quote.methods.find((m) => m.paymentMethodCode === method.paymentMethodCode);
    if (!fresh) throw new Error('the method is no longer offered');
    $buy.set({ ...$buy.get(), methods: quote.methods, rateId: quote.fixedRateId, toAmount: fresh.cryptoAmount, fromAmount: fresh.fiatAmount, typed: 'from' });
    const seconds = Math.min(quote.expiresInSeconds ?? BUY_REVIEW_SECONDS, BUY_REVIEW_SECONDS);
    return { method: fresh, rateId: quote.fixedRateId, currency: state.to, deadline: platform().now() + seconds * 1000, busy: false };
  }

  /** The order screen's review button. */
  async function continueToBuyReview(): Promise<void> {
    if (!$canReviewBuy.get() || $reviewing.get()) return;
    $reviewing.set(true);
    try {
      $buyReview.set(await freshReview());
      countdown.restart();
      openPage($router, 'buyOrderReview');
    } catch (error) {
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    } finally {
      $reviewing.set(false);
    }
  }

  /** 'Update rate' at zero: a fresh quote, and the countdown starts again. */
  async function updateBuyRate(): Promise<void> {
    const review = $buyReview.get();
    if (!review || review.busy) return;
    $buyReview.set({ ...review, busy: true });
    try {
      $buyReview.set(await freshReview());
      countdown.restart();
    } catch (error) {
      const current = $buyReview.get();
      if (current) $buyReview.set({ ...current, busy: false });
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    }
  }

  /**
   * The review's main action: the order is created with a fresh idempotency key, confirmed, and the browser goes to
   * the provider's page (SPEC §4). Order failures show the server's message or common_something_went_wrong.
   */
  async function payBuyOrder(description: string): Promise<void> {
    const review = $buyReview.get();
    const account = $accountId.get();
    if (!review || review.busy || !account || $buySecondsLeft.get() <= 0) return;
    $buyReview.set({ ...review, busy: true });
    try {
      const order = await createBuyOrder({
        rateId: review.rateId,
        itemId: review.method.itemId,
        description,
        returnUrl: returnUrlOf(review.currency),
        idempotencyKey: newIdempotencyKey(),
        account,
        fiatAmount: review.method.fiatAmount,
      });
      $handedOff.set(order.id);
      const { redirectUrl } = await confirmBuyOrder(order.id, account, requestParamsOf(realEmail($profile.get().data?.email)));
      platform().leave(redirectUrl);
    } catch (error) {
      $handedOff.set(null);
      const current = $buyReview.get();
      if (current) $buyReview.set({ ...current, busy: false });
      showErrorToast(error, { serverMessage: true, fallback: 'common_something_went_wrong' });
      // A rate the price has moved away from is refused by the gateway: the review shows a fresh one to pay at.
      const code = toWalletError(error).code;
      if (code === 'B2C_RATE_EXPIRED' || code === 'B2C_ORDER_EXPIRED') await updateBuyRate();
    }
  }

  /** The order on the provider's page; set until the browser comes back to the review. */
  const $handedOff = atom<string | null>(null);

  /**
   * Back on the review from the provider's page (browser back, or a reload) without the provider's return: the
   * order is given up at once rather than left Pending for its 30 minutes. A payment made meanwhile is kept: then
   * the purchase is done and the asset's page shows it.
   */
  async function cameBack(): Promise<void> {
    const id = $handedOff.get();
    const account = $accountId.get();
    if (!id || !account) return;
    $handedOff.set(null);
    const review = $buyReview.get();
    if (review) $buyReview.set({ ...review, busy: false });
    try {
      const order = await cancelBuyOrder(id, account);
      if (order.state === 'COMPLETED' && $router.get()?.route === 'buyOrderReview') {
        void refreshBalances();
        openPage($router, 'asset', { currency: order.currency });
        return;
      }
      // An on-ramp still working on the payment (its checks, a bank transfer) keeps the order: nothing was cancelled.
      if (order.state !== 'PENDING') showToast($t.get()('buy_payment_cancelled'));
    } catch (error) {
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    }
    if ($buyReview.get()) await updateBuyRate();
  }

  if (BUY_RESUMED_ROUTES.includes($router.get()?.route ?? '')) {
    const stop = buyResume.restore(
      $accountId,
      (kept) => {
        $buy.set({ ...$buy.get(), ...kept.buy });
        if (kept.review) $buyReview.set({ ...kept.review, busy: false });
        $handedOff.set(kept.handedOff);
      },
      () => {
        $buy.set({ ...EMPTY });
        $buyReview.set(null);
        $handedOff.set(null);
      },
    );
    scope.onLeave(stop);
  } else buyResume.clear();
  const saveBuy = () => {
    const { to, from, geoId, methods, method, rateId, fromAmount, toAmount, typed } = $buy.get();
    buyResume.save($accountId.get(), to ? { buy: { to, from, geoId, methods, method, rateId, fromAmount, toAmount, typed }, review: $buyReview.get(), handedOff: $handedOff.get() } : undefined);
  };
  scope.follow($buy, saveBuy);
  scope.follow($buyReview, saveBuy);
  scope.follow($handedOff, saveBuy);
  // The order is given up once the account is known (after a reload) or when the browser shows this page again from its cache.
  const backFromProvider = () => {
    if ($handedOff.get() && $accountId.get()) void cameBack();
  };
  scope.follow($accountId, backFromProvider);
  queueMicrotask(backFromProvider);
  const onPageShow = (event: PageTransitionEvent) => {
    if (event.persisted) backFromProvider();
  };
  globalThis.addEventListener?.('pageshow', onPageShow as EventListener);
  scope.onLeave(() => globalThis.removeEventListener?.('pageshow', onPageShow as EventListener));

  scope.onLeave(() => {
    quotes.cancel();
    buyResume.clear();
  });
  scope.guard([$buy], (page) => {
    const { to, from } = $buy.get();
    if (page.route === 'buyPay' || page.route === 'buyMethod' || page.route === 'buyOrder') {
      if (!to) return { route: 'buyGet' };
      if (!from && page.route !== 'buyPay') return { route: 'buyPay' };
    }
    return undefined;
  });
  scope.guard([$buyReview], (page) => (page.route === 'buyOrderReview' && !$buyReview.get() ? { route: 'buyOrder' } : undefined));

  return {
    $buy,
    $fiatOptions,
    $chosenMethod,
    $buyProblem,
    $canReviewBuy,
    $buyReview,
    $reviewing,
    $buySecondsLeft,
    typeBuyAmount,
    chooseBuyCrypto,
    chooseBuyFiat,
    changeBuyFiat,
    chooseBuyMethod,
    continueToBuyReview,
    updateBuyRate,
    payBuyOrder,
  };
});

export type BuyVisit = ReturnType<typeof buyFlow.open>;
