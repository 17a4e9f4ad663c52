import { useStore } from '@nanostores/react';
import type { AddressCaution } from '../../lib/wire/withdrawals.ts';
import { $t } from '../../stores/i18n.ts';

/**
 * The poisoned-address warning (issue 36 item 3): what is wrong with the typed address and the box the user ticks
 * after checking it; the flow goes on only once it is ticked.
 */
export function AddressCautionNotice({ caution, acknowledged, onAcknowledge }: { caution: AddressCaution; acknowledged: boolean; onAcknowledge: (checked: boolean) => void }) {
  const t = useStore($t);
  return (
    <div className="flex flex-col gap-2 rounded-xl border border-danger border-solid p-3" role="alert" data-testid="address-caution">
      <span className="font-700 text-danger">{t('address_caution_title')}</span>
      <span className="text-sm" style={{ overflowWrap: 'anywhere' }} data-testid="address-caution-text">
        {caution.kind === 'LOOKALIKE' ? t('address_caution_lookalike', { address: caution.similarTo }) : t('address_caution_dust')}
      </span>
      <label className="flex items-center gap-2 text-sm font-600">
        <input type="checkbox" className="w-5 h-5 shrink-0" checked={acknowledged} onChange={(event) => onAcknowledge(event.target.checked)} data-testid="address-caution-confirm" />
        {t('address_caution_confirm')}
      </label>
    </div>
  );
}
