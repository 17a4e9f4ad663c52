import { FiatEquivalent } from '../../ui/fiat-equivalent.tsx';
import { useStore } from '@nanostores/react';
import { getPagePath } from '@nanostores/router';
import { lazy, Suspense } from 'react';
import { Address } from '../../ui/address.tsx';
import { formatCryptoWithCode } from '../../../lib/format.ts';
import { $assetCurrency } from '../../../stores/asset.ts';
import { $t } from '../../../stores/i18n.ts';
import { $router } from '../../../stores/router.ts';
import { $locale } from '../../../stores/settings.ts';
import type { SendVisit } from '../../../stores/send.ts';
import { CoinLogo } from '../../ui/coin-logo.tsx';
import { Glyph } from '../../ui/glyph.tsx';
import { MainAction } from '../../ui/main-action.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { typedAmountFor } from '../../../lib/typed-amount.ts';
import { Spinner } from '../../ui/spinner.tsx';
import { AddressCautionNotice } from '../../ui/address-caution.tsx';

// The camera and its decoder load only when the scanner opens.
const QrScannerView = lazy(() => import('../../ui/qr-scanner.tsx').then((module) => ({ default: module.QrScannerView })));

const readClipboard = async () => {
  if (!navigator.clipboard?.readText) throw new Error('no clipboard on this origin');
  return navigator.clipboard.readText();
};

/** /home/asset/:currency/send: amount, recipient (typed, pasted, scanned, from the address book), max and the fee (SPEC §2). */
export function SendScreen({ flow }: { flow: SendVisit }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const currency = useStore($assetCurrency);
  const form = useStore(flow.$sendForm);
  const coin = useStore(flow.$sendCoin);
  const problems = useStore(flow.$sendProblems);
  const available = useStore(flow.$sendAvailable);
  const canContinue = useStore(flow.$canContinueSend);
  const recipientGets = useStore(flow.$sendRecipientGets);
  if (!currency) return null;
  const back = getPagePath($router, 'asset', { currency });
  if (!coin)
    return (
      <div className="screen">
        <ScreenHeader title={t('action_send')} back={back} backLabel={t('common_back')} />
        <Spinner label={t('common_loading')} />
      </div>
    );
  const ticker = coin.baseCurrency;
  const check = form.check && form.checkedAddress === form.address.trim() ? form.check : undefined;
  const fee = form.fee;
  return (
    <div className="screen" data-testid="send-screen">
      <ScreenHeader title={t('send_title', { ticker })} back={back} backLabel={t('common_back')} />
      <section className="card flex flex-col gap-2">
        <div className="flex items-center justify-between gap-2">
          <label htmlFor="send-amount" className="text-sm text-muted">
            {t('send_amount')}
          </label>
          <span className="text-sm text-muted truncate" data-testid="send-available">
            {t('send_available', { amount: formatCryptoWithCode(available, ticker, coin.round, locale) })}
          </span>
        </div>
        <div className="flex items-center gap-2">
          <CoinLogo coin={coin} size={32} />
          <input
            id="send-amount"
            className={`field flex-1 min-w-0 text-xl font-600 ${problems.amount ? 'border-danger' : ''}`}
            inputMode="decimal"
            autoComplete="off"
            placeholder="0"
            value={typedAmountFor(form.amount, locale)}
            onChange={(event) => flow.typeSendAmount(event.target.value)}
            aria-invalid={problems.amount !== null}
            aria-describedby={problems.amount ? 'send-amount-error' : undefined}
            data-testid="send-amount"
          />
          <button type="button" className="btn-ghost h-12 px-3 border border-line border-solid" onClick={flow.fillMax} data-testid="send-max">
            {t('send_max')}
          </button>
        </div>
        <FiatEquivalent amount={form.amount} currency={coin.currency} testId="send-fiat" />
        {problems.amount && (
          <p id="send-amount-error" className="m-0 text-sm text-danger" role="alert" data-testid="send-amount-error">
            {t(problems.amount, problems.amountParams)}
          </p>
        )}
        {!problems.amount && recipientGets !== null && (
          <p className="m-0 text-sm text-muted" data-testid="send-recipient-gets">
            {t('send_recipient_gets', { amount: formatCryptoWithCode(recipientGets, ticker, coin.decimals, locale) })}
          </p>
        )}
      </section>

      <section className="card flex flex-col gap-2">
        <label htmlFor="send-address" className="text-sm text-muted">
          {t('send_recipient')}
        </label>
        <textarea
          id="send-address"
          className={`field h-auto min-h-12 py-3 font-mono text-sm resize-none break-all ${problems.address ? 'border-danger' : ''}`}
          rows={2}
          autoComplete="off"
          spellCheck={false}
          placeholder={t('send_recipient_placeholder', { network: coin.blockchain })}
          value={form.address}
          onChange={(event) => flow.typeAddress(event.target.value)}
          aria-invalid={problems.address !== null}
          aria-describedby={problems.address ? 'send-address-error' : undefined}
          data-testid="send-address"
        />
        {problems.address && (
          <p id="send-address-error" className="m-0 text-sm text-danger" role="alert" data-testid="send-address-error">
            {t(problems.address)}
          </p>
        )}
        <div className="grid grid-cols-3 gap-2">
          <button type="button" className="btn-ghost min-w-0 h-auto min-h-14 flex-col gap-1 py-2 px-1 text-xs leading-tight text-center" onClick={() => void flow.pasteAddress(readClipboard)} data-testid="send-paste">
            <Glyph name="copy" size={18} />
            {t('send_paste')}
          </button>
          <button type="button" className="btn-ghost min-w-0 h-auto min-h-14 flex-col gap-1 py-2 px-1 text-xs leading-tight text-center" onClick={flow.openScanner} data-testid="send-scan">
            <Glyph name="search" size={18} />
            {t('send_scan')}
          </button>
          <button type="button" className="btn-ghost min-w-0 h-auto min-h-14 flex-col gap-1 py-2 px-1 text-xs leading-tight text-center" onClick={() => flow.togglePicker(!form.pickerOpen)} aria-expanded={form.pickerOpen} data-testid="send-book">
            <Glyph name="wallet" size={18} />
            {t('send_address_book')}
          </button>
        </div>
        {!problems.address && check?.checkResult === 'VALID' && (check.recipientName || check.accountType === 'B2B') && (
          <p className="m-0 flex items-center gap-2 text-sm" data-testid="send-recipient">
            {check.recipientName && <span className="font-600 truncate">{check.recipientName}</span>}
            {check.accountType === 'B2B' && <B2bBadge label={t('send_b2b')} />}
          </p>
        )}
        {!problems.address && check?.checkResult === 'VALID' && check.warning === 'BOUNCEABLE_UNINITIALISED' && (
          <p className="m-0 text-sm text-danger" role="status" data-testid="send-address-warning">
            {t('send_warning_bounceable_uninitialised')}
          </p>
        )}
        {!problems.address && check?.checkResult === 'VALID' && form.caution && (
          <AddressCautionNotice caution={form.caution} acknowledged={form.cautionAcknowledged} onAcknowledge={flow.acknowledgeCaution} />
        )}
        {form.pickerOpen && <AddressPicker flow={flow} />}
      </section>

      <p className="card m-0 flex items-center justify-between gap-2" data-testid="send-fee">
        <span className="text-muted">{t('send_fee')}</span>
        <span className="font-600 text-right">
          {!fee || form.checking ? t('send_fee_loading') : fee.internal ? t('send_fee_free') : formatCryptoWithCode(fee.fee, ticker, coin.round, locale)}
        </span>
      </p>
      {form.checkFailed && (
        <p className="m-0 text-sm text-danger" role="alert" data-testid="send-check-error">
          {form.checkError ?? t('common_something_went_wrong')}
        </p>
      )}

      {canContinue && <MainAction pinned label={t('common_continue')} onClick={flow.continueToReview} />}

      {form.scannerOpen && (
        <Suspense fallback={<div className="fixed inset-0 z-40 bg-black/80 flex items-center justify-center"><Spinner label={t('common_loading')} /></div>}>
          <QrScannerView title={t('send_scan_title')} closeLabel={t('send_close')} onResult={flow.scannedAddress} onClose={flow.closeScanner} />
        </Suspense>
      )}
    </div>
  );
}

export function B2bBadge({ label }: { label: string }) {
  return (
    <span className="inline-flex items-center px-2 h-6 rounded-full bg-primary text-bg text-xs font-700 uppercase" data-testid="b2b-badge">
      {label}
    </span>
  );
}

function AddressPicker({ flow }: { flow: SendVisit }) {
  const t = useStore($t);
  const entries = useStore(flow.$sendBookEntries);
  return (
    <div className="flex flex-col gap-1" data-testid="send-picker">
      <span className="text-sm font-600">{t('send_pick_title')}</span>
      {entries.length === 0 ? (
        <span className="text-sm text-muted">{t('send_pick_empty')}</span>
      ) : (
        <div className="list-card border border-line border-solid">
          {entries.map((entry) => (
            <button key={entry.id} type="button" className="asset-row min-h-12" onClick={() => flow.pickAddress(entry.address)} data-testid="send-picker-item">
              <span className="flex-1 min-w-0 flex flex-col">
                <span className="font-600 truncate">{entry.name}</span>
                <Address value={entry.address} short className="text-sm" />
              </span>
            </button>
          ))}
        </div>
      )}
    </div>
  );
}
