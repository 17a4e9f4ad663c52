/** The audit log, newest first: who did what to what, when and why. */
import { useState } from 'react';
import { Button, Refusal, Section, Table, useAction, useConsole, useLoad, utc } from '../ui.tsx';

type Line = { id: number; at: string; actor: string; action: string; subject: string; reason: string | null; details: Record<string, unknown> };

/** `key: value` pairs, one after another, so a long line wraps between them. */
function details(values: Record<string, unknown>): string {
  return Object.entries(values)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');
}

export function AuditScreen() {
  const { t, call } = useConsole();
  const { data, error } = useLoad<{ audit: Line[] }>('/audit');
  const [older, setOlder] = useState<Line[]>([]);
  const more = useAction();
  const lines = [...(data?.audit ?? []), ...older];
  const last = lines.at(-1);
  return (
    <Section title={t('audit_title')} testId="audit">
      <Refusal error={error ?? more.error} />
      <Table
        testId="audit-lines"
        head={['audit_at', 'audit_actor', 'audit_action', 'audit_subject', 'audit_reason', 'audit_details']}
        rows={lines.map((l) => [utc(l.at), l.actor, l.action, l.subject, l.reason ?? '', details(l.details)])}
      />
      {last && lines.length % 50 === 0 && (
        <Button kind="ghost" disabled={more.busy} onClick={() => void more.run(async () => setOlder([...older, ...(await call<{ audit: Line[] }>('GET', `/audit?before=${last.id}`)).audit]))}>
          {t('common_older')}
        </Button>
      )}
    </Section>
  );
}
