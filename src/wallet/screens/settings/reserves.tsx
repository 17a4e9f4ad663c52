import { useStore } from '@nanostores/react';
import { useEffect } from 'react';
import { getPagePath } from '@nanostores/router';
import { $t } from '../../../stores/i18n.ts';
import { $reserves, loadReserves } from '../../../stores/reserves.ts';
import { $locale } from '../../../stores/settings.ts';
import { $router } from '../../../stores/router.ts';
import { PAGES } from '../../../lib/routes.ts';
import { formatUnits } from '../../../lib/amount.ts';
import { formatDetailDate, groupDigits } from '../../../lib/format.ts';
import { ScreenHeader } from '../../ui/screen-header.tsx';

/** Settings → Proof of reserves: the newest proof's date and totals, and whether the user's balances are in it. */
export function ReservesScreen() {
  const t = useStore($t);
  const locale = useStore($locale);
  const reserves = useStore($reserves);
  useEffect(() => void loadReserves(), []);
  const amount = (units: string | undefined, decimals: number) => groupDigits(formatUnits(BigInt(units ?? '0'), decimals), locale);
  return (
    <div className="screen">
      <ScreenHeader title={t('reserves_title')} back={getPagePath($router, 'settings')} backLabel={t('common_back')} />
      {reserves.state === 'loading' && <p className="m-0 text-muted">{t('reserves_checking')}</p>}
      {reserves.state === 'none' && <p className="m-0" data-testid="reserves-none">{t('reserves_none')}</p>}
      {reserves.state === 'failed' && <p className="m-0" role="alert">{t('reserves_failed')}</p>}
      {reserves.state === 'ready' && (
        <>
          <p className="m-0 font-600" data-testid="reserves-date">
            {t('reserves_as_of', { date: formatDetailDate(reserves.proof.asOf, locale) })}
          </p>
          <div className="card flex flex-col gap-1" role="status" data-testid={`reserves-${reserves.included}`}>
            <span className="font-600">
              {reserves.included === 'yes' ? `✓ ${t('reserves_included')}` : reserves.included === 'no' ? t('reserves_not_included') : t('reserves_not_in_proof')}
            </span>
            {reserves.included === 'yes' && <span className="text-sm text-muted">{t('reserves_included_text')}</span>}
          </div>
          {reserves.leaf && reserves.included === 'yes' && (
            <section className="card flex flex-col gap-1" aria-label={t('reserves_your_balances')}>
              <span className="text-sm text-muted">{t('reserves_your_balances')}</span>
              {reserves.proof.assets.map((asset, i) =>
                reserves.leaf?.balances[i] && reserves.leaf.balances[i] !== '0' ? (
                  <span key={asset.currency} className="flex justify-between">
                    <span>{asset.currency}</span>
                    <span>{amount(reserves.leaf.balances[i], asset.decimals)}</span>
                  </span>
                ) : null,
              )}
              <a className="text-sm" download={`reserves-leaf-${reserves.proof.id}.json`} href={`data:application/json;charset=utf-8,${encodeURIComponent(JSON.stringify(reserves.leaf))}`}>
                {t('reserves_download_leaf')}
              </a>
            </section>
          )}
          <section className="card flex flex-col gap-1" aria-label={t('reserves_totals')} data-testid="reserves-totals">
            <span className="grid grid-cols-3 text-sm text-muted">
              <span>{t('reserves_asset')}</span>
              <span className="text-right">{t('reserves_liabilities')}</span>
              <span className="text-right">{t('reserves_holdings')}</span>
            </span>
            {reserves.proof.assets.map((asset) => (
              <span key={asset.currency} className="grid grid-cols-3 text-sm">
                <span>{asset.currency}</span>
                <span className="text-right">{amount(reserves.proof.liabilities.totals[asset.currency], asset.decimals)}</span>
                <span className="text-right">{reserves.proof.reserves[asset.currency] === undefined ? '—' : amount(reserves.proof.reserves[asset.currency], asset.decimals)}</span>
              </span>
            ))}
          </section>
          <p className="m-0 text-xs text-muted break-all">
            {t('reserves_root')}: {reserves.proof.liabilities.root.hash}
          </p>
          <a href={PAGES.reserves} rel="external" data-testid="reserves-public">
            {t('reserves_public_page')}
          </a>
        </>
      )}
    </div>
  );
}
