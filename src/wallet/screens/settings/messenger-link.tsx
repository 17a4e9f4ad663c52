import { Switch } from '../../ui/switch.tsx';
import { useStore } from '@nanostores/react';
import { useEffect } from 'react';
import { $t } from '../../../stores/i18n.ts';
import {
  $messengerLink,
  cancelMessengerPasscode,
  canLinkMessenger,
  confirmMessengerPasscode,
  loadMessengerLink,
  openBotLink,
  switchMessengerNotifications,
  unlinkMessengerAccount,
} from '../../../stores/messenger-link.ts';
import { $profile } from '../../../stores/user.ts';
import { PasscodePrompt } from '../../ui/passcode-prompt.tsx';

/** Settings 'connect messaging account' (SPEC §2): a toggle outside the messenger; inside it there is none. */
export function MessengerLinkRow() {
  const t = useStore($t);
  const link = useStore($messengerLink);
  const profile = useStore($profile);
  const allowed = canLinkMessenger();
  useEffect(() => {
    if (allowed) void loadMessengerLink();
  }, [allowed]);
  if (!allowed) return null;
  const linked = link.state?.linked ?? profile.data?.tgAuth ?? false;
  const name = link.state?.telegram?.username ? `@${link.state.telegram.username}` : link.state?.telegram?.firstName;
  // Linking or unlinking with the passcode on: it is asked for over the settings, as the send review asks for it.
  if (link.asking) {
    return (
      <div className="fixed inset-0 z-40 bg-bg overflow-y-auto" data-testid="messenger-passcode">
        <div className="screen" style={{ maxWidth: 540, margin: '0 auto' }}>
          <button type="button" className="btn-ghost self-start" onClick={cancelMessengerPasscode} disabled={link.busy}>
            {t('common_back')}
          </button>
          <PasscodePrompt title={t(link.asking === 'link' ? 'messenger_link_passcode_title' : 'messenger_unlink_passcode_title')} onComplete={confirmMessengerPasscode} />
        </div>
      </div>
    );
  }
  return (
    <label className="card flex items-center justify-between gap-3 cursor-pointer" data-testid="settings-messenger">
      <span className="flex flex-col min-w-0">
        <span>{t('settings_connect_messenger')}</span>
        {linked && name && <span className="text-sm text-muted truncate">{t('settings_messenger_linked_as', { name })}</span>}
      </span>
      <Switch checked={linked} disabled={link.busy} onChange={(on) => void (on ? openBotLink() : unlinkMessengerAccount())} testId="messenger-link-toggle" />
    </label>
  );
}

/** Settings' switch of the bot's messages about the user's money: shown while Telegram is linked, here or inside it. */
export function MessengerNotificationsRow() {
  const t = useStore($t);
  const link = useStore($messengerLink);
  const loaded = link.state !== undefined;
  useEffect(() => {
    if (!loaded) void loadMessengerLink();
  }, [loaded]);
  if (!link.state?.linked) return null;
  return (
    <label className="card flex items-center justify-between gap-3 cursor-pointer" data-testid="settings-notifications">
      <span className="flex flex-col min-w-0">
        <span>{t('settings_notifications')}</span>
        <span className="text-sm text-muted">{t('settings_notifications_hint')}</span>
      </span>
      <Switch checked={link.state.notifications} disabled={link.busy} onChange={(on) => void switchMessengerNotifications(on)} testId="notifications-toggle" />
    </label>
  );
}
