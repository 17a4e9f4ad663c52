import { startBrowserWallet } from '../stores/startup.ts';
import { WalletApp } from './app.tsx';
import { TelegramWallet } from './telegram-island.tsx';

startBrowserWallet();

/** Set by the mini app for its tab (telegram-start.ts), so a wallet path reloaded inside the messenger stays in it. */
const MINI_APP_FLAG = 'wallet:miniApp';

/** The wallet island as the browser page mounts it. */
export function WebWallet() {
  if (window.sessionStorage.getItem(MINI_APP_FLAG) === '1') return <TelegramWallet />;
  return <WalletApp />;
}

/** The wallet island as the mini app's entry (/tg) mounts it. */
export function MiniAppWallet() {
  return <TelegramWallet />;
}
