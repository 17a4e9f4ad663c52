import { useEffect, useState } from 'react';
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
  if (state !== 'ready') {
    return (
      <div className="fixed inset-0 flex items-center justify-center" data-testid="app-spinner">
        <span className="block rounded-full border-4 border-line border-t-primary" style={{ width: 64, height: 64, animation: 'spin 0.8s linear infinite' }} />
      </div>
    );
  }
  return <WalletApp />;
}
