import { FiatEquivalent } from '../../ui/fiat-equivalent.tsx';
import { Switch } from '../../ui/switch.tsx';
import { useStore } from '@nanostores/react';
import { getPagePath } from '@nanostores/router';
import { formatCrypto, formatCryptoWithCode, formatFiat, tickerOf } from '../../../lib/format.ts';
import { typedAmountFor } from '../../../lib/typed-amount.ts';
import type { MessageKey } from '../../../lib/text.ts';
import { $t } from '../../../stores/i18n.ts';
import { $router, type RouteName } from '../../../stores/router.ts';
import { $locale } from '../../../stores/settings.ts';
import { $sellChoices, sellFlow, sellLimitsText, type SellVisit } from '../../../stores/sell.ts';
import { $catalogue } from '../../../stores/catalogue.ts';
import { CoinLogo } from '../../ui/coin-logo.tsx';
import { Glyph } from '../../ui/glyph.tsx';
import { MainAction } from '../../ui/main-action.tsx';
import { PasscodePrompt } from '../../ui/passcode-prompt.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { Spinner } from '../../ui/spinner.tsx';
import type { ReactNode } from 'react';
import { DetailLine } from '../../ui/amount-box.tsx';
import { FlowView } from '../../ui/flow-view.tsx';
import { CoinChoiceList } from '../../ui/choice-list.tsx';
import { formatCountdown } from '../../../stores/primitives/countdown.ts';

/** The fixed rate's countdown, and at zero 'Rate expired' (issue 19 item 17); the screen's main action becomes 'Update rate'. */
function RateCountdown({ flow }: { flow: SellVisit }) {
  const t = useStore($t);
  const seconds = useStore(flow.$sellSecondsLeft);
  const expired = useStore(flow.$sellRateExpired);
  return expired ? (
    <p className="m-0 text-center text-danger font-600" role="status" data-testid="sell-rate-expired">
      {t('sell_rate_expired')}
    </p>
  ) : (
    <p className="m-0 text-center text-muted text-sm" role="timer" data-testid="sell-countdown">
      {t('swap_rate_valid', { time: formatCountdown(seconds) })}
    </p>
  );
}

function UpdateRate({ flow }: { flow: SellVisit }) {
  const t = useStore($t);
  const terms = useStore(flow.$sellTerms);
  return <MainAction pinned label={t('swap_update_rate')} onClick={() => void flow.updateSellRate()} busy={terms.loading} />;
}

const RUB = '₽';

/** The sell flow (SPEC §2 Sell), one lazy chunk: get → pay → order (amount, then card) → order/review → success. */
const SELL_SCREENS: Partial<Record<RouteName, (props: { flow: SellVisit }) => ReactNode>> = { sellPay: PayScreen, sellOrder: OrderScreen, sellOrderReview: ReviewScreen, sellSuccess: SuccessScreen };

export function SellArea({ route }: { route: RouteName }) {
  const t = useStore($t);
  // /sell/get has no screen: it shows a spinner while the flow moves on to /sell/pay.
  const Screen = SELL_SCREENS[route] ?? (() => <Spinner label={t('common_loading')} />);
  return <FlowView flow={sellFlow}>{(flow) => <Screen flow={flow} />}</FlowView>;
}

function PayScreen({ flow }: { flow: SellVisit }) {
  const t = useStore($t);
  const catalogue = useStore($catalogue);
  const choices = useStore($sellChoices);
  const choosing = useStore(flow.$sellChoosing);
  return (
    <div className="screen" data-testid="sell-pay">
      <ScreenHeader title={t('sell_pay_title')} back={getPagePath($router, 'buySell')} backLabel={t('common_back')} />
      <p className="m-0 text-sm text-muted">{t('sell_pay_hint')}</p>
      {!catalogue.data ? (
        <Spinner size={32} label={t('common_loading')} />
      ) : (
        <CoinChoiceList items={choices} onChoose={(currency) => void flow.chooseSellAsset(currency)} choosing={choosing} testId="sell-choice" />
      )}
    </div>
  );
}

function OrderScreen({ flow }: { flow: SellVisit }) {
  const t = useStore($t);
  const coin = useStore(flow.$sellCoin);
  const step = useStore(flow.$sellStep);
  const terms = useStore(flow.$sellTerms);
  useStore(flow.$sellAmountCheck);
  if (!coin) return <Spinner label={t('common_loading')} />;
  return (
    <div className="screen" data-testid="sell-order">
      <ScreenHeader title={t('sell_order_title', { currency: tickerOf(coin.currency) })} back={step === 'card' ? getPagePath($router, 'sellOrder') : getPagePath($router, 'sellPay')} backLabel={t('common_back')} />
      {terms.failed ? (
        <div className="card flex flex-col gap-3">
          <p className="m-0 text-danger" role="alert" data-testid="sell-unavailable">
            {t('sell_unavailable')}
          </p>
          <button type="button" className="btn-ghost" onClick={() => void flow.loadSellTerms()}>
            {t('common_retry')}
          </button>
        </div>
      ) : !terms.rate || !terms.limits ? (
        <Spinner size={32} label={t('common_loading')} />
      ) : step === 'amount' ? (
        <AmountStep flow={flow} />
      ) : (
        <CardStep flow={flow} />
      )}
    </div>
  );
}

function AmountStep({ flow }: { flow: SellVisit }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const coin = useStore(flow.$sellCoin);
  const amount = useStore(flow.$sellAmount);
  const check = useStore(flow.$sellAmountCheck);
  const terms = useStore(flow.$sellTerms);
  const available = useStore(flow.$sellAvailable);
  const expired = useStore(flow.$sellRateExpired);
  if (!coin || !terms.rate) return null;
  const ticker = tickerOf(coin.currency);
  const message = check.error
    ? check.error === 'sell_amount_limits' && check.limits
      ? sellLimitsText(check.limits, ticker, t, (value) => formatCrypto(value, 8, locale))
      : t(check.error)
    : '';
  return (
    <>
      <div className={`card flex flex-col gap-2 border border-solid ${check.error ? 'border-danger' : 'border-transparent'}`} data-testid="sell-amount">
        <span className="text-sm text-muted">{t('sell_amount_label')}</span>
        <div className="flex items-center gap-3">
          <span className="flex items-center gap-2 shrink-0 font-600">
            <CoinLogo coin={coin} size={32} />
            {ticker}
          </span>
          <input
            className="flex-1 min-w-0 bg-transparent border-none outline-none text-right text-2xl font-700 text-fg p-0"
            inputMode="decimal"
            autoComplete="off"
            placeholder="0"
            value={typedAmountFor(amount, locale)}
            onChange={(event) => flow.setSellAmount(event.target.value)}
            aria-label={t('sell_amount_label')}
            aria-invalid={check.error !== undefined}
            data-testid="sell-amount-input"
          />
        </div>
        <FiatEquivalent amount={amount} currency={coin.currency} testId="sell-amount-fiat" />
        <span className="text-xs text-muted">{t('sell_available', { amount: formatCryptoWithCode(available, coin.currency, coin.round, locale) })}</span>
      </div>
      <p className="m-0 min-h-5 text-sm text-danger" role="alert" data-testid="sell-amount-error">
        {message}
      </p>
      <div className="card flex flex-col gap-2 text-sm">
        <DetailLine label={t('sell_you_receive')} value={formatFiat(check.fiatAmount, RUB, locale)} testId="sell-fiat" />
        <DetailLine label={t('sell_rate_line', { currency: ticker, rate: formatFiat(terms.rate.rate, RUB, locale) })} value="" testId="sell-rate" />
        {check.limits && (
          <DetailLine
            label={sellLimitsText(check.limits, ticker, t, (value) => formatCrypto(value, 8, locale))}
            value=""
            testId="sell-limits"
          />
        )}
      </div>
      <RateCountdown flow={flow} />
      <div className="mt-auto">{expired ? <UpdateRate flow={flow} /> : <MainAction pinned label={t('sell_continue')} onClick={flow.continueToCard} disabled={!check.canContinue} />}</div>
    </>
  );
}

/** Groups a card number (typed or masked) by four for reading: 4276 3800 0000 0001, 4276 38** **** 0001. */
const grouped = (card: string) => card.replace(/([\d*]{4})(?=[\d*])/g, '$1 ');

function CardStep({ flow }: { flow: SellVisit }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const terms = useStore(flow.$sellTerms);
  const check = useStore(flow.$sellAmountCheck);
  const digits = useStore(flow.$cardNumber);
  const lookup = useStore(flow.$cardLookup);
  const valid = useStore(flow.$cardValid);
  const savedId = useStore(flow.$savedCardId);
  const save = useStore(flow.$saveCard);
  const canReview = useStore(flow.$canReview);
  const problem = lookup?.problem === 'not_sber' ? t('sell_only_sber_error') : lookup?.problem === 'failed' ? t('sell_unavailable') : '';
  return (
    <>
      <button type="button" className="card flex justify-between items-center border-0 text-fg text-base cursor-pointer" onClick={flow.backToAmount} data-testid="sell-change-amount">
        <span className="text-muted text-sm">{t('sell_change_amount')}</span>
        <span className="font-600">{formatFiat(check.fiatAmount, RUB, locale)}</span>
      </button>
      <h2 className="text-base font-700 m-0">{t('sell_card_title')}</h2>
      {terms.cards.length > 0 && (
        <div role="radiogroup" aria-label={t('sell_saved_cards')} className="list-card max-h-[300px] overflow-y-auto" data-testid="sell-saved-cards">
          {terms.cards.map((card) => {
            const checked = card.cardId === savedId;
            return (
              <button
                key={card.cardId}
                type="button"
                role="radio"
                aria-checked={checked}
                onClick={() => flow.selectSavedCard(card.cardId)}
                className="flex items-center justify-between gap-3 px-4 min-h-14 bg-transparent border-0 text-fg text-base text-left cursor-pointer"
                data-testid="sell-saved-card"
              >
                <span className="flex items-center gap-3">
                  <Glyph name="card" size={22} />
                  <span className="flex flex-col">
                    <span className="font-600 font-mono">{grouped(card.mascCard)}</span>
                    <span className="text-sm text-muted">{[card.bankCode, card.bankSystem].filter(Boolean).join(' · ')}</span>
                  </span>
                </span>
                <span aria-hidden="true" className={`w-5 h-5 rounded-full border-2 border-solid flex items-center justify-center ${checked ? 'border-primary' : 'border-line'}`}>
                  {checked && <span className="w-2.5 h-2.5 rounded-full bg-primary" />}
                </span>
              </button>
            );
          })}
        </div>
      )}
      <label className="flex flex-col gap-2">
        <span className="text-sm text-muted">{terms.cards.length > 0 ? t('sell_new_card') : t('sell_card_number')}</span>
        <input
          className={`field font-mono tracking-wider ${problem ? 'border-danger' : ''}`}
          inputMode="numeric"
          autoComplete="cc-number"
          placeholder={t('sell_card_placeholder')}
          maxLength={19}
          value={grouped(digits)}
          onChange={(event) => flow.setCardNumber(event.target.value)}
          aria-label={t('sell_card_number')}
          aria-invalid={problem !== ''}
          data-testid="sell-card-input"
        />
      </label>
      <p className="m-0 min-h-5 text-sm" role="alert" data-testid="sell-card-status">
        {lookup?.loading ? (
          <span className="text-muted">{t('sell_card_checking')}</span>
        ) : problem ? (
          <span className="text-danger">{problem}</span>
        ) : lookup?.info ? (
          <span className="text-muted">{`${lookup.info.code} · ${lookup.info.system}`}</span>
        ) : null}
      </p>
      {valid && (
        <label className="card flex items-center justify-between gap-3 cursor-pointer">
          <span>{t('sell_save_card')}</span>
          <Switch checked={save} onChange={flow.setSaveCard} testId="sell-save-card" />
        </label>
      )}
      <div className="mt-auto">
        <MainAction pinned label={t('sell_continue')} onClick={flow.continueToReview} disabled={!canReview} />
      </div>
    </>
  );
}

function ReviewScreen({ flow }: { flow: SellVisit }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const coin = useStore(flow.$sellCoin);
  const review = useStore(flow.$sellReview);
  const check = useStore(flow.$sellAmountCheck);
  const amount = useStore(flow.$sellAmount);
  const terms = useStore(flow.$sellTerms);
  const card = useStore(flow.$reviewCard);
  const expired = useStore(flow.$sellRateExpired);
  if (!review || !coin || !terms.rate) return null;
  const ticker = tickerOf(coin.currency);
  // Before `busy`: the prompt stays while its code is checked, so a refusal shows in it.
  if (review.askingPasscode) {
    return (
      <div className="screen" data-testid="sell-passcode">
        {review.busy ? <h1 className="text-xl font-700 m-0">{t('sell_review_title')}</h1> : <ScreenHeader title={t('sell_review_title')} back={getPagePath($router, 'sellOrder', {}, { step: 'card' })} backLabel={t('common_back')} />}
        <PasscodePrompt title={t('sell_passcode_title')} onComplete={(pin) => flow.confirmSell(pin)} />
      </div>
    );
  }
  if (review.busy) {
    return (
      <div className="screen items-center text-center" data-testid="sell-in-progress" aria-busy="true">
        <div className="mt-16">
          <Spinner size={64} label={t('sell_in_progress')} />
        </div>
        <h1 className="text-xl font-700 m-0">{t('sell_in_progress')}</h1>
        <p className="m-0 text-muted">{t('sell_in_progress_text')}</p>
      </div>
    );
  }
  return (
    <div className="screen" data-testid="sell-review">
      <ScreenHeader title={t('sell_review_title')} back={getPagePath($router, 'sellOrder', {}, { step: 'card' })} backLabel={t('common_back')} />
      <div className="card flex flex-col gap-3">
        <DetailLine label={t('sell_review_sell')} value={formatCryptoWithCode(amount || '0', coin.currency, 8, locale)} testId="sell-review-amount" />
        <FiatEquivalent amount={amount} currency={coin.currency} testId="sell-review-amount-fiat" under />
        <DetailLine label={t('sell_review_receive')} value={formatFiat(check.fiatAmount, RUB, locale)} testId="sell-review-fiat" />
        <DetailLine label={t('sell_review_rate')} value={`1 ${ticker} = ${formatFiat(terms.rate.rate, RUB, locale)}`} testId="sell-review-rate" />
        {card && <DetailLine label={t('sell_review_card')} value={grouped(card.masked)} testId="sell-review-card" />}
        {card && <DetailLine label={t('sell_review_bank')} value={card.bank} testId="sell-review-bank" />}
      </div>
      <RateCountdown flow={flow} />
      <div className="mt-auto">{expired ? <UpdateRate flow={flow} /> : <MainAction pinned label={t('sell_confirm')} onClick={flow.confirmSellReview} busy={review.busy} />}</div>
    </div>
  );
}

const SELL_OUTCOME: Record<'PROCESSING' | 'COMPLETED' | 'FAILED', { title: MessageKey; text: MessageKey }> = {
  PROCESSING: { title: 'sell_success_title', text: 'sell_success_text' },
  COMPLETED: { title: 'sell_paid_title', text: 'sell_paid_text' },
  FAILED: { title: 'sell_declined_title', text: 'sell_declined_text' },
};

function SuccessScreen({ flow }: { flow: SellVisit }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const order = useStore(flow.$sellOrder);
  if (!order) return null;
  const failed = order.state === 'FAILED';
  const status = t(order.state === 'COMPLETED' ? 'tx_status_completed' : failed ? 'tx_status_failed' : 'tx_status_pending');
  // The heading says what happened so far: accepted while the bank pays out, paid once it did, declined when it did not.
  const outcome = SELL_OUTCOME[order.state];
  return (
    <div className="screen items-center text-center" data-testid="sell-success">
      <span className={`mt-10 w-20 h-20 rounded-full bg-surface inline-flex items-center justify-center ${failed ? 'text-danger' : 'text-primary'}`}>
        <Glyph name={failed ? 'failed' : 'card'} size={36} />
      </span>
      <h1 className="text-2xl font-700 m-0" data-testid="sell-success-title">
        {t(outcome.title)}
      </h1>
      <p className="m-0 text-muted" data-testid="sell-success-text">
        {t(outcome.text, { amount: formatFiat(order.fiatAmount, RUB, locale), card: grouped(order.mascCard).replaceAll(' ', '\u00a0') })}
      </p>
      <div className="card w-full flex flex-col gap-3 text-left">
        <DetailLine label={t('sell_review_sell')} value={formatCryptoWithCode(order.amount, order.currency, 8, locale)} testId="sell-success-amount" />
        <div className="flex justify-between gap-3" data-testid="sell-success-status" data-state={order.state}>
          <span className="text-muted">{t('sell_status')}</span>
          <span className={`font-600 ${failed ? 'text-danger' : ''}`}>{status}</span>
        </div>
      </div>
      {failed && (
        <p className="m-0 text-danger" role="alert" data-testid="sell-failed">
          {t('sell_failed_text')}
        </p>
      )}
      <div className="mt-auto w-full">
        <a href={getPagePath($router, 'home')} className="btn-primary w-full no-underline" data-testid="sell-done">
          {t('sell_done')}
        </a>
      </div>
    </div>
  );
}

