import { FiatEquivalent } from '../../ui/fiat-equivalent.tsx';
import { useStore } from '@nanostores/react';
import { getPagePath } from '@nanostores/router';
import { formatCryptoWithCode } from '../../../lib/format.ts';
import { $assetCurrency } from '../../../stores/asset.ts';
import { $coins } from '../../../stores/catalogue.ts';
import { $t } from '../../../stores/i18n.ts';
import { $router } from '../../../stores/router.ts';
import { $locale } from '../../../stores/settings.ts';
import type { SendVisit } from '../../../stores/send.ts';
import { Address } from '../../ui/address.tsx';
import { Glyph } from '../../ui/glyph.tsx';
import { MainAction } from '../../ui/main-action.tsx';
import { PasscodePrompt } from '../../ui/passcode-prompt.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { B2bBadge } from './send.tsx';

/** /home/asset/:currency/send/review: amount to receive, network, recipient, fee; the passcode when it is on (SPEC §2). */
export function SendReviewScreen({ flow }: { flow: SendVisit }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const currency = useStore($assetCurrency);
  const review = useStore(flow.$sendReview);
  const coins = useStore($coins);
  if (!currency || !review || review.currency !== currency) return null;
  const coin = coins[currency];
  const ticker = coin?.baseCurrency ?? currency;
  const amount = (value: string) => formatCryptoWithCode(value, ticker, coin?.round, locale);
  if (review.askingPasscode)
    return (
      <div className="screen" data-testid="send-passcode">
        <header className="flex items-center gap-2 -mx-2 min-h-10">
          <button type="button" className="inline-flex items-center justify-center w-10 h-10 rounded-full text-fg bg-transparent border-0 cursor-pointer" onClick={flow.cancelPasscode} aria-label={t('common_back')}>
            <Glyph name="back" />
          </button>
          {/* One h1 per screen (issue 33 item 4): the keypad's own title is its h2. */}
          <h1 className="sr-only">{t('send_review_title')}</h1>
        </header>
        <PasscodePrompt title={t('send_passcode_title')} onComplete={(pin) => flow.confirmSend(pin)} />
      </div>
    );
  return (
    <div className="screen" data-testid="send-review">
      <ScreenHeader title={t('send_review_title')} back={getPagePath($router, 'send', { currency })} backLabel={t('common_back')} />
      <section className="flex flex-col items-center gap-1 py-2">
        <span className="text-sm text-muted">{t('send_review_receive')}</span>
        <span className="text-3xl font-700 text-center break-all" data-testid="review-receive">
          {amount(review.receiveAmount)}
        </span>
        <FiatEquivalent amount={review.receiveAmount} currency={currency} testId="review-receive-fiat" />
      </section>
      <dl className="card m-0 flex flex-col gap-3">
        <Row label={t('send_review_total')} value={amount(review.amount)} testId="review-amount" />
        <Row label={t('send_review_network')} value={review.network} testId="review-network" />
        <div className="flex flex-col gap-1">
          <dt className="text-sm text-muted">{t('send_review_recipient')}</dt>
          <dd className="m-0 flex flex-col gap-1">
            {(review.recipientName || review.accountType === 'B2B') && (
              <span className="flex items-center gap-2">
                {review.recipientName && <span className="font-600">{review.recipientName}</span>}
                {review.accountType === 'B2B' && <B2bBadge label={t('send_b2b')} />}
              </span>
            )}
            <Address value={review.address} testId="review-recipient" />
          </dd>
        </div>
        <Row label={t('send_fee')} value={review.internal ? t('send_fee_free') : amount(review.fee)} testId="review-fee" />
      </dl>
      <MainAction pinned label={t('send_confirm')} onClick={flow.confirmReview} busy={review.busy} />
    </div>
  );
}

function Row({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="flex items-start justify-between gap-3">
      <dt className="text-sm text-muted">{label}</dt>
      <dd className="m-0 font-600 text-right break-all" data-testid={testId}>
        {value}
      </dd>
    </div>
  );
}
