import { CodeInput } from '../../ui/code-input.tsx';
import { useStore } from '@nanostores/react';
import { $realEmail, countdownText, emailChangeFlow, VERIFICATION_CODE_LENGTH, type EmailChangeVisit } from '../../../stores/email-change.ts';
import { FlowView } from '../../ui/flow-view.tsx';
import { $t } from '../../../stores/i18n.ts';
import { MainAction } from '../../ui/main-action.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { getPagePath } from '@nanostores/router';
import { $router } from '../../../stores/router.ts';

/** /settings/wallet-protection/email: the address on the account, and the way to add or change it. */
export function EmailScreen() {
  return <FlowView flow={emailChangeFlow}>{() => <EmailOverview />}</FlowView>;
}

function EmailOverview() {
  const t = useStore($t);
  const email = useStore($realEmail);
  return (
    <div className="screen">
      <ScreenHeader title={t('email_title')} back={getPagePath($router, 'walletProtection')} backLabel={t('common_back')} />
      <div className="card flex flex-col gap-1">
        <span className="text-sm text-muted">{t('email_current')}</span>
        <span className="font-600 break-all" data-testid="email-current">
          {email ?? t('email_none')}
        </span>
      </div>
      <a href={email ? getPagePath($router, 'emailEdit') : getPagePath($router, 'emailAdd')} className="btn-primary w-full no-underline" data-testid="email-start">
        {email ? t('email_edit_title') : t('email_add_title')}
      </a>
    </div>
  );
}

export function EmailFormScreen({ mode }: { mode: 'add' | 'edit' }) {
  return <FlowView flow={emailChangeFlow}>{(flow) => <EmailForm mode={mode} flow={flow} />}</FlowView>;
}

function EmailForm({ mode, flow }: { mode: 'add' | 'edit'; flow: EmailChangeVisit }) {
  const t = useStore($t);
  const state = useStore(flow.$emailChange);
  const valid = useStore(flow.$newEmailValid);
  const same = useStore(flow.$sameAsCurrent);
  return (
    <div className="screen">
      <ScreenHeader title={mode === 'add' ? t('email_add_title') : t('email_edit_title')} back={getPagePath($router, 'email')} backLabel={t('common_back')} />
      <p className="m-0 text-muted">{mode === 'add' ? t('email_add_text') : t('email_edit_text')}</p>
      <form
        className="flex flex-col gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          void flow.submitNewEmail();
        }}
      >
        <label className="flex flex-col gap-2">
          <span className="text-sm text-muted">{t('email_new_label')}</span>
          <input
            className={`field ${same ? 'border-danger' : ''}`}
            type="email"
            inputMode="email"
            autoComplete="email"
            value={state.newEmail}
            onChange={(event) => flow.setNewEmail(event.target.value)}
            aria-invalid={same}
            data-testid="email-new"
          />
        </label>
        {same && (
          <p className="m-0 text-sm text-danger" role="alert" data-testid="email-same">
            {t('error_EMAIL_SAME')}
          </p>
        )}
        <MainAction label={t('common_continue')} onClick={() => void flow.submitNewEmail()} disabled={!valid} busy={state.busy} />
      </form>
    </div>
  );
}

export function EmailVerifyScreen({ stage }: { stage: 'old' | 'new' }) {
  return <FlowView flow={emailChangeFlow}>{(flow) => <EmailVerify stage={stage} flow={flow} />}</FlowView>;
}

function EmailVerify({ stage, flow }: { stage: 'old' | 'new'; flow: EmailChangeVisit }) {
  const t = useStore($t);
  const state = useStore(flow.$emailChange);
  const current = useStore($realEmail);
  const address = stage === 'old' ? (current ?? '') : state.newEmail;
  return (
    <div className="screen">
      <ScreenHeader title={stage === 'old' ? t('email_verify_old_title') : t('email_verify_new_title')} back={getPagePath($router, 'email')} backLabel={t('common_back')} />
      <p className="m-0 text-muted" data-testid="email-verify-text">
        {t('email_verify_text', { email: address })}
      </p>
      <CodeInput key={stage} length={VERIFICATION_CODE_LENGTH} label={t('email_code_label')} value={state.code} disabled={state.busy} autoFocus onChange={flow.typeCode} testId="email-code" />
      <button type="button" className="btn-ghost w-full" disabled={state.resendIn > 0 || state.busy} onClick={() => void flow.resendCode()} data-testid="email-resend">
        {state.resendIn > 0 ? t('email_resend_in', { time: countdownText(state.resendIn) }) : t('email_resend')}
      </button>
    </div>
  );
}
