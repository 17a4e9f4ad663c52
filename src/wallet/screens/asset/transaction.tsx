import { useStore } from '@nanostores/react';
import { getPagePath } from '@nanostores/router';
import { baseTickerOf, formatCryptoWithCode, networkTagOf } from '../../../lib/format.ts';
import { $assetCurrency, $transaction, $transactionDetail } from '../../../stores/asset.ts';
import { $coins } from '../../../stores/catalogue.ts';
import { $t } from '../../../stores/i18n.ts';
import { $router } from '../../../stores/router.ts';
import { $locale } from '../../../stores/settings.ts';
import { Address } from '../../ui/address.tsx';
import { Glyph } from '../../ui/glyph.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { Spinner } from '../../ui/spinner.tsx';

/** /home/asset/:currency/transaction/:id/:type: every detail field of SPEC §3 the transaction has. */
export function TransactionScreen() {
  const t = useStore($t);
  const currency = useStore($assetCurrency);
  const tx = useStore($transaction);
  const detail = useStore($transactionDetail);
  const coins = useStore($coins);
  const locale = useStore($locale);
  const back = currency ? getPagePath($router, 'asset', { currency }) : getPagePath($router, 'home');
  return (
    <div className="screen" data-testid="transaction-screen">
      <ScreenHeader title={t('tx_details_title')} back={back} backLabel={t('common_back')} />
      {!detail ? (
        tx.error !== undefined ? (
          <p className="card m-0 text-muted text-center">{t('tx_not_found')}</p>
        ) : (
          <div className="flex justify-center pt-16">
            <Spinner label={t('common_loading')} />
          </div>
        )
      ) : (
        <>
          <section className={`flex flex-col items-center gap-1 py-2 ${detail.state === 'FAILED' ? 'text-danger' : ''}`}>
            <span className="text-base font-600" data-testid="transaction-title">
              {detail.title}
            </span>
            {/* A failed one moved nothing: no sign, struck through as in the history list. The network of an ambiguous
                ticker goes on its own line, so a large amount never breaks inside "(TRC-20)". */}
            <span className={`text-3xl font-700 tracking-tight text-center break-words ${detail.state === 'FAILED' ? 'line-through' : ''}`} data-testid="transaction-amount">
              {detail.movement.sign}
              {formatCryptoWithCode(detail.movement.amount, baseTickerOf(detail.movement.currency), coins[detail.movement.currency]?.round, locale)}
            </span>
            {networkTagOf(detail.movement.currency) && <span className="text-sm text-muted">{networkTagOf(detail.movement.currency)}</span>}
          </section>
          <dl className="list-card m-0">
            {detail.rows.map((row) => (
              <div key={row.label} className="flex flex-col gap-1 px-4 py-3" data-testid={`detail-${row.label}`}>
                <dt className="text-sm text-muted">{t(row.label)}</dt>
                <dd className={`m-0 ${row.plain ? 'leading-snug' : 'font-600'} ${row.mono ? 'font-mono text-sm break-all' : ''} ${row.tone === 'error' ? 'text-danger' : row.tone === 'pending' ? 'text-accent' : ''}`}>
                  {row.href ? (
                    <a href={row.href} target="_blank" rel="noopener noreferrer" className="inline-flex items-start gap-1 text-accent" data-testid="explorer-link">
                      <span className="break-all">{row.value}</span>
                      <Glyph name="external" size={16} className="shrink-0 mt-0.5" />
                      <span className="sr-only">{t('tx_detail_explorer')}</span>
                    </a>
                  ) : row.address ? (
                    <Address value={row.value} />
                  ) : (
                    row.value
                  )}
                </dd>
              </div>
            ))}
          </dl>
        </>
      )}
    </div>
  );
}
