import { useStore } from '@nanostores/react';
import { useState } from 'react';
import { canSignOut, signOut } from '../../../stores/auth.ts';
import { $t } from '../../../stores/i18n.ts';
import { $darkTheme, $selectedCurrency, $selectedLanguage, isDark, setDarkTheme } from '../../../stores/settings.ts';
import { $profile } from '../../../stores/user.ts';
import { Icon } from '../../ui/icon.tsx';
import { MessengerLinkRow } from './messenger-link.tsx';
import { getPagePath } from '@nanostores/router';
import { $router } from '../../../stores/router.ts';
import { PAGES } from '../../../lib/routes.ts';

function LinkRow({ href, label, value, testId }: { href: string; label: string; value?: string; testId?: string }) {
  return (
    <a href={href} className="flex items-center justify-between gap-3 px-4 min-h-14 no-underline border-b border-line border-solid last:border-b-0" data-testid={testId}>
      <span>{label}</span>
      <span className="flex items-center gap-1 text-muted">
        {value}
        <Icon name="back" size={18} className="rotate-180" />
      </span>
    </a>
  );
}

export function SettingsScreen() {
  const t = useStore($t);
  const language = useStore($selectedLanguage);
  const currency = useStore($selectedCurrency);
  const profile = useStore($profile);
  useStore($darkTheme);
  const dark = isDark();
  const [leaving, setLeaving] = useState(false);
  const email = profile.data?.email;
  return (
    <div className="screen">
      <h1 className="text-2xl font-700 m-0">{t('settings_title')}</h1>
      {email && (
        <div className="card flex flex-col gap-1">
          <span className="text-sm text-muted">{t('settings_account')}</span>
          <span className="font-600 break-all" data-testid="profile-email">
            {email}
          </span>
        </div>
      )}
      <nav className="card flex flex-col p-0 overflow-hidden" aria-label={t('settings_title')}>
        <LinkRow href={getPagePath($router, 'selectCurrency')} label={t('settings_default_currency')} value={currency} testId="settings-currency" />
        <LinkRow href={getPagePath($router, 'selectLanguage')} label={t('settings_default_language')} value={language === 'RUS' ? t('common_russian') : t('common_english')} testId="settings-language" />
      </nav>
      <nav className="card flex flex-col p-0 overflow-hidden" aria-label={t('settings_wallet_protection')}>
        <LinkRow href={getPagePath($router, 'walletProtection')} label={t('settings_wallet_protection')} testId="settings-protection" />
        <LinkRow href={getPagePath($router, 'passcode')} label={t('settings_passcode')} value={profile.data?.pinCodeActive ? t('passcode_on') : t('passcode_off')} testId="settings-passcode" />
        <LinkRow href={getPagePath($router, 'addressBook')} label={t('settings_address_book')} testId="settings-address-book" />
      </nav>
      <MessengerLinkRow />
      <label className="card flex items-center justify-between cursor-pointer">
        <span>{t('settings_dark_theme')}</span>
        <input type="checkbox" role="switch" checked={dark} onChange={(event) => setDarkTheme(event.target.checked)} className="w-5 h-5" />
      </label>
      <nav className="card flex flex-col p-0 overflow-hidden" aria-label={t('terms_title')}>
        <a href={PAGES.terms} rel="external" className="flex items-center justify-between px-4 min-h-14 no-underline border-b border-line border-solid">
          {t('terms_title')}
        </a>
        <a href={PAGES.privacy} rel="external" className="flex items-center justify-between px-4 min-h-14 no-underline">
          {t('privacy_title')}
        </a>
      </nav>
      {canSignOut() && (
        <button
          type="button"
          className="btn-ghost text-danger"
          disabled={leaving}
          onClick={() => {
            setLeaving(true);
            void signOut();
          }}
        >
          {t('settings_logout')}
        </button>
      )}
    </div>
  );
}
