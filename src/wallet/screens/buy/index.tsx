import { useStore } from '@nanostores/react';
import { getPagePath } from '@nanostores/router';
import type { ReactNode } from 'react';
import { compareDecimals } from '../../../lib/amount.ts';
import { formatCrypto, formatCryptoWithCode, formatFiat, tickerOf } from '../../../lib/format.ts';
import { findFiat } from '../../../lib/currencies.ts';
import { $buyCoins, buyFlow, type BuyVisit } from '../../../stores/buy.ts';
import { formatCountdown } from '../../../stores/primitives/countdown.ts';
import { $buyCurrencies, $buyEnabled, $buyUnavailableReason, $sellEnabled } from '../../../stores/buy-sell.ts';
import { errorText } from '../../../stores/errors.ts';
import { $catalogue, $coins } from '../../../stores/catalogue.ts';
import { $t, type Translate } from '../../../stores/i18n.ts';
import type { MessageKey } from '../../../lib/text.ts';
import { $router, type RouteName } from '../../../stores/router.ts';
import { $locale } from '../../../stores/settings.ts';
import { FIAT_SYMBOLS } from '../../../stores/user.ts';
import { AssetRow } from '../../ui/asset-row.tsx';
import { Glyph } from '../../ui/glyph.tsx';
import { MainAction } from '../../ui/main-action.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { Spinner } from '../../ui/spinner.tsx';
import { AmountBox, CoinChip, DetailLine } from '../../ui/amount-box.tsx';
import { FlowView } from '../../ui/flow-view.tsx';

/** The buy flow (SPEC §2 Buy), one lazy chunk: /home/buy-sell, then get, pay, order (and method), review. */
export function BuyArea({ route }: { route: RouteName }) {
  return route === 'buySell' ? <BuySellScreen /> : <BuyFlow route={route} />;
}

const BUY_SCREENS: Partial<Record<RouteName, (props: { flow: BuyVisit }) => ReactNode>> = { buyPay: PayScreen, buyMethod: MethodScreen, buyOrder: OrderScreen, buyOrderReview: ReviewScreen };

function BuyFlow({ route }: { route: RouteName }) {
  const Screen = BUY_SCREENS[route] ?? GetScreen;
  return <FlowView flow={buyFlow}>{(flow) => <Screen flow={flow} />}</FlowView>;
}

function fiatName(currency: string): string {
  return findFiat(currency)?.name ?? currency;
}

/** A payment method in the user's language: the gateway names it in English (SPEC §3 paymentMethodName); MoonPay's codes too. */
const METHOD_NAMES: Partial<Record<string, MessageKey>> = {
  CARD: 'buy_method_card',
  credit_debit_card: 'buy_method_card',
  apple_pay: 'buy_method_apple_pay',
  google_pay: 'buy_method_google_pay',
  sepa_bank_transfer: 'buy_method_bank_transfer',
  gbp_bank_transfer: 'buy_method_bank_transfer',
  ach_bank_transfer: 'buy_method_bank_transfer',
};
function methodName(method: { paymentMethodCode: string; paymentMethodName: string }, t: Translate): string {
  const key = METHOD_NAMES[method.paymentMethodCode];
  return key ? t(key) : method.paymentMethodName;
}

function money(value: string, fiat: string, locale: 'en' | 'ru'): string {
  return formatFiat(value, FIAT_SYMBOLS[fiat] ?? `${fiat} `, locale);
}

function Entry({ title, hint, href, disabled, testId, badge }: { title: string; hint: string; href: string; disabled?: boolean; testId: string; badge?: string }) {
  const body = (
    <>
      <span className="w-11 h-11 rounded-full bg-bg inline-flex items-center justify-center text-primary shrink-0">
        <Glyph name="card" size={22} />
      </span>
      <span className="flex-1 min-w-0 flex flex-col">
        <span className="font-600">{title}</span>
        <span className="text-sm text-muted">{hint}</span>
      </span>
      {badge ? <span className="text-xs font-600 text-muted border border-solid border-line rounded-full px-2 py-0.5 shrink-0">{badge}</span> : <Glyph name="chevron" size={18} className="text-muted" />}
    </>
  );
  return disabled ? (
    <div className="asset-row opacity-50 cursor-not-allowed" aria-disabled="true" data-testid={testId}>
      {body}
    </div>
  ) : (
    <a href={href} className="asset-row" data-testid={testId}>
      {body}
    </a>
  );
}

/**
 * /home/buy-sell: buy with a card (disabled, with the reason, when the gateway has no card provider or the provider
 * does not answer); sell disabled unless SELL_ENABLED.
 */
function BuySellScreen() {
  const t = useStore($t);
  const buyOn = useStore($buyEnabled);
  const reason = useStore($buyUnavailableReason);
  const buyEnabled = buyOn && reason === null;
  const sellEnabled = useStore($sellEnabled);
  return (
    <div className="screen" data-testid="buy-sell">
      <ScreenHeader title={t('buysell_title')} back={getPagePath($router, 'home')} backLabel={t('common_back')} />
      <div className="list-card">
        <Entry
          title={t('buysell_buy')}
          hint={buyOn && reason ? reason : t('buysell_buy_hint')}
          href={getPagePath($router, 'buyGet')}
          disabled={!buyEnabled}
          badge={buyEnabled ? undefined : t('buysell_unavailable')}
          testId="buy-entry"
        />
        <Entry
          title={t('buysell_sell')}
          hint={t('buysell_sell_hint')}
          href={getPagePath($router, 'sellGet')}
          disabled={!sellEnabled}
          badge={sellEnabled ? undefined : t('buysell_unavailable')}
          testId="sell-entry"
        />
      </div>
    </div>
  );
}

/** /buy/get: the active USDC coins; one the account lacks is added when picked. */
function GetScreen({ flow }: { flow: BuyVisit }) {
  const t = useStore($t);
  const catalogue = useStore($catalogue);
  const buyEnabled = useStore($buyEnabled);
  const available = useStore($buyCoins);
  const offered = useStore($buyCurrencies);
  // With buying off (reached by its address) nothing is offered, as when no coin is on sale.
  const coins = buyEnabled ? available : [];
  const buy = useStore(flow.$buy);
  return (
    <div className="screen" data-testid="buy-get">
      <ScreenHeader title={t('buy_get_title')} back={getPagePath($router, 'buySell')} backLabel={t('common_back')} />
      <p className="m-0 text-sm text-muted">{t('buy_get_hint')}</p>
      {buyEnabled && offered.error ? (
        <p className="card m-0 text-danger text-center" role="alert" data-testid="buy-get-error">
          {errorText(offered.error, { fallback: 'buy_provider_down' })}
        </p>
      ) : !catalogue.data || (buyEnabled && !offered.data) ? (
        <Spinner size={32} label={t('common_loading')} />
      ) : coins.length === 0 ? (
        <p className="card m-0 text-muted text-center">{t('buy_get_empty')}</p>
      ) : (
        <div className="list-card">
          {coins.map((coin) => (
            <AssetRow
              key={coin.currency}
              coin={coin}
              subtitle={`${tickerOf(coin.currency)} · ${coin.blockchain}`}
              onClick={() => void flow.chooseBuyCrypto(coin.currency)}
              disabled={buy.choosing !== null}
              testId="buy-coin"
              end={buy.choosing === coin.currency ? <Spinner size={18} label={t('common_loading')} /> : <Glyph name="chevron" size={18} className="text-muted" />}
            />
          ))}
        </div>
      )}
    </div>
  );
}

/** /buy/pay: the fiat; picked and skipped when it is the only one, unless the user came back from the order. */
function PayScreen({ flow }: { flow: BuyVisit }) {
  const t = useStore($t);
  const buy = useStore(flow.$buy);
  const options = useStore(flow.$fiatOptions);
  if (!buy.to) return null;
  return (
    <div className="screen" data-testid="buy-pay">
      <ScreenHeader title={t('buy_pay_title')} back={getPagePath($router, buy.backFromOrder ? 'buyOrder' : 'buyGet')} backLabel={t('common_back')} />
      <p className="m-0 text-sm text-muted">{t('buy_pay_hint')}</p>
      {options.error ? (
        <p className="card m-0 text-danger" role="alert" data-testid="buy-pay-error">
          {errorText(options.error, { fallback: 'common_something_went_wrong' })}
        </p>
      ) : !options.data ? (
        <Spinner size={32} label={t('common_loading')} />
      ) : (
        <div className="list-card" role="radiogroup" aria-label={t('buy_pay_title')}>
          {options.data.map((option) => (
            <button
              key={option.fiatCurrency}
              type="button"
              role="radio"
              aria-checked={buy.from === option.fiatCurrency}
              className="asset-row"
              onClick={() => flow.chooseBuyFiat(option)}
              data-testid="buy-fiat"
              data-currency={option.fiatCurrency}
            >
              <span className="w-10 h-10 rounded-full bg-bg inline-flex items-center justify-center font-700 shrink-0">{FIAT_SYMBOLS[option.fiatCurrency] ?? option.fiatCurrency[0]}</span>
              <span className="flex-1 min-w-0 flex flex-col">
                <span className="font-600">{option.fiatCurrency}</span>
                <span className="text-sm text-muted">{fiatName(option.fiatCurrency)}</span>
              </span>
              <Glyph name="chevron" size={18} className="text-muted" />
            </button>
          ))}
        </div>
      )}
    </div>
  );
}

/** /buy/method: each method's name and fiat amount. */
function MethodScreen({ flow }: { flow: BuyVisit }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const buy = useStore(flow.$buy);
  if (!buy.to || !buy.from) return null;
  return (
    <div className="screen" data-testid="buy-method">
      <ScreenHeader title={t('buy_method_title')} back={getPagePath($router, 'buyOrder')} backLabel={t('common_back')} />
      {buy.quoting ? (
        <Spinner size={32} label={t('common_loading')} />
      ) : buy.methods.length === 0 ? (
        <p className="card m-0 text-muted text-center" data-testid="buy-method-empty">
          {t('buy_method_enter_amount')}
        </p>
      ) : (
        <div className="list-card" role="radiogroup" aria-label={t('buy_method_title')}>
          {buy.methods.map((method) => (
            <button
              key={method.paymentMethodCode}
              type="button"
              role="radio"
              aria-checked={buy.method === method.paymentMethodCode}
              className="asset-row"
              onClick={() => flow.chooseBuyMethod(method.paymentMethodCode)}
              data-testid="buy-method-item"
            >
              <span className="w-10 h-10 rounded-full bg-bg inline-flex items-center justify-center text-primary shrink-0">
                <Glyph name="card" size={20} />
              </span>
              <span className="flex-1 min-w-0 flex flex-col">
                <span className="font-600">{methodName(method, t)}</span>
                <span className="text-sm text-muted" data-testid="buy-method-limits">
                  {t('buy_limit_error', { min: formatCrypto(method.minLimit, 2, locale), max: formatCrypto(method.maxLimit, 2, locale), currency: method.fiatCurrency })}
                </span>
              </span>
              <span className="font-600 whitespace-nowrap">{money(method.fiatAmount, method.fiatCurrency, locale)}</span>
            </button>
          ))}
        </div>
      )}
    </div>
  );
}

function FiatChip({ fiat, onClick }: { fiat: string; onClick: () => void }) {
  return (
    <button type="button" onClick={onClick} className="flex items-center gap-2 shrink-0 text-fg font-600 bg-transparent border-0 p-0 cursor-pointer text-base" data-testid="buy-from-currency">
      <span className="w-8 h-8 rounded-full bg-bg inline-flex items-center justify-center font-700">{FIAT_SYMBOLS[fiat] ?? fiat[0]}</span>
      <span>{fiat}</span>
      <Glyph name="chevron" size={16} className="text-muted" />
    </button>
  );
}

/** /buy/order: both amounts, the method, the limit message, and the review button. */
function OrderScreen({ flow }: { flow: BuyVisit }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const coins = useStore($coins);
  const buy = useStore(flow.$buy);
  const problem = useStore(flow.$buyProblem);
  const method = useStore(flow.$chosenMethod);
  const canReview = useStore(flow.$canReviewBuy);
  const reviewing = useStore(flow.$reviewing);
  const coin = buy.to ? coins[buy.to] : undefined;
  if (!buy.to || !buy.from) return null;
  if (!coin) return <Spinner label={t('common_loading')} />;
  const rate = (method ?? buy.methods[0])?.rate;
  const message = problem ? t(problem.key, problem.params) : buy.quoteFailed ? (buy.quoteError ?? t('common_something_went_wrong')) : '';
  return (
    <div className="screen" data-testid="buy-order">
      <ScreenHeader title={t('buy_order_title', { currency: tickerOf(coin.currency) })} back={getPagePath($router, 'buyGet')} backLabel={t('common_back')} />
      <div className="flex flex-col gap-2">
        <AmountBox label={t('buy_you_pay')} chip={<FiatChip fiat={buy.from} onClick={flow.changeBuyFiat} />} value={buy.fromAmount} onChange={(text) => flow.typeBuyAmount('from', text)} invalid={problem !== null} testId="buy-from" />
        <AmountBox label={t('buy_you_get')} chip={<CoinChip coin={coin} href={getPagePath($router, 'buyGet')} testId="buy-to-currency" />} value={buy.toAmount} onChange={(text) => flow.typeBuyAmount('to', text)} currency={coin.currency} testId="buy-to" />
      </div>
      <p className="m-0 min-h-5 text-sm text-danger" role="alert" data-testid="buy-error">
        {message}
      </p>
      <a href={getPagePath($router, 'buyMethod')} className="card flex items-center gap-3 text-fg no-underline" data-testid="buy-method-link">
        <Glyph name="card" size={22} className="text-primary" />
        <span className="flex-1 min-w-0 flex flex-col">
          <span className="text-sm text-muted">{t('buy_method_label')}</span>
          <span className="font-600">{method ? methodName(method, t) : t('buy_choose_method')}</span>
        </span>
        <Glyph name="chevron" size={18} className="text-muted" />
      </a>
      <div className="card flex flex-col gap-2 text-sm">
        <DetailLine
          label={t('buy_rate', { crypto: tickerOf(coin.currency), rate: rate ? formatCrypto(rate, 2, locale) : '…', fiat: buy.from })}
          value={buy.quoting ? t('buy_quoting') : ''}
          testId="buy-rate"
        />
        {(method ?? buy.methods[0]) && (
          <DetailLine
            label={t('buy_limits')}
            value={t('buy_limit_error', { min: formatCrypto((method ?? buy.methods[0])?.minLimit ?? '0', 2, locale), max: formatCrypto((method ?? buy.methods[0])?.maxLimit ?? '0', 2, locale), currency: buy.from })}
            testId="buy-limits"
          />
        )}
      </div>
      <div className="mt-auto">
        <MainAction pinned label={t('buy_review_button')} onClick={() => void flow.continueToBuyReview()} disabled={!canReview} busy={reviewing} />
      </div>
    </div>
  );
}

/** /buy/order/review: the fixed order for 300 s; at zero the list is disabled and the rate can be renewed. */
function ReviewScreen({ flow }: { flow: BuyVisit }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const coins = useStore($coins);
  const review = useStore(flow.$buyReview);
  const seconds = useStore(flow.$buySecondsLeft);
  if (!review) return null;
  const { method } = review;
  const coin = coins[review.currency];
  const expired = seconds === 0;
  const crypto = (value: string) => formatCryptoWithCode(value, review.currency, coin?.round, locale);
  return (
    <div className="screen" data-testid="buy-review">
      <ScreenHeader title={t('buy_review_title')} back={getPagePath($router, 'buyOrder')} backLabel={t('common_back')} />
      <div className={`card flex flex-col gap-3 transition-opacity ${expired ? 'opacity-40 pointer-events-none' : ''}`} aria-disabled={expired} data-testid="buy-review-list">
        <DetailLine label={t('buy_review_pay')} value={money(method.fiatAmount, method.fiatCurrency, locale)} testId="buy-review-pay" />
        <DetailLine label={t(method.estimate ? 'buy_review_get_estimate' : 'buy_review_get')} value={method.estimate ? `≈ ${crypto(method.cryptoAmount)}` : crypto(method.cryptoAmount)} testId="buy-review-get" />
        {method.fees && (
          <DetailLine
            label={t('buy_review_fees')}
            value={[
              t('buy_review_fee_provider', { amount: money(method.fees.provider, method.fiatCurrency, locale) }),
              t('buy_review_fee_network', { amount: money(method.fees.network, method.fiatCurrency, locale) }),
              // The wallet's own fee is named only where it takes one.
              ...(compareDecimals(method.fees.partner, '0') > 0 ? [t('buy_review_fee_wallet', { amount: money(method.fees.partner, method.fiatCurrency, locale) })] : []),
            ].join(', ')}
            testId="buy-review-fees"
          />
        )}
        {method.rate && <DetailLine label={t('buy_review_rate')} value={`1 ${tickerOf(review.currency)} ≈ ${formatCrypto(method.rate, 2, locale)} ${method.fiatCurrency}`} testId="buy-review-rate" />}
        <DetailLine label={t('buy_review_method')} value={methodName(method, t)} testId="buy-review-method" />
        {coin && <DetailLine label={t('buy_review_network')} value={coin.blockchain} testId="buy-review-network" />}
      </div>
      {expired ? (
        <p className="m-0 text-center text-danger font-600" role="status" data-testid="buy-expired">
          {t('buy_order_expired')}
        </p>
      ) : (
        <p className="m-0 text-center text-muted" role="timer" data-testid="buy-countdown">
          {t('buy_rate_valid', { time: formatCountdown(seconds) })}
        </p>
      )}
      {method.estimate && (
        <p className="m-0 text-sm text-muted" data-testid="buy-review-estimate">
          {t('buy_review_estimate_note', { currency: tickerOf(review.currency) })}
        </p>
      )}
      <p className="m-0 text-sm text-muted text-center">{t(method.estimate ? 'buy_redirect_hint_onramp' : 'buy_redirect_hint')}</p>
      <div className="mt-auto">
        {expired ? (
          <MainAction pinned label={t('buy_update_rate')} onClick={() => void flow.updateBuyRate()} busy={review.busy} />
        ) : (
          <MainAction pinned label={t('buy_pay_button')} onClick={() => void flow.payBuyOrder(t('buy_order_description', { currency: tickerOf(review.currency) }))} busy={review.busy} />
        )}
      </div>
    </div>
  );
}
