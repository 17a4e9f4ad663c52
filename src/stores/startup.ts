/**
 * The browser's composition root, run once when the island's module loads: the environment, the session the
 * gateway client uses, and Home's messenger link (loaded when Home is). The island only calls it.
 */
import { setApiSession } from '../api/client.ts';
import { setPlatform } from '../platform/platform.ts';
import { webPlatform } from '../platform/web.ts';
import { authSession } from './auth.ts';

export function startBrowserWallet(): void {
  setPlatform(webPlatform());
  setApiSession(authSession);
  void import('./home.ts').then((home) => home.setMessengerLinker(() => import('./messenger-link.ts').then((link) => link.openBotLink())));
}
