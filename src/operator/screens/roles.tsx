/** Operators and their roles; an admin grants and revokes them here (or with npm run operator -- grant). */
import { useState } from 'react';
import { Button, Input, Refusal, Section, Table, useAction, useConsole, useLoad, utc } from '../ui.tsx';

type Operator = { userId: string; email: string | null; role: string; grantedBy: string | null; grantedAt: string };

export function RolesScreen() {
  const { t, call } = useConsole();
  const { data, error, reload } = useLoad<{ operators: Operator[] }>('/roles');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('support');
  const action = useAction();
  return (
    <Section title={t('roles_title')} testId="roles">
      <Refusal error={error ?? action.error} />
      <div className="flex gap-2 items-end">
        <Input label={t('user_email')} value={email} onChange={setEmail} testId="role-email" />
        <select className="field h-10 w-40 text-sm" value={role} onChange={(e) => setRole(e.target.value)} data-testid="role-role">
          <option value="support">support</option>
          <option value="finance">finance</option>
          <option value="admin">admin</option>
        </select>
        <Button onClick={() => void action.run(async () => (await call('POST', '/roles', { email, role }), reload()))} disabled={action.busy || !email} testId="role-grant">
          {t('roles_grant')}
        </Button>
      </div>
      {data && (
        <Table
          head={['user_email', 'user_role', 'roles_granted', 'common_actions']}
          rows={data.operators.map((o) => [
            o.email ?? o.userId,
            o.role,
            `${utc(o.grantedAt)} · ${o.grantedBy ?? t('roles_command_line')}`,
            <Button kind="ghost" disabled={action.busy} onClick={() => void action.run(async () => (await call('POST', '/roles/revoke', { email: o.email }), reload()))}>
              {t('roles_revoke')}
            </Button>,
          ])}
        />
      )}
    </Section>
  );
}
