import { setApiSession } from '../api/client.ts';
import { setPlatform } from '../platform/platform.ts';
import { webPlatform } from '../platform/web.ts';
import { authSession } from '../stores/auth.ts';
import { WalletApp } from './app.tsx';

// The browser's composition root: the environment and the session the gateway client uses.
setPlatform(webPlatform());
setApiSession(authSession);

/** The wallet island as the browser page mounts it. */
export function WebWallet() {
  return <WalletApp />;
}
