import { useStore } from '@nanostores/react';
import { useState } from 'react';
import { exportHistory } from '../../../stores/history-export.ts';
import { $t } from '../../../stores/i18n.ts';

const today = () => new Date().toISOString().slice(0, 10);

/** The history as CSV (issue 36 item 4): a range of UTC days, then a short-lived link the browser or Telegram opens. */
export function HistoryExport({ currency }: { currency?: string }) {
  const t = useStore($t);
  const [from, setFrom] = useState(() => `${today().slice(0, 4)}-01-01`);
  const [to, setTo] = useState(today);
  const [busy, setBusy] = useState(false);
  const download = async () => {
    setBusy(true);
    await exportHistory({ currency, from, to });
    setBusy(false);
  };
  return (
    <details className="card flex flex-col gap-2" data-testid="history-export">
      <summary className="cursor-pointer">{t('history_export')}</summary>
      <div className="flex gap-2 items-end flex-wrap">
        <label className="flex flex-col text-sm text-muted">
          {t('history_export_from')}
          <input type="date" value={from} max={to} onChange={(e) => setFrom(e.target.value)} data-testid="history-export-from" />
        </label>
        <label className="flex flex-col text-sm text-muted">
          {t('history_export_to')}
          <input type="date" value={to} min={from} onChange={(e) => setTo(e.target.value)} data-testid="history-export-to" />
        </label>
        <button type="button" className="btn-ghost" disabled={busy || !from || !to} onClick={() => void download()} data-testid="history-export-download">
          {t('history_export_download')}
        </button>
      </div>
    </details>
  );
}
