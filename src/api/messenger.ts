import { apiCall } from './client.ts';
import type { StoredUser } from './session.ts';

/** The token user authTg and linkTg answer with (oidc-client-ts' User fields; `profile` is the ID token's claims). */
export type TokenUser = StoredUser & { id_token: string; refresh_token: string; token_type: string; scope: string; expires_at: number; profile: StoredUser['profile'] & Record<string, unknown> };

/** POST /user/tg: the link of the messaging account (SPEC §7). */
export type MessengerLinkState = { linked: boolean; telegram: { id: number; username: string | null; firstName: string } | null; botUsername: string; notifications: boolean };

export const getMessengerLink = () => apiCall<MessengerLinkState>('/user/tg', { method: 'POST' });
/** Linking and unlinking need the passcode when it is on (`pincode` header), else a recent sign-in (RECENT_SIGN_IN_REQUIRED). */
export const createMessengerLinkCode = (pincode?: string) => apiCall<{ code: string; url: string; expiresAt: string }>('/user/tg/code', { method: 'POST', pincode });
export const linkMessenger = (tgCode: string, pincode?: string) => apiCall<MessengerLinkState>('/user/tg/link', { method: 'POST', body: { tgCode }, pincode });
export const unlinkMessenger = (pincode?: string) => apiCall<MessengerLinkState>('/user/tg/unlink', { method: 'POST', pincode });
/** Settings' switch of the bot's messages about the user's money. */
export const setMessengerNotifications = (enabled: boolean) => apiCall<MessengerLinkState>('/user/tg/notifications', { method: 'POST', body: { enabled } });
