import { setPlatform } from '../platform/platform.ts';
import { webPlatform } from '../platform/web.ts';
import { completeSignIn, completeSilentSignIn, signIn } from '../stores/auth.ts';

/**
 * The three pages that only hand over to the identity provider or back: /auth/login/start, /auth/callback,
 * /auth/silent. The provider's client (oidc-client-ts) loads lazily from here, so this script stays small.
 */
setPlatform(webPlatform());
const step = document.querySelector<HTMLElement>('[data-auth-step]')?.dataset.authStep;
if (step === 'start') void signIn();
else if (step === 'callback') {
  // Signed in: the e-mail the login page kept for a retry is not needed any more (auth-form.ts).
  sessionStorage.removeItem('wallet.login.email');
  void completeSignIn();
}
else if (step === 'silent') void completeSilentSignIn();
