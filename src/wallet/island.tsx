import { setApiSession } from '../api/client.ts';
import { setPlatform } from '../platform/platform.ts';
import { webPlatform } from '../platform/web.ts';
import { authSession } from '../stores/auth.ts';
import { WalletApp } from './app.tsx';
import { TelegramWallet } from './telegram-island.tsx';

// The browser's composition root: the environment and the session the gateway client uses.
setPlatform(webPlatform());
setApiSession(authSession);
// The Home banner's 'link': a code from the gateway, then the bot's deep link (loaded when Home is).
void import('../stores/home.ts').then((home) => home.setMessengerLinker(() => import('../stores/messenger-link.ts').then((link) => link.openBotLink())));

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
