import { useStore } from '@nanostores/react';
import type { CoinMeta } from '../../lib/currencies.ts';
import { coinSubtitleOf, formatCrypto } from '../../lib/format.ts';
import { $t } from '../../stores/i18n.ts';
import { $locale } from '../../stores/settings.ts';
import { AssetRow } from './asset-row.tsx';
import { Glyph } from './glyph.tsx';
import { Spinner } from './spinner.tsx';

/** A list of coins to pick one from, each with what the account holds of it; the one being picked spins. */
export function CoinChoiceList({ items, onChoose, choosing, testId }: { items: readonly { coin: CoinMeta; amount: string | undefined }[]; onChoose: (currency: string) => void; choosing?: string | null; testId: string }) {
  const t = useStore($t);
  const locale = useStore($locale);
  const busy = choosing !== undefined && choosing !== null;
  return (
    <div className="list-card">
      {items.map(({ coin, amount }) => (
        <AssetRow
          key={coin.currency}
          coin={coin}
          subtitle={coinSubtitleOf(coin)}
          onClick={() => onChoose(coin.currency)}
          {...(choosing !== undefined ? { disabled: busy } : {})}
          testId={testId}
          end={
            <span className="flex items-center gap-2 text-muted">
              {amount !== undefined && <span className="text-fg font-600">{formatCrypto(amount, coin.round, locale)}</span>}
              {choosing === coin.currency ? <Spinner size={18} label={t('common_loading')} /> : <Glyph name="chevron" size={18} />}
            </span>
          }
        />
      ))}
    </div>
  );
}
