import { useStore } from '@nanostores/react';
import { $t } from '../../../stores/i18n.ts';
import { $needsPasscode, protectionFlow, unlockProtection } from '../../../stores/passcode.ts';
import { $profile, loadProfile } from '../../../stores/user.ts';
import { Spinner } from '../../ui/spinner.tsx';
import type { RouteName } from '../../../stores/router.ts';
import { PasscodePrompt } from '../../ui/passcode-prompt.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { EmailFormScreen, EmailScreen, EmailVerifyScreen } from './email.tsx';
import { PasscodeChangeScreen, PasscodeDisableScreen, PasscodeEnableScreen, PasscodeMenuScreen, PasscodeSuccessScreen } from './passcode.tsx';
import { ProtectionScreen } from './protection.tsx';
import { getPagePath } from '@nanostores/router';
import { $router } from '../../../stores/router.ts';

/** Wallet protection, the passcode and the e-mail screens, loaded as one lazy chunk. */
export function ProtectionArea({ route }: { route: RouteName }) {
  const t = useStore($t);
  // While these screens show, the protection flow keeps the passcode entered; leaving them forgets it.
  useStore(protectionFlow.$current);
  const locked = useStore($needsPasscode);
  const profile = useStore($profile);
  // Whether a passcode is set is the profile's to say: nothing here shows before it is known.
  if (!profile.data && profile.error && !profile.loading) {
    return (
      <div className="screen items-center pt-24">
        <button type="button" className="btn-ghost" onClick={() => void loadProfile()}>
          {t('common_retry')}
        </button>
      </div>
    );
  }
  if (!profile.data) {
    return (
      <div className="flex justify-center pt-24">
        <Spinner label={t('common_loading')} />
      </div>
    );
  }
  // SPEC §4: with a passcode set, the protection screens (not the passcode's own, which ask for it themselves) open after it.
  const gated = route === 'walletProtection' || route.startsWith('email');
  if (gated && locked) {
    return (
      <div className="screen">
        <ScreenHeader title={t('protection_title')} back={getPagePath($router, 'settings')} backLabel={t('common_back')} />
        <PasscodePrompt title={t('passcode_enter_title')} onComplete={unlockProtection} />
      </div>
    );
  }
  switch (route) {
    case 'passcode':
      return <PasscodeMenuScreen />;
    case 'passcodeEnable':
      return <PasscodeEnableScreen />;
    case 'passcodeChange':
      return <PasscodeChangeScreen />;
    case 'passcodeDisable':
      return <PasscodeDisableScreen />;
    case 'passcodeSuccess':
      return <PasscodeSuccessScreen />;
    case 'email':
      return <EmailScreen />;
    case 'emailAdd':
    case 'emailEdit':
      return <EmailFormScreen mode={route === 'emailAdd' ? 'add' : 'edit'} />;
    case 'emailVerifyOld':
    case 'emailVerifyNew':
      return <EmailVerifyScreen stage={route === 'emailVerifyOld' ? 'old' : 'new'} />;
    default:
      return <ProtectionScreen />;
  }
}
