/** The mail outbox, newest first: each mail's status and error, and resending one as it was written. */
import { useState } from 'react';
import { Button, Refusal, Section, Table, useAction, useConsole, useLoad, utc } from '../ui.tsx';

type Mail = { id: string; recipient: string; subject: string; kind: string; status: string; error: string | null; createdAt: string; resendable: boolean };

export function MailScreen() {
  const { t, call } = useConsole();
  const [status, setStatus] = useState('');
  const { data, error, reload } = useLoad<{ mails: Mail[] }>(`/mail${status ? `?status=${status}` : ''}`);
  const resend = useAction();
  const [done, setDone] = useState<string>();
  return (
    <Section title={t('mail_title')} testId="mail">
      <label className="flex gap-2 items-center text-sm text-muted">
        {t('mail_status')}
        <select className="field h-10 w-48 text-sm" value={status} onChange={(e) => setStatus(e.target.value)}>
          <option value="">{t('mail_all')}</option>
          <option value="outbox">outbox</option>
          <option value="sent">sent</option>
          <option value="failed">failed</option>
        </select>
      </label>
      <Refusal error={error ?? resend.error} />
      {done && <p className="m-0 text-success text-sm">{done}</p>}
      {data && (
        <Table
          empty="mail_none"
          head={['mail_id', 'mail_to', 'mail_kind', 'mail_subject', 'mail_status', 'mail_error', 'common_created', 'common_actions']}
          rows={data.mails.map((m) => [
            m.id,
            m.recipient,
            m.kind,
            m.subject,
            m.status,
            m.error ?? '',
            utc(m.createdAt),
            m.resendable ? (
              <Button
                kind="ghost"
                disabled={resend.busy}
                testId="mail-resend"
                onClick={() =>
                  void resend.run(async () => {
                    const sent = await call<{ id: string; status: string }>('POST', `/mail/${m.id}/resend`, {});
                    setDone(t('mail_resent', { id: sent.id, status: sent.status }));
                    reload();
                  })
                }
              >
                {t('mail_resend')}
              </Button>
            ) : (
              <span className="text-muted">{t('mail_not_resendable')}</span>
            ),
          ])}
        />
      )}
    </Section>
  );
}
