/** Deposits, withdrawals and sweeps pending past a threshold, per network, with their age and last error. */
import { useState } from 'react';
import { age, Input, Refusal, Section, Table, useConsole, useLoad, utc } from '../ui.tsx';

type Item = { kind: string; id: string; network: string; currency: string; state: string; amount: string; txHash: string | null; ageSeconds: number; lastError: string | null; waitingSeconds?: number | null };
type Report = { olderThanMinutes: number; items: Item[]; jobs: { name: string; lastError: string | null; lastFinishedAt: string | null }[] };

export function StuckScreen() {
  const { t } = useConsole();
  const [minutes, setMinutes] = useState('30');
  const valid = /^\d{1,6}$/.test(minutes) && Number(minutes) > 0;
  const { data, error } = useLoad<Report>(valid ? `/stuck?minutes=${minutes}` : null);
  return (
    <Section title={t('stuck_title')} testId="stuck">
      <div className="max-w-60">
        <Input label={t('stuck_older_than')} value={minutes} onChange={setMinutes} />
      </div>
      <Refusal error={error} />
      {data && (
        <>
          <Table
            empty="stuck_none"
            head={['deposit_network', 'stuck_kind', 'order_id', 'order_state', 'order_amount', 'deposit_tx', 'stuck_age', 'stuck_waiting_funds', 'stuck_last_error']}
            rows={data.items.map((i) => [i.network, i.kind, i.id, i.state, `${i.amount} ${i.currency}`, i.txHash ?? '', age(t, i.ageSeconds), typeof i.waitingSeconds === 'number' ? age(t, i.waitingSeconds) : '', i.lastError ?? ''])}
          />
          <Table head={['stuck_job', 'stuck_last_error', 'stuck_last_run']} rows={data.jobs.map((j) => [j.name, j.lastError ?? '', j.lastFinishedAt ? utc(j.lastFinishedAt) : ''])} />
        </>
      )}
    </Section>
  );
}
