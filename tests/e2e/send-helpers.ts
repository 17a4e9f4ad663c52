import type { Page } from '@playwright/test';
import { expect, newEmail, PASSWORD, type TestApp } from './fixtures.ts';
import { signUpAndSignIn } from '../support/auth.ts';

/** What the send tests prepare through the gateway: confirmed users signed in over HTTP, assets and balances. */
export type ApiUser = { token: string; accountId: string };

/** The signed-in page's own access token, as oidc-client-ts keeps it in localStorage. */
export function pageAccessToken(page: Page): Promise<string> {
  return page.evaluate(() => {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i) ?? '';
      if (key.startsWith('wallet.oidc.user:')) return (JSON.parse(localStorage.getItem(key) ?? '{}') as { access_token: string }).access_token;
    }
    return '';
  });
}

/** The signed-in page's access token and account, for what a test does through the API. */
export async function pageApiUser(page: Page): Promise<ApiUser> {
  const token = await pageAccessToken(page);
  const profile = (await (await page.request.get('/api/user', { headers: { authorization: `Bearer ${token}` } })).json()) as { accounts: { id: string }[] };
  return { token, accountId: profile.accounts[0]?.id ?? '' };
}

/** A confirmed user signed in over HTTP (PKCE against /oidc), for what the test prepares through the API. */
export async function apiUser(app: TestApp, email = newEmail('send')): Promise<ApiUser & { email: string }> {
  const user = await signUpAndSignIn(app.url, { email, password: PASSWORD, databaseUrl: app.env.DATABASE_URL ?? '' });
  return { email, token: user.accessToken, accountId: user.accountId };
}

export async function addressOf(page: Page, user: ApiUser, currency: string): Promise<string> {
  const headers = { authorization: `Bearer ${user.token}` };
  expect((await page.request.post(`/api/${user.accountId}/account/currency`, { headers, data: { currency } })).ok()).toBe(true);
  const items = (await (await page.request.get(`/api/${user.accountId}/asset`, { headers })).json()) as { currency: string; depositAddress: string; totalAvailable: string }[];
  return items.find((i) => i.currency === currency)?.depositAddress ?? '';
}

export async function available(page: Page, user: ApiUser, currency: string): Promise<string> {
  const items = (await (await page.request.get(`/api/${user.accountId}/asset`, { headers: { authorization: `Bearer ${user.token}` } })).json()) as { currency: string; totalAvailable: string }[];
  return items.find((i) => i.currency === currency)?.totalAvailable ?? '0';
}
