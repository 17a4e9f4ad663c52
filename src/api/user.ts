import type { Language } from '../lib/preferences.ts';
import { apiCall } from './client.ts';
import type { ClientConfig } from './session.ts';

/** SPEC §3: a wallet account; e-mails in the messenger's own domain count as no real e-mail. */
export type Account = { id: string; language: Language; defaultFiatCurrency: string; email: string | null };
/** SPEC §3: the user's profile as GET /user answers it. */
export type Profile = { email: string | null; accounts: Account[]; pinCodeActive: boolean; tgAuth: boolean };

/** SPEC §9: the fiat currencies an account can value its balance in. */
export const FIAT_CURRENCIES = ['USD', 'EUR', 'KZT', 'UAH', 'AZN', 'CAD'] as const;
export type FiatCurrency = (typeof FIAT_CURRENCIES)[number];

export const getClientConfig = () => apiCall<ClientConfig>('/client-config', { public: true });

export const createUser = (email: string, password: string) =>
  apiCall<void>('/user', { method: 'POST', body: { email, password, accountName: 'Account' }, public: true });
export const getProfile = () => apiCall<Profile>('/user');
export const getUserAuth = () => apiCall<{ tgAuth: boolean }>('/user/auth');
export const confirmEmail = (confirmationCode: string) =>
  apiCall<void>('/confirmation/confirm', { method: 'POST', body: { confirmationCode }, public: true });
export const requestPasswordReset = (email: string) => apiCall<void>('/password-reset', { method: 'POST', body: { email }, public: true });
export const confirmPasswordReset = (password: string, confirmationCode: string) =>
  apiCall<void>('/password-reset/confirm', { method: 'POST', body: { password, confirmationCode }, public: true });
export const setAccountCurrency = (currency: FiatCurrency) =>
  apiCall<void>(`/user/default-fiat-currency/update/${encodeURIComponent(currency)}`, { method: 'POST' });
export const setAccountLanguage = (language: Language) => apiCall<void>(`/user/language/${encodeURIComponent(language)}`, { method: 'POST' });

/** 'Leave feedback' (SPEC §2 Settings): kept by the gateway and mailed to support; `email` is where support answers. */
export const leaveFeedback = (text: string, email: string | null) => apiCall<{ id: string }>('/user/feedback', { method: 'POST', body: { text, email } });
