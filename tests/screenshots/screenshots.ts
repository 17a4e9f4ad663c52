/**
 * `npm run screenshots [-- <folder>]` (after `npm run build`): every screen of the wallet island and every page shell
 * at 390×844, in English and Russian, light and dark, plus English light at 1280×800 and the operator console at
 * 1280×800 in both languages and themes, into `<folder>/<variant>/`
 * (default `screenshots/`, git-ignored) for anyone to review the look. The server runs on a fresh database
 * (TEST_DATABASE_URL, else an embedded PostgreSQL); one user per language is seeded with the common assets, devnet
 * BTC, and a send. Exits 1 when a screen could not be reached.
 */
import { chromium, type Browser, type BrowserContext } from '@playwright/test';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { CHROMIUM_ARGS } from '../e2e/playwright.config.ts';
import { signIn, signUpAndSignIn } from '../support/auth.ts';
import { TEST_MNEMONIC, waitFor } from '../support/custody.ts';
import { createTestDatabase, startTestPostgres } from '../support/database.ts';
import { freePort, launchServer } from '../support/server.ts';
import pg from 'pg';
import { mnemonicToSeedSync } from '@scure/bip39';
import { deriveAddress } from '../../src/server/domain/addresses.ts';
import { COMMAND_LINE } from '../../src/server/domain/operator/actor.ts';
import { proposeAdjustment } from '../../src/server/domain/operator/adjustments.ts';
import { freezeAccount } from '../../src/server/domain/operator/freeze.ts';
import { grantRole, operatorByEmail } from '../../src/server/domain/operator/roles.ts';

const OUT = resolve(process.argv[2] ?? 'screenshots');
const PASSWORD = 'screenshots password that is long enough';
const LANGUAGES = ['ENG', 'RUS'] as const;
type Variant = { name: string; language: (typeof LANGUAGES)[number]; dark: boolean; width: number; height: number };
const VARIANTS: Variant[] = [
  ...LANGUAGES.flatMap((language) => [false, true].map((dark) => ({ name: `${language.toLowerCase()}-${dark ? 'dark' : 'light'}`, language, dark, width: 390, height: 844 }))),
  { name: 'eng-light-desktop', language: 'ENG', dark: false, width: 1280, height: 800 },
];

/** The wallet's screens, signed in (SPEC §6 routes; src/lib/routes.ts). */
const SCREENS: Record<string, string> = {
  home: '/home',
  asset: '/home/asset/BTC',
  receive: '/home/asset/BTC/receive',
  send: '/home/asset/BTC/send',
  'buy-sell': '/home/buy-sell',
  'select-asset-receive': '/select-asset/receive',
  'select-asset-send': '/select-asset/send',
  'manage-assets': '/manage-assets',
  'buy-get': '/buy/get',
  'sell-get': '/sell/get',
  swap: '/swap',
  settings: '/settings',
  'select-currency': '/settings/select-currency',
  'select-language': '/settings/select-language',
  feedback: '/settings/feedback',
  'wallet-protection': '/settings/wallet-protection',
  passcode: '/settings/passcode',
  'passcode-change': '/settings/passcode/change',
  'address-book': '/settings/address-book',
  'address-book-create': '/settings/address-book/create',
  exchange: '/exchange',
  notifications: '/notifications',
};
/** The page shells, signed out. */
const SHELLS: Record<string, string> = {
  'auth-login': '/auth/login',
  'auth-signup': '/auth/signup',
  'auth-forgot': '/auth/forgot',
  terms: '/terms',
  privacy: '/privacy',
  'error-404': '/error/404',
};

const postgres = await startTestPostgres();
const database = await createTestDatabase(postgres.adminUrl, 'wallet_screenshots');
const port = await freePort();
const server = await launchServer({
  DATABASE_URL: database.url,
  PORT: String(port),
  PUBLIC_URL: `http://127.0.0.1:${port}`,
  WALLET_SEED: TEST_MNEMONIC,
  DEVNET_BLOCK_MS: '200',
  CONFIRMATIONS: 'BITCOIN:1',
  RATES_WALK_MS: '0',
  AUTH_RATE_LIMIT: '10000',
  // A deposit below it is shown failed, saying why (issue 33): each user gets one.
  MIN_DEPOSIT: 'BTC:0.001',
  // The operator console's review queue gets a withdrawal to show (sent after the wallet's screens).
  WITHDRAWAL_REVIEW_ABOVE_USD: '100',
});
let browser: Browser | undefined;
const unreachable: string[] = [];
try {
  const emails: Record<string, string> = {};
  const userIds: Record<string, string> = {};
  /** Per language, the details of the deposit below the minimum. */
  const belowMinimum: Record<string, string> = {};
  for (const language of LANGUAGES) {
    const email = `screens-${language.toLowerCase()}-${Date.now()}@example.com`;
    emails[language] = email;
    const user = await signUpAndSignIn(server.url, { email, password: PASSWORD, databaseUrl: database.url });
    userIds[language] = user.userId;
    const api = (path: string, body?: unknown) =>
      fetch(`${server.url}/api${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    // The account's language is what the app shows once signed in.
    await api(`/user/language/${language}`, {});
    await api(`/${user.accountId}/account/currency/list`, { currencies: ['BTC', 'ETH', 'USDT_TRX', 'TON'] });
    const assets = (await (await api(`/${user.accountId}/asset`)).json()) as Array<{ currency: string; depositAddress: string }>;
    const address = assets.find((a) => a.currency === 'BTC')?.depositAddress ?? '';
    await fetch(`${server.url}/sandbox/devnet/deposit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ currency: 'BTC', address, amount: '0.05' }) });
    await waitFor('the BTC deposit to be credited', async () => {
      const list = (await (await api(`/${user.accountId}/asset`)).json()) as Array<{ currency: string; totalAvailable: string }>;
      return list.some((a) => a.currency === 'BTC' && a.totalAvailable !== '0');
    }, 30_000);
    await fetch(`${server.url}/sandbox/devnet/deposit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ currency: 'BTC', address, amount: '0.0005' }) });
    await waitFor('the deposit below the minimum to be recorded', async () => {
      const history = (await (await api(`/${user.accountId}/asset/transactions`, { currency: 'BTC', sort: 'DESC', properties: ['createdDate'], pageSize: 100, pageNumber: 1 })).json()) as {
        result: Array<{ id: string; state: string }>;
      };
      const failed = history.result.find((item) => item.state === 'FAILED');
      if (failed) belowMinimum[language] = `/home/asset/BTC/transaction/${failed.id}/DEPOSIT`;
      return failed !== undefined;
    }, 30_000);
  }

  browser = await chromium.launch({ executablePath: process.env.CHROME_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const shoot = async (context: BrowserContext, folder: string, screens: Record<string, string>) => {
    const page = await context.newPage();
    for (const [name, path] of Object.entries(screens)) {
      try {
        await page.goto(path, { waitUntil: 'networkidle' });
        // A full load shows the branded spinner until the island has started (and its data has come).
        await page.locator('[data-testid="app-spinner"]').first().waitFor({ state: 'detached', timeout: 20_000 });
        await page.waitForLoadState('networkidle');
        await page.waitForTimeout(300);
        await page.screenshot({ path: join(folder, `${name}.png`), fullPage: false });
      } catch (error) {
        unreachable.push(`${folder}/${name} (${path}): ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      }
    }
    await page.close();
  };
  for (const variant of VARIANTS) {
    const folder = join(OUT, variant.name);
    await mkdir(folder, { recursive: true });
    const options = { baseURL: server.url, viewport: { width: variant.width, height: variant.height }, colorScheme: variant.dark ? ('dark' as const) : ('light' as const) };
    // The stored theme choice and the language cookie, as the settings screen would leave them.
    const prepare = async (context: BrowserContext) => {
      await context.addInitScript((dark) => localStorage.setItem('wallet:darkTheme', JSON.stringify(dark)), variant.dark);
      await context.addCookies([{ name: 'lang', value: variant.language, url: server.url }]);
    };
    const signedOut = await browser.newContext(options);
    await prepare(signedOut);
    await shoot(signedOut, folder, SHELLS);
    await signedOut.close();

    const context = await browser.newContext(options);
    await prepare(context);
    const page = await context.newPage();
    await page.goto('/auth/login');
    await page.getByTestId('login-email').click();
    await page.waitForURL('**/auth/login/email?uid=*');
    await page.locator('input[type=email]').fill(emails[variant.language] ?? '');
    await page.locator('input[type=password]').fill(PASSWORD);
    await page.locator('form button[type=submit]').click();
    await page.waitForURL('**/home', { timeout: 30_000 });
    await page.close();
    await shoot(context, folder, { ...SCREENS, 'deposit-below-minimum': belowMinimum[variant.language] ?? '/home' });
    await context.close();
    console.log(`${variant.name}: ${Object.keys(SHELLS).length + Object.keys(SCREENS).length} screens`);
  }

  // The operator console at desktop width, both languages and themes: the English user is its admin, the Russian
  // one a finance operator whose proposal and freeze give the pages something to show, and the English user's
  // withdrawal over the review threshold the review queue.
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  try {
    await grantRole(pool, COMMAND_LINE, { email: emails.ENG ?? '', role: 'admin' });
    await grantRole(pool, COMMAND_LINE, { email: emails.RUS ?? '', role: 'finance' });
    const finance = await operatorByEmail(pool, emails.RUS ?? '');
    const account = (await pool.query<{ id: string }>('SELECT id FROM wallet_accounts WHERE user_id = $1', [userIds.ENG])).rows[0]?.id ?? '';
    // $650 at the reference price, over the review threshold: it waits in the review queue. Signed in again: the
    // first session's token may have lapsed while the wallet's screens were taken.
    const { accessToken } = await signIn(server.url, { email: emails.ENG ?? '', password: PASSWORD });
    const outside = await deriveAddress(mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above'), 'BITCOIN', 0, 'mainnet');
    const held = await fetch(`${server.url}/api/${account}/withdrawal`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ currency: 'BTC', amount: '0.01', depositAddress: outside, idempotencyKey: `screenshots-review-${Date.now()}` }),
    });
    if (!held.ok) unreachable.push(`the withdrawal for the review queue: ${held.status} ${await held.text()}`);
    await proposeAdjustment(pool, finance, { accountId: account, kind: 'CREDIT', currency: 'BTC', amount: '0.01', reason: 'lost deposit, checked on chain' });
    await freezeAccount(pool, finance, { accountId: account, reason: 'card fraud report' });
  } finally {
    await pool.end();
  }
  const OPERATOR: Record<string, string> = {
    'operator-search': '/operator',
    'operator-user': `/operator/users/${userIds.ENG}`,
    'operator-reviews': '/operator/reviews',
    'operator-adjustments': '/operator/adjustments',
    'operator-mail': '/operator/mail',
    'operator-stuck': '/operator/stuck',
    'operator-audit': '/operator/audit',
    'operator-roles': '/operator/roles',
  };
  for (const language of LANGUAGES) {
    for (const dark of [false, true]) {
      const folder = join(OUT, `operator-${language.toLowerCase()}-${dark ? 'dark' : 'light'}`);
      await mkdir(folder, { recursive: true });
      const context = await browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 800 }, colorScheme: dark ? 'dark' : 'light' });
      await context.addCookies([{ name: 'lang', value: language, url: server.url }, { name: 'theme', value: dark ? 'dark' : 'light', url: server.url }]);
      const page = await context.newPage();
      await page.goto('/operator');
      await page.getByTestId('sign-in').click();
      await page.waitForURL('**/auth/login/email?uid=*');
      await page.locator('input[type=email]').fill(emails.ENG ?? '');
      await page.locator('input[type=password]').fill(PASSWORD);
      await page.locator('form button[type=submit]').click();
      await page.waitForURL((url) => url.pathname === '/operator', { timeout: 30_000 });
      for (const [name, path] of Object.entries(OPERATOR)) {
        try {
          // Within the island (its session lives in the tab): the address changes without a reload.
          await page.evaluate((to) => {
            window.history.pushState(null, '', to);
            window.dispatchEvent(new PopStateEvent('popstate'));
          }, path);
          await page.getByTestId('operator-who').waitFor();
          await page.waitForLoadState('networkidle');
          await page.waitForTimeout(300);
          await page.screenshot({ path: join(folder, `${name}.png`), fullPage: false });
        } catch (error) {
          unreachable.push(`${folder}/${name} (${path}): ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
        }
      }
      await context.close();
      console.log(`operator ${language.toLowerCase()} ${dark ? 'dark' : 'light'}: ${Object.keys(OPERATOR).length} pages`);
    }
  }
} finally {
  await browser?.close();
  await server.stop();
  await database.drop();
  await postgres.stop();
}
if (unreachable.length > 0) {
  console.error(`screens not reached:\n${unreachable.join('\n')}`);
  process.exit(1);
}
console.log(`screenshots in ${OUT}`);
