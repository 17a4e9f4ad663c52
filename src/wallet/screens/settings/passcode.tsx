import { CodeInput } from '../../ui/code-input.tsx';
import { useStore } from '@nanostores/react';
import { useEffect, useState } from 'react';
import { $t } from '../../../stores/i18n.ts';
import { $pincodeBlocked } from '../../../stores/passcode-entry.ts';
import { $pinCodeActive, $pincodeReset, createPasscodeChange, createPasscodeSetup, createSuccessCountdown, disablePasscode, sendPincodeReset, typePincodeResetCode } from '../../../stores/passcode.ts';
import { Glyph } from '../../ui/glyph.tsx';
import { PasscodePrompt } from '../../ui/passcode-prompt.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { getPagePath } from '@nanostores/router';
import { $router } from '../../../stores/router.ts';

/** /settings/passcode: set one, or change or turn off the one that is set. */
export function PasscodeMenuScreen() {
  const t = useStore($t);
  const active = useStore($pinCodeActive);
  return (
    <div className="screen">
      <ScreenHeader title={t('passcode_title')} back={getPagePath($router, 'walletProtection')} backLabel={t('common_back')} />
      <p className="m-0 text-muted" data-testid="passcode-status">
        {active ? t('passcode_active_text') : t('passcode_inactive_text')}
      </p>
      {active && <PincodeReset />}
      {active ? (
        <div className="flex flex-col gap-3">
          <a href={getPagePath($router, 'passcodeChange')} className="btn-primary w-full no-underline" data-testid="passcode-change">
            {t('passcode_change')}
          </a>
          <a href={getPagePath($router, 'passcodeDisable')} className="btn-ghost w-full no-underline text-danger" data-testid="passcode-disable">
            {t('passcode_disable')}
          </a>
        </div>
      ) : (
        <a href={getPagePath($router, 'passcodeEnable')} className="btn-primary w-full no-underline" data-testid="passcode-enable">
          {t('passcode_enable')}
        </a>
      )}
    </div>
  );
}

export function PasscodeEnableScreen() {
  const t = useStore($t);
  const [setup] = useState(createPasscodeSetup);
  const step = useStore(setup.$step);
  return (
    <div className="screen">
      <ScreenHeader title={t('passcode_enable')} back={getPagePath($router, 'passcode')} backLabel={t('common_back')} />
      <PasscodePrompt title={step === 'enter' ? t('passcode_new_title') : t('passcode_confirm_title')} onComplete={setup.submit} />
    </div>
  );
}

export function PasscodeChangeScreen() {
  const t = useStore($t);
  const [change] = useState(createPasscodeChange);
  const step = useStore(change.$step);
  const title = step === 'current' ? t('passcode_current_title') : step === 'new' ? t('passcode_new_title') : t('passcode_confirm_title');
  return (
    <div className="screen">
      <ScreenHeader title={t('passcode_change')} back={getPagePath($router, 'passcode')} backLabel={t('common_back')} />
      <PasscodePrompt title={title} onComplete={change.submit} />
    </div>
  );
}

export function PasscodeDisableScreen() {
  const t = useStore($t);
  return (
    <div className="screen">
      <ScreenHeader title={t('passcode_disable')} back={getPagePath($router, 'passcode')} backLabel={t('common_back')} />
      <PasscodePrompt title={t('passcode_current_title')} onComplete={disablePasscode} />
    </div>
  );
}

export function PasscodeSuccessScreen() {
  const t = useStore($t);
  const [countdown] = useState(createSuccessCountdown);
  const left = useStore(countdown.$left);
  useEffect(() => {
    countdown.start();
    return () => countdown.stop();
  }, [countdown]);
  return (
    <div className="screen items-center text-center pt-16">
      <span className="w-20 h-20 rounded-full bg-surface inline-flex items-center justify-center text-success">
        <Glyph name="shield" size={36} />
      </span>
      <h1 className="text-2xl font-700 m-0" data-testid="passcode-success">
        {t('passcode_success_title')}
      </h1>
      <p className="m-0 text-muted" data-testid="passcode-redirect">
        {t('passcode_success_redirect', { seconds: left })}
      </p>
      <a href={getPagePath($router, 'walletProtection')} className="btn-primary w-full no-underline mt-4">
        {t('common_continue')}
      </a>
    </div>
  );
}

/** Shown once a prompt met B2C_USM0032: a code mailed to the account's address turns the blocked passcode off. */
function PincodeReset() {
  const t = useStore($t);
  const blocked = useStore($pincodeBlocked);
  const reset = useStore($pincodeReset);
  if (!blocked) return null;
  return (
    <div className="card flex flex-col gap-3" data-testid="passcode-reset">
      <span className="font-600">{t('passcode_blocked_title')}</span>
      <span className="text-sm text-muted">{t('passcode_blocked_text')}</span>
      {reset.sent ? (
        <CodeInput length={4} label={t('email_code_label')} value={reset.code} disabled={reset.busy} onChange={(code) => void typePincodeResetCode(code)} testId="passcode-reset-code" />
      ) : (
        <button type="button" className="btn-primary w-full" disabled={reset.busy} onClick={() => void sendPincodeReset()}>
          {t('passcode_reset_send')}
        </button>
      )}
    </div>
  );
}
