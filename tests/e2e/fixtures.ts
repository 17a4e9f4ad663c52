import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test as base, expect, type Page } from '@playwright/test';
import { codeFromLink, readMailLink } from '../support/auth.ts';
import { createTestDatabase } from '../support/database.ts';
import { launchServer, type LaunchedServer } from '../support/server.ts';

export { expect } from '@playwright/test';

/** The server, and the environment it runs with: the command-line tools need the same one to work beside it. */
export type TestApp = LaunchedServer & { env: Record<string, string> };
type WorkerFixtures = { app: TestApp; appEnv: Record<string, string> };
type TestFixtures = { cspViolations: string[] };

/** The real server, started per worker on a fresh database; tests reach it through `baseURL`. */
export const test = base.extend<TestFixtures, WorkerFixtures>({
  // Every test fails on a Content-Security-Policy violation: a blocked inline script breaks a page silently.
  cspViolations: [
    async ({ context }, use) => {
      const violations: string[] = [];
      context.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(`${message.location().url}: ${message.text()}`);
      });
      await context.addInitScript(() =>
        document.addEventListener('securitypolicyviolation', (event) =>
          console.error(`Content Security Policy violation: ${event.effectiveDirective} blocked ${event.blockedURI || 'inline'} at ${event.sourceFile}:${event.lineNumber}`),
        ),
      );
      await use(violations);
      expect(violations, 'no Content Security Policy violation').toEqual([]);
    },
    { auto: true },
  ],
  appEnv: [{}, { scope: 'worker', option: true }],
  app: [
    async ({ appEnv }, use) => {
      const admin = process.env.E2E_ADMIN_DATABASE_URL;
      if (!admin) throw new Error('E2E_ADMIN_DATABASE_URL is not set: run through the Playwright config');
      const database = await createTestDatabase(admin, 'wallet_e2e');
      const port = await import('../support/server.ts').then((m) => m.freePort());
      // A DATA_DIR per worker: its embedded signer (DATA_DIR/signer.sock) signs for this worker's database alone.
      const dataDir = await mkdtemp(join(tmpdir(), 'wallet-e2e-data-'));
      // Every browser of every spec comes from 127.0.0.1: the per-client limits on sign-up and reset would count them as one.
      const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, PUBLIC_URL: `http://127.0.0.1:${port}`, PORT: String(port), AUTH_RATE_LIMIT: '10000', ...appEnv };
      const server = await launchServer(env);
      await use(Object.assign(server, { env }));
      await server.stop();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
    { scope: 'worker', timeout: 120_000 },
  ],
  baseURL: async ({ app }, use) => use(app.url),
});

export const PASSWORD = 'correct horse battery';
let counter = 0;
export const newEmail = (prefix = 'user') => `${prefix}${Date.now()}${counter++}@example.com`;

/** Where a sign-up's confirmation code comes from: the server's outbox, or a test's own mailbox when SMTP_URL is set. */
export type ConfirmationCode = (email: string) => Promise<string>;

/** Without SMTP_URL the outbox keeps each mail's link (support/auth.ts reads it). */
export const outboxCode =
  (app: TestApp): ConfirmationCode =>
  async (email) =>
    codeFromLink(await readMailLink(app.env.DATABASE_URL ?? '', email, 'confirm_email', 15_000));

/** Signs a new user up and confirms the e-mail through the gateway, as the sign-up pages do. */
export async function signUpConfirmed(page: Page, user: { email: string; password: string }, confirmationCode: ConfirmationCode): Promise<void> {
  expect((await page.request.post('/api/user', { data: { email: user.email, password: user.password, accountName: 'Account' } })).ok()).toBe(true);
  expect((await page.request.post('/api/confirmation/confirm', { data: { confirmationCode: await confirmationCode(user.email) } })).ok()).toBe(true);
}

/** Logs in through the e-mail login page and lands on /home (`{ land: false }`: submits and leaves the outcome to the test). */
export async function logIn(page: Page, email: string, password = PASSWORD, options: { land?: boolean } = {}): Promise<void> {
  await page.goto('/auth/login');
  await page.getByTestId('login-email').click();
  await page.waitForURL('**/auth/login/email?uid=*');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  if (options.land !== false) await page.waitForURL('**/home');
}

/** The e2e sign-up: a new confirmed user, logged in through the login page. `mail` is the app (outbox) or a test's mailbox reader. */
export async function signUpAndLogIn(page: Page, mail: TestApp | ConfirmationCode, user: { email?: string; password?: string } = {}): Promise<string> {
  const email = user.email ?? newEmail();
  const password = user.password ?? PASSWORD;
  await signUpConfirmed(page, { email, password }, typeof mail === 'function' ? mail : outboxCode(mail));
  await logIn(page, email, password);
  return email;
}
