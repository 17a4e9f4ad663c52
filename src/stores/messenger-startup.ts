import type { IdentityClient, StoredUser } from '../api/session.ts';
import type { TokenUser } from '../api/messenger.ts';
import { authTg, linkTg } from '../api/public.ts';
import { WalletError } from '../api/errors.ts';
import type { MessengerLaunch } from '../platform/platform.ts';
import { accessExpired, refreshUsable } from './token-expiry.ts';

/** Which Telegram user the stored user signed in as: another Telegram account on this device gets its own login. */
export const MESSENGER_USER_KEY = 'wallet:tgUser';
/** SPEC §8: codes a messenger login or link may end with; anything else becomes 0022 (refused) or 0027 (our fault). */
const MESSENGER_CODES = ['B2C_USM0022', 'B2C_USM0023', 'B2C_USM0024', 'B2C_USM0025', 'B2C_USM0026', 'B2C_USM0027'];

/** A messenger login or link that failed: a WalletError with the code of SPEC §8 the error page shows. */
function messengerLoginError(code: string, cause?: unknown): WalletError {
  return new WalletError(code, `the messenger login failed: ${code}`, { cause });
}

/** SPEC §8: the error page's code for a failed messenger login. */
export function messengerErrorCode(error: unknown): string {
  if (error instanceof WalletError) {
    if (MESSENGER_CODES.includes(error.code)) return error.code;
    // Refused for a reason of its own (4xx): try again later; transport failures and our faults: contact support.
    return error.status !== undefined && error.status >= 400 && error.status < 500 ? 'B2C_USM0022' : 'B2C_USM0027';
  }
  return 'B2C_USM0027';
}

function storage(): Storage | undefined {
  return typeof localStorage === 'undefined' ? undefined : localStorage;
}

/** What the auth store lends this branch: its identity client and its one-at-a-time renewal. */
export type SessionTools = { identity: () => Promise<IdentityClient>; renewSession: () => Promise<StoredUser | null> };

/** authTg or linkTg, then the tokens are kept by the identity client like any sign-in's. */
async function messengerLogin(launch: MessengerLaunch, withLinkToken: boolean, tools: SessionTools): Promise<StoredUser> {
  if (!launch.initData) throw messengerLoginError('B2C_USM0025');
  const idp = await tools.identity();
  let tokens: TokenUser;
  try {
    tokens = withLinkToken && launch.linkToken ? await linkTg<TokenUser>(launch.linkToken, launch.initData) : await authTg<TokenUser>(launch.initData);
  } catch (error) {
    const code = messengerErrorCode(error);
    // SPEC §4: 0022 on messenger login also clears the stored user.
    if (code === 'B2C_USM0022') await idp.removeUser().catch(() => undefined);
    throw messengerLoginError(code, error);
  }
  if (!idp.storeUser) throw messengerLoginError('B2C_USM0027');
  const stored = await idp.storeUser(tokens);
  storage()?.setItem(MESSENGER_USER_KEY, String(launch.userId ?? ''));
  return stored;
}

/**
 * SPEC §4, the messenger branch. With a stored user (of this Telegram account): a valid access token is ready;
 * an expired one with a usable refresh token renews silently and, if that fails, logs in afresh; both expired log
 * in afresh. Without one: a link_token is exchanged as a one-time code, otherwise the init data logs in.
 * Throws a WalletError with the messenger code; the caller shows /error/{code}.
 */
export async function resolveMessengerUser(launch: MessengerLaunch, tools: SessionTools): Promise<StoredUser> {
  const idp = await tools.identity();
  const stored = await idp.getUser().catch(() => null);
  const sameTelegram = stored !== null && storage()?.getItem(MESSENGER_USER_KEY) === String(launch.userId ?? '');
  if (stored && sameTelegram) {
    if (!accessExpired(stored)) return stored;
    if (refreshUsable(stored)) {
      const renewed = await tools.renewSession().catch(() => null);
      if (renewed) return renewed;
    }
    return messengerLogin(launch, false, tools);
  }
  return messengerLogin(launch, true, tools);
}
