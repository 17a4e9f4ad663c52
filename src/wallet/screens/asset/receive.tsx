import { formatCryptoWithCode, networkNameOf, tickerOf } from '../../../lib/format.ts';
import { useStore } from '@nanostores/react';
import { getPagePath } from '@nanostores/router';
import { lazy, Suspense, useEffect } from 'react';
import { $asset, copyAddress, ensureAssetHeld } from '../../../stores/asset.ts';
import { $t } from '../../../stores/i18n.ts';
import { $router } from '../../../stores/router.ts';
import { $locale } from '../../../stores/settings.ts';
import { writeClipboard } from '../../ui/clipboard.ts';
import { Address } from '../../ui/address.tsx';
import { Glyph } from '../../ui/glyph.tsx';
import { QR_SIZE } from '../../ui/qr-size.ts';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { Spinner } from '../../ui/spinner.tsx';

const QrCode = lazy(() => import('../../ui/qr-code.tsx').then((module) => ({ default: module.QrCode })));

/** /home/asset/:currency/receive: the deposit address, its 200×200 QR code and a copy button. */
export function ReceiveScreen() {
  const t = useStore($t);
  const asset = useStore($asset);
  const locale = useStore($locale);
  const held = asset?.held;
  const loading = asset?.loading;
  useEffect(() => {
    if (held === false && loading === false) void ensureAssetHeld();
  }, [held, loading]);
  if (!asset) return null;
  const { coin, currency, address } = asset;
  const back = getPagePath($router, 'asset', { currency });
  return (
    <div className="screen items-stretch" data-testid="receive-screen">
      <ScreenHeader title={t('receive_title', { name: tickerOf(currency) })} back={back} backLabel={t('common_back')} />
      {!address && held && !loading ? (
        // Held, loaded, and still no address: the gateway withheld one that did not check out (never a guess).
        <p className="card m-0 text-muted" data-testid="receive-no-address">
          {t('asset_no_address')}
        </p>
      ) : !address ? (
        <div className="flex justify-center pt-16">
          <Spinner label={t('common_loading')} />
        </div>
      ) : (
        <>
          <div className="flex justify-center pt-2">
            <Suspense fallback={<div className="rounded-2xl bg-white" style={{ width: QR_SIZE + 16, height: QR_SIZE + 16 }} />}>
              <QrCode text={address} label={t('receive_qr_alt')} />
            </Suspense>
          </div>
          <p className="card m-0 text-center text-lg leading-relaxed" data-testid="receive-address">
            <Address value={address} />
          </p>
          <button type="button" className="btn-primary w-full" onClick={() => void copyAddress(address, writeClipboard)}>
            <Glyph name="copy" size={20} />
            {t('asset_copy_address')}
          </button>
          {coin && (
            <p className="m-0 text-sm text-muted text-center flex gap-2 items-start justify-center">
              <Glyph name="alert" size={18} className="shrink-0" />
              <span>{t('receive_hint', { ticker: coin.baseCurrency, network: networkNameOf(coin) })}</span>
            </p>
          )}
          {coin?.minDeposit && (
            <p className="m-0 text-sm text-muted text-center" data-testid="receive-minimum">
              {t('receive_minimum', { minimum: formatCryptoWithCode(coin.minDeposit, currency, coin.decimals, locale) })}
            </p>
          )}
        </>
      )}
    </div>
  );
}
