import type { Page } from '@playwright/test';
import { expect } from './fixtures.ts';
import type { LaunchedServer } from '../support/server.ts';

/** Sign-up and e-mail login for the buy specs: the confirmation link is read from the server's log (no SMTP_URL). */
const PASSWORD = 'correct horse battery';
let counter = 0;
const newEmail = () => `buyer${Date.now()}${counter++}@example.com`;

async function confirmationCode(app: LaunchedServer, email: string): Promise<string> {
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

