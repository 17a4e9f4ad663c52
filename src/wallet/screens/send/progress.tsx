import { OutcomeHero } from '../../ui/outcome.tsx';
import { useStore } from '@nanostores/react';
import { getPagePath } from '@nanostores/router';
import { shortenAddress } from '../../../lib/address.ts';
import { formatCryptoWithCode } from '../../../lib/format.ts';
import { $assetCurrency } from '../../../stores/asset.ts';
import { $coins } from '../../../stores/catalogue.ts';
import { $t } from '../../../stores/i18n.ts';
import { $router } from '../../../stores/router.ts';
import { $locale } from '../../../stores/settings.ts';
import type { SendVisit } from '../../../stores/send.ts';
import { Glyph } from '../../ui/glyph.tsx';
import { failureTextOf } from '../../../stores/transactions.ts';
import { ScreenHeader } from '../../ui/screen-header.tsx';

/** /home/asset/:currency/send/progress: where the withdrawal stands, the waiting time, continue, save the recipient (SPEC §2). */
export function SendProgressScreen({ flow }: { flow: SendVisit }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const currency = useStore($assetCurrency);
  const withdrawal = useStore(flow.$sendProgress);
  const save = useStore(flow.$saveRecipient);
  const coins = useStore($coins);
  if (!currency || !withdrawal || withdrawal.currency !== currency) return null;
  const coin = coins[currency];
  const amount = formatCryptoWithCode(withdrawal.amount, coin?.baseCurrency ?? currency, coin?.round, locale);
  const pending = withdrawal.state === 'IN_PROGRESS';
  const failed = withdrawal.state === 'FAILED';
  const review = pending && withdrawal.underReview === true;
  const title = review ? t('tx_status_under_review') : pending ? t('send_progress_pending') : failed ? t('send_progress_failed') : t('send_progress_done');
  return (
    <div className="screen" data-testid="send-progress" data-state={withdrawal.state}>
      <ScreenHeader title={t('action_send')} back={getPagePath($router, 'asset', { currency })} backLabel={t('common_back')} />
      <OutcomeHero
        tone={failed ? 'failed' : pending ? 'pending' : 'success'}
        amount={failed ? amount : `−${amount}`}
        title={title}
        text={<span className="break-all">{t('send_progress_text', { amount, address: shortenAddress(withdrawal.depositAddress) })}</span>}
        next={pending ? <span data-testid="progress-waiting">{t(review ? 'send_review_text' : withdrawal.pendingReason === 'WAITING_FOR_FUNDS' ? 'tx_pending_reason_funds' : 'send_waiting_time')}</span> : undefined}
        testId="progress-hero"
        titleTestId="progress-title"
        level={2}
      />
      <section className="flex flex-col items-center gap-3 text-center">
        {failed && (
          <p className="m-0 text-sm text-danger" role="alert" data-testid="progress-failure">
            {failureTextOf({ transactionType: 'WITHDRAWAL', failureReason: withdrawal.failureReason }, t)}
          </p>
        )}
        {withdrawal.explorerUrl && (
          <a href={withdrawal.explorerUrl} target="_blank" rel="noreferrer" className="inline-flex items-center gap-1 text-sm" data-testid="progress-explorer">
            {t('tx_detail_explorer')}
            <Glyph name="external" size={16} />
          </a>
        )}
      </section>
      {!save.saved &&
        (save.open ? (
          <form
            className="card flex flex-col gap-2"
            onSubmit={(event) => {
              event.preventDefault();
              void flow.saveRecipient();
            }}
          >
            <label htmlFor="recipient-name" className="text-sm text-muted">
              {t('address_book_name')}
            </label>
            <input id="recipient-name" className="field" maxLength={64} autoFocus value={save.name} onChange={(event) => flow.typeRecipientName(event.target.value)} data-testid="recipient-name" />
            <button type="submit" className="btn-ghost border border-line border-solid" disabled={save.busy || !save.name.trim()} data-testid="recipient-save">
              {t('send_save')}
            </button>
          </form>
        ) : (
          <button type="button" className="btn-ghost" onClick={() => flow.openSaveRecipient(true)} data-testid="add-to-book">
            <Glyph name="plus" size={18} />
            {t('send_add_to_book')}
          </button>
        ))}
      <a href={getPagePath($router, 'home')} className="btn-primary no-underline" data-testid="continue-assets">
        {t('send_continue_assets')}
      </a>
    </div>
  );
}
