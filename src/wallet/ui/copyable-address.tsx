import { useStore } from '@nanostores/react';
import { copyAddress } from '../../stores/asset.ts';
import { $t } from '../../stores/i18n.ts';
import { writeClipboard } from './clipboard.ts';
import { Address } from './address.tsx';
import { Glyph } from './glyph.tsx';

/** The shortened address (first 8, dots, last 4, grouped as every address is); a tap copies the whole one and says so. */
export function CopyableAddress({ address, label }: { address: string; label: string }) {
  const t = useStore($t);
  return (
    <button
      type="button"
      className="card w-full flex items-center justify-between gap-3 text-left text-fg border-0 cursor-pointer"
      onClick={() => void copyAddress(address, writeClipboard)}
      aria-label={`${label}: ${t('asset_copy_address')}`}
      data-testid="copy-address"
      data-address={address}
    >
      <span className="flex flex-col min-w-0">
        <span className="text-sm text-muted">{label}</span>
        <Address value={address} short />
      </span>
      <Glyph name="copy" size={20} className="shrink-0 text-muted" />
    </button>
  );
}
