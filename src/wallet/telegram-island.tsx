import { useStore } from '@nanostores/react';
import { useEffect, useState } from 'react';
import { $t } from '../stores/i18n.ts';
import { FullScreenSpinner } from './ui/spinner.tsx';
import { WalletApp } from './app.tsx';
import { errorPagePath, ROUTES } from '../lib/routes.ts';

/**
 * The wallet island as the mini app mounts it (/tg, and any wallet path reloaded inside the messenger): the
 * Telegram platform and its SDK load first (their own chunk, never part of the web's first load), then the app.
 */
export function TelegramWallet() {
  const [state, setState] = useState<'starting' | 'ready'>('starting');
  useEffect(() => {
    void import('./telegram-start.ts')
      .then((module) => module.startTelegram())
      .then(
        (outcome) => (outcome === 'ready' ? setState('ready') : window.location.replace(ROUTES.home)),
        () => window.location.replace(errorPagePath('B2C_USM0027')),
      );
  }, []);
  const t = useStore($t);
  if (state !== 'ready') return <FullScreenSpinner label={t('common_loading')} name={t('app_name')} />;
  return <WalletApp />;
}
