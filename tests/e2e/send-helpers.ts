import type { Page } from '@playwright/test';
import { expect } from './fixtures.ts';
import { signIn } from '../support/auth.ts';
import type { LaunchedServer } from '../support/server.ts';

/** What the send tests prepare through the gateway: confirmed users signed in over HTTP, assets and balances. */
export const PASSWORD = 'correct horse battery';
let counter = 0;
export const newEmail = () => `send${Date.now()}${counter++}@example.com`;

export type ApiUser = { token: string; accountId: string };

/** The sign-up confirmation code, read from the mail the server logged (no SMTP_URL). */
export async function confirmationCode(app: LaunchedServer, email: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    for (const line of app.output().split('\n').reverse()) {
      if (!line.includes('"confirm_email"') || !line.includes(email)) continue;
      const { link } = JSON.parse(line) as { link?: string };
      const code = link ? new URL(link).pathname.split('/').pop() : undefined;
      if (code) return code;
    }
    if (Date.now() > deadline) throw new Error(`no confirmation mail to ${email} in the server log`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

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
export async function apiUser(page: Page, app: LaunchedServer, email = newEmail()): Promise<ApiUser & { email: string }> {
  expect((await page.request.post('/api/user', { data: { email, password: PASSWORD, accountName: 'Account' } })).ok()).toBe(true);
  expect((await page.request.post('/api/confirmation/confirm', { data: { confirmationCode: await confirmationCode(app, email) } })).ok()).toBe(true);
  const tokens = await signIn(app.url, { email, password: PASSWORD });
  const profile = (await (await page.request.get('/api/user', { headers: { authorization: `Bearer ${tokens.accessToken}` } })).json()) as { accounts: { id: string }[] };
  return { email, token: tokens.accessToken, accountId: profile.accounts[0]?.id ?? '' };
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

export async function logIn(page: Page, email: string): Promise<void> {
  await page.goto('/auth/login');
  await page.getByTestId('login-email').click();
  await page.waitForURL('**/auth/login/email?uid=*');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL('**/home');
}
