/** A user: who they are, their accounts with the withdrawal freeze, money, orders, deposits, lockouts, and actions. */
import { useState } from 'react';
import { Button, canFinance, Go, Input, Refusal, Section, Table, useAction, useConsole, useLoad, utc } from '../ui.tsx';

type LedgerLine = { entryId: number; key: string; kind: string; currency: string; bucket: string; amount: string; at: string };
type Account = { id: string; name: string; withdrawalsFrozenAt: string | null; withdrawalsFrozenReason: string | null };
type Adjustment = { id: string; kind: string; currency: string; amount: string; state: string; reason: string; proposedBy: string | null; decidedBy: string | null };
type View = {
  user: { id: string; email: string | null; emailConfirmed: boolean; language: string; createdAt: string; role: string | null };
  accounts: Account[];
  balances: { accountId: string; currency: string; available: string; onHold: string }[];
  ledger: LedgerLine[];
  orders: { flow: string; id: string; state: string; currency: string; amount: string; detail: string | null; createdAt: string }[];
  deposits: { id: string; network: string; currency: string; amount: string; state: string; txHash: string; confirmations: number; confirmationsRequired: number; detectedAt: string }[];
  signIn: { failures: number; lockedUntil: string | null; sessionsRevokedAt: string | null };
  passcode: { set: boolean; failures: number; lockedUntil: string | null; blockedAt: string | null } | null;
  telegram: { telegramId: string; username: string | null; linkedAt: string } | null;
  adjustments: Adjustment[];
  audit: { id: number; at: string; actor: string; action: string; reason: string | null }[];
};

export function UserScreen(props: { userId: string }) {
  const { t, operator } = useConsole();
  const { data, error, reload } = useLoad<View>(`/users/${props.userId}`);
  if (error) return <Refusal error={error} />;
  if (!data) return <p className="text-muted">{t('common_loading')}</p>;
  const { user } = data;
  const none = t('common_none');
  return (
    <div className="flex flex-col gap-4" data-testid="user-view">
      <Section title={user.email ?? user.id}>
        <Table
          head={['user_id', 'user_email_confirmed', 'user_language', 'user_created', 'user_role']}
          rows={[[user.id, user.emailConfirmed ? t('common_yes') : t('common_no'), user.language, utc(user.createdAt), user.role ?? none]]}
        />
        <Table
          head={['user_sign_in_failures', 'user_sign_in_locked', 'user_passcode', 'user_passcode_locked', 'user_passcode_blocked', 'user_telegram']}
          rows={[
            [
              String(data.signIn.failures),
              data.signIn.lockedUntil ? utc(data.signIn.lockedUntil) : none,
              data.passcode?.set ? t('common_yes') : t('common_no'),
              data.passcode?.lockedUntil ? utc(data.passcode.lockedUntil) : none,
              data.passcode?.blockedAt ? utc(data.passcode.blockedAt) : none,
              data.telegram ? `${data.telegram.telegramId}${data.telegram.username ? ` @${data.telegram.username}` : ''}` : none,
            ],
          ]}
        />
      </Section>
      {data.accounts.map((account) => (
        <AccountSection key={account.id} account={account} balances={data.balances.filter((b) => b.accountId === account.id)} changed={reload} />
      ))}
      <Section title={t('user_adjustments')}>
        <Table
          head={['adjustment_kind', 'adjustment_amount', 'adjustment_state', 'adjustment_reason', 'adjustment_proposed_by', 'adjustment_decided_by']}
          rows={data.adjustments.map((a) => [t(a.kind === 'CREDIT' ? 'adjustment_credit' : 'adjustment_debit'), `${a.amount} ${a.currency}`, a.state, a.reason, a.proposedBy ?? none, a.decidedBy ?? none])}
        />
      </Section>
      <LedgerSection key={data.ledger[0]?.entryId ?? 0} userId={user.id} first={data.ledger} />
      <Section title={t('user_orders')}>
        <Table head={['order_flow', 'order_id', 'order_state', 'order_amount', 'order_detail', 'common_created']} rows={data.orders.map((o) => [
            o.flow,
            o.id,
            o.state === 'UNDER_REVIEW' && canFinance(operator) ? (
              <Go to="/operator/reviews" testId="order-under-review">
                {t('order_under_review')}
              </Go>
            ) : o.state === 'UNDER_REVIEW' ? (
              t('order_under_review')
            ) : (
              o.state
            ),
            `${o.amount} ${o.currency}`,
            o.detail ?? '',
            utc(o.createdAt),
          ])} />
      </Section>
      <Section title={t('user_deposits')}>
        <Table
          head={['deposit_network', 'order_amount', 'order_state', 'deposit_confirmations', 'deposit_tx', 'common_created']}
          rows={data.deposits.map((d) => [d.network, `${d.amount} ${d.currency}`, d.state, `${d.confirmations}/${d.confirmationsRequired}`, d.txHash, utc(d.detectedAt)])}
        />
      </Section>
      <Section title={t('user_audit')}>
        <Table head={['audit_at', 'audit_actor', 'audit_action', 'audit_reason']} rows={data.audit.map((a) => [utc(a.at), a.actor, a.action, a.reason ?? ''])} />
      </Section>
    </div>
  );
}

function AccountSection(props: { account: Account; balances: View['balances']; changed: () => void }) {
  const { t, call, operator } = useConsole();
  const { account } = props;
  const [reason, setReason] = useState('');
  const freeze = useAction();
  const frozen = account.withdrawalsFrozenAt !== null;
  const act = () =>
    freeze.run(async () => {
      await call('POST', `/accounts/${account.id}/${frozen ? 'unfreeze' : 'freeze'}`, { reason });
      setReason('');
      props.changed();
    });
  return (
    <Section title={t('user_account', { name: account.name })} testId="account">
      <p className="m-0 text-sm text-muted">{account.id}</p>
      <p className="m-0" data-testid="freeze-state">
        {frozen ? t('freeze_frozen', { since: account.withdrawalsFrozenAt ? utc(account.withdrawalsFrozenAt) : '', reason: account.withdrawalsFrozenReason ?? '' }) : t('freeze_open')}
      </p>
      <div className="flex gap-2 items-end">
        <Input label={t('common_reason')} value={reason} onChange={setReason} testId="freeze-reason" />
        <Button onClick={() => void act()} disabled={freeze.busy || reason.trim().length < 3} testId={frozen ? 'unfreeze' : 'freeze'}>
          {t(frozen ? 'freeze_unfreeze' : 'freeze_freeze')}
        </Button>
      </div>
      <Refusal error={freeze.error} />
      <Table head={['balance_currency', 'balance_available', 'balance_on_hold']} rows={props.balances.map((b) => [b.currency, b.available, b.onHold])} testId="balances" />
      {canFinance(operator) && <ProposeForm accountId={account.id} changed={props.changed} />}
    </Section>
  );
}

function ProposeForm(props: { accountId: string; changed: () => void }) {
  const { t, call } = useConsole();
  const [kind, setKind] = useState<'CREDIT' | 'DEBIT'>('CREDIT');
  const [currency, setCurrency] = useState('');
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const propose = useAction();
  const [done, setDone] = useState<string>();
  const submit = () =>
    propose.run(async () => {
      const made = await call<{ id: string }>('POST', '/adjustments', { account: props.accountId, kind, currency: currency.trim().toUpperCase(), amount, reason });
      setDone(t('adjustment_proposed', { id: made.id }));
      setAmount('');
      setReason('');
      props.changed();
    });
  return (
    <div className="flex flex-col gap-2 border-t border-line pt-3">
      <h3 className="m-0 text-base font-600">{t('adjustment_propose_title')}</h3>
      <div className="flex gap-2 items-end flex-wrap">
        <label className="flex flex-col gap-1 text-sm text-muted">
          {t('adjustment_kind')}
          <select className="field h-10 text-sm" value={kind} onChange={(e) => setKind(e.target.value === 'DEBIT' ? 'DEBIT' : 'CREDIT')} data-testid="adjustment-kind">
            <option value="CREDIT">{t('adjustment_credit')}</option>
            <option value="DEBIT">{t('adjustment_debit')}</option>
          </select>
        </label>
        <Input label={t('balance_currency')} value={currency} onChange={setCurrency} testId="adjustment-currency" placeholder="BTC" />
        <Input label={t('adjustment_amount')} value={amount} onChange={setAmount} testId="adjustment-amount" placeholder="0.01" />
        <Input label={t('common_reason')} value={reason} onChange={setReason} testId="adjustment-reason" />
        <Button onClick={() => void submit()} disabled={propose.busy || !currency || !amount || reason.trim().length < 3} testId="adjustment-propose">
          {t('adjustment_propose')}
        </Button>
      </div>
      <Refusal error={propose.error} />
      {done && <p className="m-0 text-success text-sm">{done}</p>}
    </div>
  );
}

function LedgerSection(props: { userId: string; first: LedgerLine[] }) {
  const { t, call } = useConsole();
  const [lines, setLines] = useState(props.first);
  const [more, setMore] = useState(props.first.length >= 50);
  const older = useAction();
  const last = lines.at(-1);
  return (
    <Section title={t('user_ledger')}>
      <Table head={['ledger_entry', 'ledger_kind', 'ledger_amount', 'ledger_bucket', 'audit_at']} rows={lines.map((l) => [String(l.entryId), l.kind, `${l.amount} ${l.currency}`, l.bucket, utc(l.at)])} testId="ledger" />
      {more && last && (
        <Button
          kind="ghost"
          disabled={older.busy}
          onClick={() =>
            void older.run(async () => {
              const page = (await call<{ ledger: LedgerLine[] }>('GET', `/users/${props.userId}/ledger?before=${last.entryId}`)).ledger;
              setLines((shown) => [...shown, ...page]);
              setMore(page.length >= 50);
            })
          }
        >
          {t('common_older')}
        </Button>
      )}
      <Refusal error={older.error} />
    </Section>
  );
}
