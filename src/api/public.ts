import { apiCall } from './client.ts';

/**
 * The calls SPEC §6 lists as public: no bearer token, and a 401 is an answer, not a reason to renew.
 * Their payloads belong to the issues that build those flows; paths follow SPEC §7 where it names them.
 */
export const getFiatCurrencies = <T>() => apiCall<T>('/fiat/metadata', { public: true });
export const getAvailability = <T>(depositAddress: string) => apiCall<T>('/b2c/fiat/availability', { query: { depositAddress }, public: true });
export const getFiatRate = <T>(body: Record<string, unknown>) => apiCall<T>('/fiat/rate/invert', { method: 'POST', body, public: true });
export const order = <T>(body: Record<string, unknown>) => apiCall<T>('/b2c/order', { method: 'POST', body, public: true });
export const getGeo = <T>(account: string) => apiCall<T>('/fiatDeposit/geo', { query: { account }, public: true });
export const getMethods = <T>(account: string, body: Record<string, unknown>) =>
  apiCall<T>('/fiatDeposit/methods', { method: 'POST', query: { account }, body, public: true });
export const getRates = <T>(body: Record<string, unknown>) => apiCall<T>('/rate', { method: 'POST', body, public: true });
/** SPEC §7 names no path for the messenger logins; these are ours (listed in the README's API section). */
export const authTg = <T>(initData: string) => apiCall<T>('/auth/tg', { method: 'POST', body: { initData }, public: true });
export const linkTg = <T>(oneTimeCode: string, tgCode: string) => apiCall<T>('/auth/tg/link', { method: 'POST', body: { oneTimeCode, tgCode }, public: true });
