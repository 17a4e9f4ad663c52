import { useStore } from '@nanostores/react';
import { getPagePath } from '@nanostores/router';
import { coinSubtitleOf, formatAsOf, formatCryptoWithCode, formatFiat } from '../../../lib/format.ts';
import { $ratesAsOf } from '../../../stores/rates.ts';
import { $fiatSymbol } from '../../../stores/account.ts';
import { refreshBalances } from '../../../stores/balances.ts';
import {
  $addingCommonAssets,
  $assetRows,
  $commonAssetsOffered,
  $hiddenHoldings,
  $homeView,
  $showLinkBanner,
  $totalFiat,
  addCommonAssets,
  dismissProtectPrompt,
  hideLinkBannerForGood,
  linkMessengerAccount,
  openSwapFromHome,
} from '../../../stores/home.ts';
import { $t } from '../../../stores/i18n.ts';
import { $router } from '../../../stores/router.ts';
import { $locale } from '../../../stores/settings.ts';
import { AmountEnd, AssetRow } from '../../ui/asset-row.tsx';
import { Glyph } from '../../ui/glyph.tsx';
import { RoundAction, SectionHeader } from '../../ui/screen-header.tsx';
import { LineSkeleton, ListSkeleton } from '../../ui/skeleton.tsx';
import type { ReactNode } from 'react';

/** /home in its three states (SPEC §2): first-time empty, the protect-your-wallet prompt, or the wallet. */
export function HomeScreen() {
  const t = useStore($t);
  const view = useStore($homeView);
  return (
    <div className="screen" data-testid={`home-${view}`}>
      {/* One h1 per screen (issue 33 item 4): the prompts title themselves; the wallet, loading or not, is the wallet. */}
      {view !== 'empty' && view !== 'protect' && <h1 className="sr-only">{t('app_name')}</h1>}
      {/* SPEC §2: the banner's own conditions decide, whichever state Home is in. */}
      {(view === 'wallet' || view === 'empty' || view === 'protect') && <LinkBanner />}
      {view === 'loading' && <HomeSkeleton />}
      {view === 'error' && (
        <div className="card flex flex-col items-center gap-3 text-center mt-12">
          <p className="m-0">{t('home_load_error')}</p>
          <button type="button" className="btn-ghost bg-bg" onClick={() => void refreshBalances()}>
            {t('common_retry')}
          </button>
        </div>
      )}
      {view === 'empty' && <EmptyHome />}
      {view === 'protect' && <ProtectPrompt />}
      {view === 'wallet' && <WalletHome />}
    </div>
  );
}

/** Home while the balances load: the balance, the actions and the assets' list in outline, where they will be. */
function HomeSkeleton() {
  const t = useStore($t);
  return (
    <>
      <section className="flex flex-col items-center gap-2 pt-4 pb-2" aria-hidden="true">
        <LineSkeleton className="h-3.5 w-24" />
        <LineSkeleton className="h-9 w-40" />
      </section>
      <div className="flex gap-2" aria-hidden="true">
        {[0, 1, 2, 3].map((index) => (
          <span key={index} className="flex-1 flex justify-center">
            <span className="skeleton w-13 h-13 rounded-full" />
          </span>
        ))}
      </div>
      <ListSkeleton rows={4} label={t('common_loading')} testId="asset-list-skeleton" />
    </>
  );
}

function EmptyHome() {
  const t = useStore($t);
  const adding = useStore($addingCommonAssets);
  // Every common asset's network is off (production without chain adapters): the button says so instead of failing.
  const offered = useStore($commonAssetsOffered);
  const nothingOffered = offered !== undefined && offered.length === 0;
  return (
    <HomePrompt glyph={<Glyph name="wallet" size={36} />} title={t('home_empty_title')} text={t('home_empty_text')}>
      <button type="button" className="btn-primary w-full" onClick={() => void addCommonAssets()} disabled={adding || nothingOffered}>
        <Glyph name="plus" size={20} />
        {t('home_add_common')}
      </button>
      <p className="m-0 -mt-1 text-sm text-muted" data-testid="home-common-hint">
        {t(nothingOffered ? 'home_common_unavailable' : 'home_common_hint')}
      </p>
      <a href={getPagePath($router, 'manageAssets')} className="btn-ghost w-full no-underline">
        {t('home_select_assets')}
      </a>
    </HomePrompt>
  );
}

/** A whole-screen prompt of Home: a round icon, a title, a line of text and its actions. */
function HomePrompt({ glyph, title, text, tone = '', children }: { glyph: ReactNode; title: string; text: string; tone?: string; children: ReactNode }) {
  return (
    <section className="flex flex-col items-center text-center gap-4 pt-12">
      <span className={`w-20 h-20 rounded-full bg-surface inline-flex items-center justify-center ${tone}`.trim()}>{glyph}</span>
      <h1 className="text-2xl font-700 m-0">{title}</h1>
      <p className="m-0 text-muted">{text}</p>
      <div className="flex flex-col gap-3 w-full mt-4">{children}</div>
    </section>
  );
}

function ProtectPrompt() {
  const t = useStore($t);
  return (
    <HomePrompt glyph={<Glyph name="shield" size={36} />} tone="text-success" title={t('home_protect_title')} text={t('home_protect_text')}>
      <a href={getPagePath($router, 'walletProtection')} className="btn-primary w-full no-underline">
        {t('home_protect_action')}
      </a>
      <button type="button" className="btn-ghost w-full" onClick={dismissProtectPrompt}>
        {t('home_protect_later')}
      </button>
    </HomePrompt>
  );
}

function WalletHome() {
  const t = useStore($t);
  const rows = useStore($assetRows);
  const total = useStore($totalFiat);
  const hidden = useStore($hiddenHoldings);
  const symbol = useStore($fiatSymbol);
  const locale = useStore($locale);
  const asOf = useStore($ratesAsOf);
  // A value from a price that is no longer current says when it was (issue 28: never an invented one).
  const fiatWithAge = (value: string, at: string | undefined) => (at ? `${formatFiat(value, symbol, locale)} · ${t('home_rate_as_of', { time: formatAsOf(at, Date.now(), locale) })}` : formatFiat(value, symbol, locale));
  return (
    <>
      <section className="flex flex-col items-center gap-1 pt-4 pb-2">
        <span className="text-sm text-muted">{t('home_total_balance')}</span>
        <span className="text-4xl font-700 tracking-tight" data-testid="total-balance">
          {total === undefined ? '…' : formatFiat(total, symbol, locale)}
        </span>
        {hidden && (
          // The total counts hidden assets too (hiding is a view, not a loss): say so where they hold something.
          <a href={getPagePath($router, 'manageAssets')} className="text-xs text-muted no-underline" data-testid="total-hidden">
            {hidden.value === undefined ? t('home_total_hidden_assets') : t('home_total_hidden_value', { amount: formatFiat(hidden.value, symbol, locale) })}
          </a>
        )}
      </section>
      <nav className="flex gap-2">
        <RoundAction label={t('action_receive')} glyph="receive" href={getPagePath($router, 'selectAssetReceive')} />
        <RoundAction label={t('action_send')} glyph="send" href={getPagePath($router, 'selectAssetSend')} />
        <RoundAction label={t('action_swap')} glyph="swap" onClick={openSwapFromHome} />
        <RoundAction label={t('action_buy_sell')} glyph="card" href={getPagePath($router, 'buySell')} />
      </nav>
      <SectionHeader
        title={t('home_assets')}
        action={
          <a href={getPagePath($router, 'manageAssets')} className="inline-flex w-9 h-9 items-center justify-center text-muted" aria-label={t('home_manage_assets')}>
            <Glyph name="sliders" size={20} />
          </a>
        }
      />
      {rows.length === 0 ? (
        <p className="card m-0 text-muted text-center">{t('home_all_hidden')}</p>
      ) : (
        <div className="list-card" data-testid="asset-list">
          {rows.map((row) => (
            <AssetRow
              key={row.currency}
              coin={row.coin}
              href={getPagePath($router, 'asset', { currency: row.currency })}
              subtitle={coinSubtitleOf(row.coin)}
              end={<AmountEnd amount={formatCryptoWithCode(row.amount, row.coin.baseCurrency, row.coin.round, locale)} value={row.fiatValue === undefined ? undefined : fiatWithAge(row.fiatValue, asOf[row.currency])} />}
              testId="asset-row"
            />
          ))}
        </div>
      )}
      <a href={getPagePath($router, 'manageAssets')} className="btn-ghost w-full no-underline">
        <Glyph name="sliders" size={20} />
        {t('home_manage_assets')}
      </a>
    </>
  );
}

function LinkBanner() {
  const t = useStore($t);
  const shown = useStore($showLinkBanner);
  if (!shown) return null;
  return (
    <aside className="card flex flex-col gap-3" data-testid="link-banner">
      <div className="flex items-start gap-3">
        <span className="w-10 h-10 rounded-full bg-accent text-white inline-flex items-center justify-center shrink-0">
          <Glyph name="plane" size={20} />
        </span>
        <div className="flex flex-col gap-1 min-w-0">
          <strong className="font-700">{t('home_link_title')}</strong>
          <span className="text-sm text-muted">{t('home_link_text')}</span>
        </div>
      </div>
      <div className="flex flex-wrap gap-2">
        <button type="button" className="btn-primary flex-1 h-auto min-h-10 py-2 px-3 text-sm leading-tight whitespace-nowrap" onClick={linkMessengerAccount}>
          {t('home_link_action')}
        </button>
        <button type="button" className="btn-ghost bg-bg flex-1 h-auto min-h-10 py-2 px-3 text-sm leading-tight whitespace-nowrap" onClick={hideLinkBannerForGood}>
          {t('home_link_never')}
        </button>
      </div>
    </aside>
  );
}
