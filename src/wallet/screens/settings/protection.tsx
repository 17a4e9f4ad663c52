import { Switch } from '../../ui/switch.tsx';
import { useStore } from '@nanostores/react';
import { $realEmail } from '../../../stores/email-change.ts';
import { $t } from '../../../stores/i18n.ts';
import { $pinCodeActive, biometryAvailable, toggleBiometry } from '../../../stores/passcode.ts';
import { $faceIdEnabled } from '../../../stores/settings.ts';
import { Icon } from '../../ui/icon.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { getPagePath } from '@nanostores/router';
import { $router } from '../../../stores/router.ts';

export function ProtectionRow({ href, label, value, testId }: { href: string; label: string; value?: string; testId?: string }) {
  return (
    <a href={href} className="flex items-center justify-between gap-3 px-4 min-h-14 no-underline border-b border-line border-solid last:border-b-0" data-testid={testId}>
      <span className="shrink-0 whitespace-nowrap">{label}</span>
      <span className="flex items-center gap-1 text-muted min-w-0">
        <span className="truncate">{value}</span>
        <Icon name="back" size={18} className="rotate-180 shrink-0" />
      </span>
    </a>
  );
}

/** /settings/wallet-protection: the passcode, biometric unlock and the e-mail (SPEC §2, §4). */
export function ProtectionScreen() {
  const t = useStore($t);
  const active = useStore($pinCodeActive);
  const email = useStore($realEmail);
  const faceId = useStore($faceIdEnabled);
  return (
    <div className="screen">
      <ScreenHeader title={t('protection_title')} back={getPagePath($router, 'settings')} backLabel={t('common_back')} />
      <p className="m-0 text-muted">{t('protection_text')}</p>
      <nav className="card flex flex-col p-0 overflow-hidden" aria-label={t('protection_title')}>
        <ProtectionRow href={getPagePath($router, 'passcode')} label={t('passcode_title')} value={active ? t('passcode_on') : t('passcode_off')} testId="protection-passcode" />
        <ProtectionRow href={getPagePath($router, 'email')} label={email ? t('email_edit_title') : t('email_add_title')} value={email ?? ''} testId="protection-email" />
      </nav>
      {biometryAvailable() && (
        <label className="card flex items-center justify-between cursor-pointer">
          <span>{t('protection_biometry')}</span>
          <Switch checked={faceId} onChange={(on) => void toggleBiometry(on)} testId="biometry-toggle" />
        </label>
      )}
    </div>
  );
}
