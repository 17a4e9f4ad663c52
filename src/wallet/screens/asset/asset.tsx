import { useStore } from '@nanostores/react';
import { getPagePath } from '@nanostores/router';
import { baseTickerOf, formatAsOf, formatCrypto, formatCryptoWithCode, formatFiat } from '../../../lib/format.ts';
import { $ratesAsOf } from '../../../stores/rates.ts';
import { $assetPage, $history, $historyGroups, type HistoryRow } from '../../../stores/asset.ts';
import { $t } from '../../../stores/i18n.ts';
import { $router } from '../../../stores/router.ts';
import { $locale } from '../../../stores/settings.ts';
import { CoinLogo } from '../../ui/coin-logo.tsx';
import { CopyableAddress } from '../../ui/copyable-address.tsx';
import { Glyph } from '../../ui/glyph.tsx';
import { RoundAction, ScreenHeader, SectionHeader } from '../../ui/screen-header.tsx';
import { HistoryExport } from '../common/history-export.tsx';
import { Spinner } from '../../ui/spinner.tsx';
import { ListSkeleton } from '../../ui/skeleton.tsx';

/** /home/asset/:currency: balance, deposit address, actions and history (SPEC §2). */
export function AssetScreen() {
  const t = useStore($t);
  const asset = useStore($assetPage);
  const locale = useStore($locale);
  const asOf = useStore($ratesAsOf);
  const back = getPagePath($router, 'home');
  if (!asset) return null;
  const { coin, currency } = asset;
  if (!coin)
    return (
      <div className="screen">
        <ScreenHeader title={currency} back={back} backLabel={t('common_back')} />
        {asset.loading ? <Spinner label={t('common_loading')} /> : <p className="card m-0 text-muted">{t('asset_not_found')}</p>}
      </div>
    );
  const ticker = coin.baseCurrency;
  return (
    <div className="screen" data-testid="asset-screen">
      <ScreenHeader title={coin.name} back={back} backLabel={t('common_back')} />
      <section className="flex flex-col items-center gap-2 pt-2">
        <CoinLogo coin={coin} size={56} />
        <span className="text-3xl font-700 tracking-tight text-center break-all" data-testid="asset-balance">
          {formatCryptoWithCode(asset.available, ticker, coin.round, locale)}
        </span>
        {asset.fiatValue !== undefined && (
          <span className="text-muted" data-testid="asset-fiat-value">
            {formatFiat(asset.fiatValue, asset.fiatSymbol, locale)}
            {asOf[currency] && ` · ${t('home_rate_as_of', { time: formatAsOf(asOf[currency], Date.now(), locale) })}`}
          </span>
        )}
      </section>
      <div className="card flex">
        <Figure label={t('asset_available')} value={formatCrypto(asset.available, coin.round, locale)} testId="asset-available" />
        <Figure label={t('asset_on_hold')} value={formatCrypto(asset.onHold, coin.round, locale)} testId="asset-on-hold" />
      </div>
      {asset.address ? <CopyableAddress address={asset.address} label={t('asset_deposit_address')} /> : asset.held && <p className="card m-0 text-muted">{t('asset_no_address')}</p>}
      <nav className="flex gap-2">
        <RoundAction label={t('action_receive')} glyph="receive" href={getPagePath($router, 'receive', { currency })} />
        <RoundAction label={t('action_send')} glyph="send" href={getPagePath($router, 'send', { currency })} />
        <RoundAction label={t('action_swap')} glyph="swap" href={getPagePath($router, 'swap')} />
        <RoundAction label={t('action_buy')} glyph="card" href={getPagePath($router, 'buySell')} />
      </nav>
      <SectionHeader title={t('asset_history')} />
      <History currency={currency} round={coin.round} />
      <HistoryExport currency={currency} />
    </div>
  );
}

function Figure({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="flex-1 flex flex-col min-w-0">
      <span className="text-sm text-muted">{label}</span>
      <span className="font-600 truncate" data-testid={testId}>
        {value}
      </span>
    </div>
  );
}

function History({ currency, round }: { currency: string; round: number }) {
  const t = useStore($t);
  const history = useStore($history);
  const groups = useStore($historyGroups);
  if (!history.data) {
    if (history.error !== undefined) return <p className="card m-0 text-muted text-center">{t('asset_history_error')}</p>;
    return <ListSkeleton rows={3} label={t('common_loading')} testId="history-skeleton" />;
  }
  if (groups.length === 0)
    return (
      <div className="card flex flex-col items-center gap-2 py-8 text-muted" data-testid="history-empty">
        <Glyph name="clock" size={28} />
        <span>{t('asset_no_history')}</span>
      </div>
    );
  return (
    <div className="flex flex-col gap-3" data-testid="history">
      {groups.map((group) => (
        <section key={group.key} className="flex flex-col gap-2">
          <h3 className="m-0 text-sm font-600 text-muted">{group.label}</h3>
          <div className="list-card">
            {group.rows.map((row) => (
              <HistoryItem key={row.id} row={row} currency={currency} round={round} />
            ))}
          </div>
        </section>
      ))}
    </div>
  );
}

const GLYPH_OF: Record<string, 'receive' | 'send' | 'swap' | 'card'> = { DEPOSIT: 'receive', WITHDRAWAL: 'send', EXCHANGE: 'swap', C2F: 'card', F2C: 'card', FIAT_DEPOSIT: 'card' };

function HistoryItem({ row, currency, round }: { row: HistoryRow; currency: string; round: number }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const failed = row.state === 'FAILED';
  const pending = row.state === 'IN_PROGRESS';
  return (
    <a
      href={getPagePath($router, 'transaction', { currency, id: row.id, type: row.type })}
      className={`asset-row ${failed ? 'text-danger' : ''}`}
      data-testid="history-item"
      data-state={row.state}
    >
      <span className={`w-10 h-10 rounded-full inline-flex items-center justify-center shrink-0 ${failed ? 'bg-danger text-white' : 'bg-bg'}`}>
        <Glyph name={failed ? 'failed' : (GLYPH_OF[row.type] ?? 'receive')} size={20} />
      </span>
      <span className="flex-1 min-w-0 flex flex-col">
        <span className="font-600 break-words leading-snug">{row.title}</span>
        <span className={`text-sm ${failed ? '' : 'text-muted'}`}>
          <time data-testid="history-time">{row.time}</time>
          {pending && <span data-testid="pending-badge"> · {t(row.underReview ? 'tx_status_under_review' : 'tx_status_pending')}</span>}
          {failed && <span> · {t('tx_status_failed')}</span>}
        </span>
        {row.waitingForFunds && (
          <span className="text-sm text-muted break-words" data-testid="pending-reason">
            {t('tx_pending_reason_funds_short')}
          </span>
        )}
      </span>
      <span className={`font-600 whitespace-nowrap ${failed ? 'line-through' : row.sign === '+' ? 'text-success' : ''}`}>
        {row.sign}
        {/* The page's own asset needs no network beside its ticker: the header names it. */}
        {formatCryptoWithCode(row.amount, row.currency === currency ? baseTickerOf(row.currency) : row.currency, row.currency === currency ? round : undefined, locale)}
      </span>
    </a>
  );
}
