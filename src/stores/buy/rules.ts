// The buy flow's rules and shapes (SPEC §2, §3, §5), pure: the steps in this folder and the tests read them.
import type { BuyQuote, BuyRequestParams, FiatAvailability, PaymentMethodItem } from '../../api/buy.ts';
import { compareDecimals } from '../../lib/amount.ts';
import { formatCrypto } from '../../lib/format.ts';
import type { Locale } from '../../lib/preferences.ts';
import type { CoinMeta } from '../../lib/currencies.ts';
import { isZeroAmount } from '../../lib/typed-amount.ts';
import type { MessageKey } from '../../lib/text.ts';

/** SPEC §5, §9: rate requests wait 300 ms after the last keystroke; the review lasts 300 s. */
export const BUY_DEBOUNCE_MS = 300;
export const BUY_REVIEW_SECONDS = 300;
/** SPEC §2 /buy/get: only active crypto currencies whose name contains this are offered. */
export const BUY_CURRENCY_MARK = 'USDC';

/** /buy/get: the active coins on sale; of those, the ones the gateway's provider sells when it has said which. */
export function buyableCoins(coins: readonly CoinMeta[], offered?: readonly string[]): CoinMeta[] {
  return coins.filter((coin) => coin.active && coin.currency.includes(BUY_CURRENCY_MARK) && (!offered || offered.includes(coin.currency)));
}

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

export const EMPTY_BUY: BuyState = {
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
