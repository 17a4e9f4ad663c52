/** Credits and debits waiting for a second operator: approve (applied at once) or reject with a reason. */
import { useState } from 'react';
import { Button, canFinance, Go, Input, Refusal, Section, Table, useAction, useConsole, useLoad, utc } from '../ui.tsx';

type Adjustment = { id: string; userId: string; email: string | null; accountId: string; kind: 'CREDIT' | 'DEBIT'; currency: string; amount: string; reason: string; proposedBy: string | null; proposedById: string; proposedAt: string; decidedBy: string | null };

export function AdjustmentsScreen() {
  const { t, operator } = useConsole();
  const [state, setState] = useState<'PROPOSED' | 'APPLIED' | 'REJECTED'>('PROPOSED');
  const { data, error, reload } = useLoad<{ adjustments: Adjustment[] }>(`/adjustments?state=${state}`);
  return (
    <Section title={t('adjustments_title')} testId="adjustments">
      <div className="flex gap-2">
        {(['PROPOSED', 'APPLIED', 'REJECTED'] as const).map((s) => (
          <Button key={s} kind={s === state ? 'primary' : 'ghost'} onClick={() => setState(s)}>
            {t(`adjustments_${s.toLowerCase()}` as 'adjustments_proposed')}
          </Button>
        ))}
      </div>
      <Refusal error={error} />
      {data && (
        <Table
          testId="adjustment-rows"
          empty="adjustments_none"
          head={['user_email', 'adjustment_kind', 'adjustment_amount', 'adjustment_reason', 'adjustment_proposed_by', 'common_created', 'common_actions']}
          rows={data.adjustments.map((a) => [
            <Go to={`/operator/users/${a.userId}`}>{a.email ?? a.userId}</Go>,
            t(a.kind === 'CREDIT' ? 'adjustment_credit' : 'adjustment_debit'),
            `${a.amount} ${a.currency}`,
            a.reason,
            a.proposedBy ?? '',
            utc(a.proposedAt),
            state === 'PROPOSED' && canFinance(operator) ? <Decide adjustment={a} decided={reload} /> : (a.decidedBy ?? ''),
          ])}
        />
      )}
    </Section>
  );
}

function Decide(props: { adjustment: Adjustment; decided: () => void }) {
  const { t, call, operator } = useConsole();
  const [reason, setReason] = useState('');
  const decide = useAction();
  if (props.adjustment.proposedById === operator.id) return <span className="text-muted text-sm">{t('adjustment_yours')}</span>;
  const send = (verb: 'approve' | 'reject') =>
    decide.run(async () => {
      await call('POST', `/adjustments/${props.adjustment.id}/${verb}`, verb === 'approve' && reason.trim() === '' ? {} : { reason });
      props.decided();
    });
  return (
    <div className="flex flex-col gap-2 min-w-60">
      <Input label={t('common_reason')} value={reason} onChange={setReason} testId="decision-reason" />
      <div className="flex gap-2">
        <Button onClick={() => void send('approve')} disabled={decide.busy} testId="adjustment-approve">
          {t('adjustment_approve')}
        </Button>
        <Button kind="ghost" onClick={() => void send('reject')} disabled={decide.busy || reason.trim().length < 3} testId="adjustment-reject">
          {t('adjustment_reject')}
        </Button>
      </div>
      <Refusal error={decide.error} />
    </div>
  );
}
