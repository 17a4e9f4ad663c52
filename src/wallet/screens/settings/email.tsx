import { useStore } from '@nanostores/react';
import { useEffect } from 'react';
import {
  $emailChange,
  $newEmailValid,
  $realEmail,
  countdownText,
  resendCode,
  setNewEmail,
  startResendCountdown,
  stopResendCountdown,
  submitNewEmail,
  typeCode,
  VERIFICATION_CODE_LENGTH,
} from '../../../stores/email-change.ts';
import { $t } from '../../../stores/i18n.ts';
import { MainAction } from '../../ui/main-action.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { getPagePath } from '@nanostores/router';
import { $router } from '../../../stores/router.ts';

/** /settings/wallet-protection/email: the address on the account, and the way to add or change it. */
export function EmailScreen() {
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
  const t = useStore($t);
  const state = useStore($emailChange);
  const valid = useStore($newEmailValid);
  return (
    <div className="screen">
      <ScreenHeader title={mode === 'add' ? t('email_add_title') : t('email_edit_title')} back={getPagePath($router, 'email')} backLabel={t('common_back')} />
      <p className="m-0 text-muted">{mode === 'add' ? t('email_add_text') : t('email_edit_text')}</p>
      <form
        className="flex flex-col gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          void submitNewEmail();
        }}
      >
        <label className="flex flex-col gap-2">
          <span className="text-sm text-muted">{t('email_new_label')}</span>
          <input
            className="field"
            type="email"
            inputMode="email"
            autoComplete="email"
            value={state.newEmail}
            onChange={(event) => setNewEmail(event.target.value)}
            data-testid="email-new"
          />
        </label>
        <MainAction label={t('common_continue')} onClick={() => void submitNewEmail()} disabled={!valid} busy={state.busy} />
      </form>
    </div>
  );
}

export function EmailVerifyScreen({ stage }: { stage: 'old' | 'new' }) {
  const t = useStore($t);
  const state = useStore($emailChange);
  const current = useStore($realEmail);
  useEffect(() => {
    startResendCountdown();
    return stopResendCountdown;
  }, [stage]);
  const address = stage === 'old' ? (current ?? '') : state.newEmail;
  return (
    <div className="screen">
      <ScreenHeader title={stage === 'old' ? t('email_verify_old_title') : t('email_verify_new_title')} back={getPagePath($router, 'email')} backLabel={t('common_back')} />
      <p className="m-0 text-muted" data-testid="email-verify-text">
        {t('email_verify_text', { email: address })}
      </p>
      <input
        key={stage}
        className="field text-center text-2xl tracking-[0.5em] font-700 uppercase"
        aria-label={t('email_code_label')}
        autoComplete="one-time-code"
        autoCapitalize="characters"
        spellCheck={false}
        maxLength={VERIFICATION_CODE_LENGTH}
        value={state.code}
        disabled={state.busy}
        autoFocus
        onChange={(event) => typeCode(event.target.value)}
        data-testid="email-code"
      />
      <button type="button" className="btn-ghost w-full" disabled={state.resendIn > 0 || state.busy} onClick={() => void resendCode()} data-testid="email-resend">
        {state.resendIn > 0 ? t('email_resend_in', { time: countdownText(state.resendIn) }) : t('email_resend')}
      </button>
    </div>
  );
}
