import type { Page } from '@playwright/test';
import { expect } from './fixtures.ts';
import type { LaunchedServer } from '../support/server.ts';
import { confirmationCode } from './send-helpers.ts';

/** Sign-up and e-mail login for the buy specs: the confirmation link is read from the server's log (no SMTP_URL). */
const PASSWORD = 'correct horse battery';
let counter = 0;
const newEmail = () => `buyer${Date.now()}${counter++}@example.com`;

export async function signUpAndLogIn(page: Page, app: LaunchedServer): Promise<void> {
  const email = newEmail();
  expect((await page.request.post('/api/user', { data: { email, password: PASSWORD, accountName: 'Account' } })).ok()).toBe(true);
  const confirmed = await page.request.post('/api/confirmation/confirm', { data: { confirmationCode: await confirmationCode(app, email) } });
  expect(confirmed.ok()).toBe(true);
  await page.goto('/auth/login');
  await page.getByTestId('login-email').click();
  await page.waitForURL('**/auth/login/email?uid=*');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL('**/home');
}

