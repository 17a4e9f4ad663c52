/**
 * Withdrawals held for review (domain/withdrawals/review.ts), oldest first: approve (it goes on, once) or reject with a
 * reason (its hold goes back and the user sees Failed). Below them, outside withdrawals from before the approval seal,
 * which the signer refuses until finance re-approves their figures. Finance's screen; the gateway checks the role again.
 */
import { useState } from 'react';
import type { TextKey } from '../texts.ts';
import { age, Button, Go, Input, Refusal, Section, Table, useAction, useConsole, useLoad } from '../ui.tsx';

type Unsealed = { orderId: string; userId: string; email: string | null; state: string; currency: string; network: string; amount: string; fee: string; address: string; ageSeconds: number };

type Review = { orderId: string; userId: string; email: string | null; currency: string; network: string; amount: string; usd: string | null; address: string; reasons: string[]; createdAt: string; ageSeconds: number };

const REASONS: Record<string, TextKey> = { ABOVE_THRESHOLD: 'review_reason_above_threshold', NEW_ADDRESS: 'review_reason_new_address', NO_PRICE: 'review_reason_no_price' };

export function ReviewsScreen() {
  const { t } = useConsole();
  const { data, error, reload } = useLoad<{ reviews: Review[] }>('/reviews');
  return (
    <Section title={t('reviews_title')} testId="reviews">
      <p className="m-0 text-sm text-muted">{t('reviews_text')}</p>
      <Refusal error={error} />
      {data && (
        <Table
          testId="review-rows"
          empty="reviews_none"
          head={['user_email', 'order_amount', 'deposit_network', 'review_usd', 'review_address', 'review_reasons', 'stuck_age', 'common_actions']}
          rows={data.reviews.map((r) => [
            <Owner of={r} testId="review-user" />,
            <span className="whitespace-nowrap" data-testid="review-amount">{`${r.amount} ${r.currency}`}</span>,
            r.network,
            r.usd === null ? t('review_no_price') : t('review_usd_value', { usd: r.usd }),
            r.address,
            r.reasons.map((reason) => (REASONS[reason] ? t(REASONS[reason]) : reason)).join('; '),
            <span className="whitespace-nowrap">{age(t, r.ageSeconds)}</span>,
            <Decide key={r.orderId} review={r} decided={reload} />,
          ])}
        />
      )}
      <UnsealedWithdrawals />
    </Section>
  );
}

/** The withdrawal's user, by e-mail (or id), opening their page. */
function Owner(props: { of: { userId: string; email: string | null }; testId: string }) {
  return (
    <Go to={`/operator/users/${props.of.userId}`} testId={props.testId}>
      {props.of.email ?? props.of.userId}
    </Go>
  );
}

function UnsealedWithdrawals() {
  const { t } = useConsole();
  const { data, error, reload } = useLoad<{ withdrawals: Unsealed[] }>('/unsealed');
  return (
    <div className="flex flex-col gap-2 mt-4" data-testid="unsealed">
      <h3 className="m-0 text-base font-600">{t('unsealed_title')}</h3>
      <p className="m-0 text-sm text-muted">{t('unsealed_text')}</p>
      <Refusal error={error} />
      {data && (
        <Table
          testId="unsealed-rows"
          empty="unsealed_none"
          head={['user_email', 'order_state', 'order_amount', 'unsealed_fee', 'deposit_network', 'review_address', 'stuck_age', 'common_actions']}
          rows={data.withdrawals.map((w) => [
            <Owner of={w} testId="unsealed-user" />,
            w.state,
            <span className="whitespace-nowrap">{`${w.amount} ${w.currency}`}</span>,
            <span className="whitespace-nowrap">{`${w.fee} ${w.currency}`}</span>,
            w.network,
            w.address,
            <span className="whitespace-nowrap">{age(t, w.ageSeconds)}</span>,
            <Reseal key={w.orderId} withdrawal={w} done={reload} />,
          ])}
        />
      )}
    </div>
  );
}

function Reseal(props: { withdrawal: Unsealed; done: () => void }) {
  const { t, call } = useConsole();
  const [reason, setReason] = useState('');
  const reseal = useAction();
  const send = () =>
    reseal.run(async () => {
      await call('POST', `/unsealed/${props.withdrawal.orderId}/reseal`, reason.trim() === '' ? {} : { reason });
      props.done();
    });
  return (
    <div className="flex flex-col gap-2 min-w-60">
      <Input label={t('common_reason')} value={reason} onChange={setReason} testId="unsealed-reason" />
      <Button onClick={() => void send()} disabled={reseal.busy} testId="unsealed-reseal">
        {t('unsealed_reseal')}
      </Button>
      <Refusal error={reseal.error} />
    </div>
  );
}

function Decide(props: { review: Review; decided: () => void }) {
  const { t, call } = useConsole();
  const [reason, setReason] = useState('');
  const decide = useAction();
  const send = (verb: 'approve' | 'reject') =>
    decide.run(async () => {
      await call('POST', `/reviews/${props.review.orderId}/${verb}`, reason.trim() === '' ? {} : { reason });
      props.decided();
    });
  return (
    <div className="flex flex-col gap-2 min-w-60">
      <Input label={t('common_reason')} value={reason} onChange={setReason} testId="review-reason" />
      <div className="flex gap-2">
        <Button onClick={() => void send('approve')} disabled={decide.busy} testId="review-approve">
          {t('review_approve')}
        </Button>
        <Button kind="ghost" onClick={() => void send('reject')} disabled={decide.busy || reason.trim().length < 3} testId="review-reject">
          {t('review_reject')}
        </Button>
      </div>
      {reason.trim().length < 3 && <span className="text-xs text-muted">{t('review_reject_needs_reason')}</span>}
      <Refusal error={decide.error} />
    </div>
  );
}
