import { Switch } from '../../ui/switch.tsx';
import { useStore } from '@nanostores/react';
import { useEffect, useState } from 'react';
import { canSignOut, signOut } from '../../../stores/auth.ts';
import { $t } from '../../../stores/i18n.ts';
import { $darkTheme, $selectedCurrency, $selectedLanguage, isDark, setDarkTheme } from '../../../stores/settings.ts';
import { $profile } from '../../../stores/user.ts';
import { Icon } from '../../ui/icon.tsx';
import { MessengerLinkRow, MessengerNotificationsRow } from './messenger-link.tsx';
import { HistoryExport } from '../common/history-export.tsx';
import { $supportChat } from '../../../stores/feedback.ts';
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

/** SPEC §2 'leave feedback': the form, or inside Telegram the support chat when one is configured. */
function FeedbackRow() {
  const t = useStore($t);
  const chat = useStore($supportChat);
  return (
    <nav className="card flex flex-col p-0 overflow-hidden" aria-label={t('feedback_title')}>
      {chat ? (
        <a href={chat} target="_blank" rel="noopener noreferrer" className="flex items-center justify-between gap-3 px-4 min-h-14 no-underline" data-testid="settings-feedback">
          <span>{t('settings_feedback')}</span>
          <Icon name="back" size={18} className="rotate-180 text-muted" />
        </a>
      ) : (
        <LinkRow href={getPagePath($router, 'feedback')} label={t('settings_feedback')} testId="settings-feedback" />
      )}
    </nav>
  );
}

/** Logout asks first: one tap on a crowded screen must not end the session. */
function LogoutControl() {
  const t = useStore($t);
  const [asking, setAsking] = useState(false);
  const [leaving, setLeaving] = useState(false);
  useEffect(() => {
    if (!asking) return undefined;
    const close = (event: KeyboardEvent) => event.key === 'Escape' && !leaving && setAsking(false);
    window.addEventListener('keydown', close);
    return () => window.removeEventListener('keydown', close);
  }, [asking, leaving]);
  return (
    <>
      <button type="button" className="btn-ghost" onClick={() => setAsking(true)} data-testid="logout">
        {t('settings_logout')}
      </button>
      {asking && (
        // A sheet over the screen and its bottom navigation: the question and both answers always in sight.
        <div className="fixed inset-0 z-50 flex items-end justify-center bg-black/50" onClick={() => !leaving && setAsking(false)}>
          <section
            className="card w-full max-w-[540px] flex flex-col gap-3 rounded-b-none pb-[calc(1.5rem+env(safe-area-inset-bottom))]"
            role="alertdialog"
            aria-modal="true"
            aria-labelledby="logout-question"
            onClick={(event) => event.stopPropagation()}
            data-testid="logout-confirm"
          >
            <p className="m-0 font-600" id="logout-question">
              {t('settings_logout_question')}
            </p>
            <p className="m-0 text-sm text-muted">{t('settings_logout_text')}</p>
            <div className="grid grid-cols-2 gap-2">
              <button type="button" className="btn-ghost bg-bg" onClick={() => setAsking(false)} disabled={leaving} autoFocus>
                {t('common_cancel')}
              </button>
              <button
                type="button"
                className="btn-primary"
                disabled={leaving}
                onClick={() => {
                  setLeaving(true);
                  void signOut();
                }}
              >
                {t('settings_logout')}
              </button>
            </div>
          </section>
        </div>
      )}
    </>
  );
}

export function SettingsScreen() {
  const t = useStore($t);
  const language = useStore($selectedLanguage);
  const currency = useStore($selectedCurrency);
  const profile = useStore($profile);
  useStore($darkTheme);
  const dark = isDark();
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
      <MessengerNotificationsRow />
      <HistoryExport />
      <label className="card flex items-center justify-between cursor-pointer">
        <span>{t('settings_dark_theme')}</span>
        <Switch checked={dark} onChange={setDarkTheme} testId="dark-theme-toggle" />
      </label>
      <nav className="card flex flex-col p-0 overflow-hidden" aria-label={t('reserves_title')}>
        <LinkRow href={getPagePath($router, 'reserves')} label={t('reserves_title')} testId="settings-reserves" />
      </nav>
      <FeedbackRow />
      <nav className="card flex flex-col p-0 overflow-hidden" aria-label={t('terms_title')}>
        <a href={PAGES.terms} rel="external" className="flex items-center justify-between px-4 min-h-14 no-underline border-b border-line border-solid">
          {t('terms_title')}
        </a>
        <a href={PAGES.privacy} rel="external" className="flex items-center justify-between px-4 min-h-14 no-underline">
          {t('privacy_title')}
        </a>
      </nav>
      {canSignOut() && <LogoutControl />}
    </div>
  );
}
