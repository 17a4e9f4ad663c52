import { FiatEquivalent } from '../../ui/fiat-equivalent.tsx';
import { OutcomeHero } from '../../ui/outcome.tsx';
import { useStore } from '@nanostores/react';
import { getPagePath, openPage } from '@nanostores/router';
import { formatCrypto, formatCryptoWithCode, tickerOf } from '../../../lib/format.ts';
import { $balances } from '../../../stores/balances.ts';
import { $coins } from '../../../stores/catalogue.ts';
import { $t } from '../../../stores/i18n.ts';
import { $router, type RouteName } from '../../../stores/router.ts';
import { $locale } from '../../../stores/settings.ts';
import { $pinCodeActive, $sourceChoices, $swapPairs, formatCountdown, swapFlow, swapRateText, type SwapChoice, type SwapVisit } from '../../../stores/swap.ts';
import { Glyph } from '../../ui/glyph.tsx';
import { MainAction } from '../../ui/main-action.tsx';
import { PasscodePrompt } from '../../ui/passcode-prompt.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { Spinner } from '../../ui/spinner.tsx';
import { AmountBox, CoinChip, DetailLine } from '../../ui/amount-box.tsx';
import { FlowView } from '../../ui/flow-view.tsx';
import { CoinChoiceList } from '../../ui/choice-list.tsx';

/** The swap flow (SPEC §2 Swap), one lazy chunk: /swap and /swap/from choose the source, then to, order, review, success. */
export function SwapArea({ route }: { route: RouteName }) {
  return <FlowView flow={swapFlow}>{(flow) => <SwapScreen route={route} flow={flow} />}</FlowView>;
}

function SwapScreen({ route, flow }: { route: RouteName; flow: SwapVisit }) {
  if (route === 'swapOrder') return <OrderScreen flow={flow} />;
  if (route === 'swapOrderReview') return <ReviewScreen flow={flow} />;
  if (route === 'swapOrderSuccess') return <SuccessScreen flow={flow} />;
  return <ChooserScreen side={route === 'swapTo' ? 'to' : 'from'} flow={flow} />;
}

function ChooserScreen({ side, flow }: { side: 'from' | 'to'; flow: SwapVisit }) {
  const t = useStore($t);
  const pairs = useStore($swapPairs);
  const sources = useStore($sourceChoices);
  const destinations = useStore(flow.$destinationChoices);
  const selection = useStore(flow.$swapSelection);
  const balances = useStore($balances);
  const items: SwapChoice[] = side === 'from' ? sources : destinations;
  const loading = !pairs.data && !pairs.error ? true : side === 'from' && !balances.data;
  const back = side === 'from' ? getPagePath($router, 'home') : selection.to ? getPagePath($router, 'swapOrder') : getPagePath($router, 'swapFrom');
  return (
    <div className="screen" data-testid={`swap-choose-${side}`}>
      <ScreenHeader title={t(side === 'from' ? 'swap_from_title' : 'swap_to_title')} back={back} backLabel={t('common_back')} />
      <p className="m-0 text-sm text-muted">{t(side === 'from' ? 'swap_from_hint' : 'swap_to_hint')}</p>
      {loading ? (
        <Spinner size={32} label={t('common_loading')} />
      ) : pairs.error ? (
        <p className="card m-0 text-danger">{t('common_something_went_wrong')}</p>
      ) : items.length === 0 ? (
        <p className="card m-0 text-muted text-center" data-testid="swap-nothing">
          {t('swap_no_sources')}
        </p>
      ) : (
        <CoinChoiceList items={items} onChoose={(currency) => (side === 'from' ? flow.chooseSource(currency) : flow.chooseDestination(currency))} testId="swap-choice" />
      )}
    </div>
  );
}

function OrderScreen({ flow }: { flow: SwapVisit }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const coins = useStore($coins);
  const selection = useStore(flow.$swapSelection);
  const form = useStore(flow.$swapForm);
  const problem = useStore(flow.$swapProblem);
  const limit = useStore(flow.$swapLimit);
  const canReverse = useStore(flow.$canReverse);
  const canContinue = useStore(flow.$canContinue);
  const balances = useStore($balances);
  const from = selection.from ? coins[selection.from] : undefined;
  const to = selection.to ? coins[selection.to] : undefined;
  if (!from || !to) return <Spinner label={t('common_loading')} />;
  const available = balances.data?.find((item) => item.currency === from.currency)?.totalAvailable ?? '0';
  const message = problem ? t(problem.key, problem.params) : form.quoteFailed ? (form.quoteError ?? t('common_something_went_wrong')) : limit.error ? t('common_something_went_wrong') : '';
  return (
    <div className="screen" data-testid="swap-order">
      <ScreenHeader title={t('swap_title')} back={getPagePath($router, 'home')} backLabel={t('common_back')} />
      <div className="flex flex-col gap-2">
        <AmountBox
          label={t('swap_you_pay')}
          chip={<CoinChip coin={from} href={getPagePath($router, 'swapFrom')} testId="swap-source-currency" />}
          value={form.sourceAmount}
          onChange={(text) => flow.typeAmount('source', text)}
          invalid={problem !== null}
          testId="swap-source"
          currency={from.currency}
          note={t('swap_available', { amount: formatCryptoWithCode(available, from.currency, from.round, locale) })}
        />
        <div className="flex justify-center -my-4 relative z-1">
          <button
            type="button"
            className="w-11 h-11 rounded-full bg-primary text-bg inline-flex items-center justify-center border-4 border-solid border-bg disabled:opacity-40 disabled:cursor-not-allowed"
            onClick={flow.reversePair}
            disabled={!canReverse}
            aria-label={t('swap_reverse')}
            data-testid="swap-reverse"
          >
            <Glyph name="swap" size={20} className="rotate-90" />
          </button>
        </div>
        <AmountBox label={t('swap_you_get')} chip={<CoinChip coin={to} href={getPagePath($router, 'swapTo')} testId="swap-destination-currency" />} value={form.destinationAmount} onChange={(text) => flow.typeAmount('destination', text)} currency={to.currency} testId="swap-destination" />
      </div>
      <p className="m-0 min-h-5 text-sm text-danger" role="alert" data-testid="swap-error">
        {message}
      </p>
      <div className="card flex flex-col gap-2 text-sm">
        <DetailLine
          label={swapRateText(t, { from: from.currency, to: to.currency, rate: form.quote?.rate, toRound: to.round, locale })}
          value={form.quoting ? t('swap_quoting') : ''}
          testId="swap-rate"
        />
        {form.quote && <DetailLine label={t('swap_fee')} value={formatCryptoWithCode(form.quote.fee, form.quote.feeCurrency, coins[form.quote.feeCurrency]?.round, locale)} testId="swap-fee" />}
        {limit.data && (
          <DetailLine label={t('swap_limits', { min: formatCrypto(limit.data.minLimit, from.round, locale), max: formatCrypto(limit.data.maxLimit, from.round, locale), currency: tickerOf(limit.data.currency) })} value="" testId="swap-limits" />
        )}
      </div>
      <div className="mt-auto">
        <MainAction pinned label={t('common_continue')} onClick={() => void flow.continueToReview()} disabled={!canContinue} busy={form.submitting} />
      </div>
    </div>
  );
}

function ReviewScreen({ flow }: { flow: SwapVisit }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const coins = useStore($coins);
  const review = useStore(flow.$swapReview);
  const seconds = useStore(flow.$swapSecondsLeft);
  const pinActive = useStore($pinCodeActive);
  const asking = useStore(flow.$swapPasscodeOpen);
  if (!review) return null;
  const { order } = review;
  const money = (value: string, code: string) => formatCryptoWithCode(value, code, coins[code]?.round, locale);
  const expired = seconds === 0;
  if (asking && pinActive && !expired) {
    return (
      <div className="screen" data-testid="swap-review">
        <ScreenHeader title={t('swap_review_title')} back={getPagePath($router, 'swapOrder')} backLabel={t('common_back')} />
        <PasscodePrompt title={t('swap_passcode_title')} onComplete={(pin) => flow.confirmSwap(pin)} />
      </div>
    );
  }
  return (
    <div className="screen" data-testid="swap-review">
      <ScreenHeader title={t('swap_review_title')} back={getPagePath($router, 'swapOrder')} backLabel={t('common_back')} />
      <div className="card flex flex-col gap-3">
        <DetailLine label={t('swap_you_pay')} value={money(order.sourceAmount, order.sourceCurrency)} testId="review-pay" />
        <FiatEquivalent amount={order.sourceAmount} currency={order.sourceCurrency} testId="review-pay-fiat" under />
        <DetailLine label={t('swap_you_get')} value={money(order.destinationAmount, order.destinationCurrency)} testId="review-get" />
        <FiatEquivalent amount={order.destinationAmount} currency={order.destinationCurrency} testId="review-get-fiat" under />
        <DetailLine label={swapRateText(t, { from: order.sourceCurrency, to: order.destinationCurrency, rate: order.rate, toRound: coins[order.destinationCurrency]?.round, locale })} value="" testId="review-rate" />
        <DetailLine label={t('swap_fee')} value={money(order.fee, order.feeCurrency)} testId="review-fee" />
      </div>
      {expired ? (
        <p className="m-0 text-center text-danger font-600" role="status" data-testid="swap-expired">
          {t('swap_order_expired')}
        </p>
      ) : (
        <p className="m-0 text-center text-muted" role="timer" data-testid="swap-countdown">
          {t('swap_rate_valid', { time: formatCountdown(seconds) })}
        </p>
      )}
      <div className="mt-auto">
        {expired ? (
          <MainAction pinned label={t('swap_update_rate')} onClick={() => void flow.updateSwapRate()} busy={review.busy} />
        ) : (
          <MainAction pinned label={t('swap_confirm')} onClick={() => (pinActive ? flow.requestSwapConfirmation() : void flow.confirmSwap())} busy={review.busy} />
        )}
      </div>
    </div>
  );
}

function SuccessScreen({ flow }: { flow: SwapVisit }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const coins = useStore($coins);
  const result = useStore(flow.$swapResult);
  if (!result) return null;
  const money = (value: string, code: string) => formatCryptoWithCode(value, code, coins[code]?.round, locale);
  return (
    <div className="screen" data-testid="swap-success">
      <OutcomeHero
        tone="success"
        amount={`+${money(result.destinationAmount, result.destinationCurrency)}`}
        title={t('swap_success_title')}
        text={<span data-testid="swap-success-text">{t('swap_success_text', { paid: money(result.sourceAmount, result.sourceCurrency), got: money(result.destinationAmount, result.destinationCurrency) })}</span>}
        next={t('swap_success_next')}
      />
      <div className="mt-auto w-full">
        <MainAction pinned label={t('swap_done')} onClick={() => openPage($router, 'home')} />
      </div>
    </div>
  );
}
