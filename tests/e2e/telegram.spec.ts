import type { Page } from '@playwright/test';
import { mnemonicToSeedSync } from '@scure/bip39';
import { test, expect, signUpAndLogIn } from './fixtures.ts';
import { botMessagesTo, forgedInitData, initDataFor, newTelegramUser, postUpdate, startUpdate, telegramEnv } from '../support/telegram.ts';
import { deriveAddress } from '../../src/server/domain/addresses.ts';
import { pageAccessToken } from './send-helpers.ts';
import type { TelegramUser } from '../../src/server/domain/telegram-init-data.ts';

/**
 * Issue 8 in Chromium: the mini app with the Telegram environment mocked the way the SDK meets it in a mobile
 * client: launch parameters in the URL hash, `window.TelegramWebviewProxy.postEvent` for the app's calls (recorded
 * here) and `message` events for the messenger's answers and button presses. The server trusts the tests' own bot
 * token and Ed25519 key; the bot's replies go to the server's Bot API stand-in.
 */
test.use({ appEnv: { LOG_LEVEL: 'info', DEVNET_BLOCK_MS: '200', CONFIRMATIONS: 'BITCOIN:1', RATES_WALK_MS: '0', WORKER_POLL_MS: '250', SUPPORT_TELEGRAM: '@wallet_support', ...telegramEnv() } });

type Posted = [string, Record<string, unknown> | undefined];

/** A messenger stand-in in the page: records every event the app posts, and answers the SDK's requests. */
async function mockMessenger(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __tgEvents: Array<[string, unknown]>; TelegramWebviewProxy: unknown; __tgEmit: (type: string, data?: unknown) => void };
    w.__tgEvents = [];
    w.__tgEmit = (eventType, eventData) =>
      window.dispatchEvent(new MessageEvent('message', { data: JSON.stringify({ eventType, eventData }), source: window.parent }));
    const insets = { top: 0, bottom: 0, left: 0, right: 0 };
    const answers: Record<string, [string, unknown]> = {
      web_app_request_viewport: ['viewport_changed', { height: 844, width: 390, is_expanded: true, is_state_stable: true }],
      web_app_request_safe_area: ['safe_area_changed', insets],
      web_app_request_content_safe_area: ['content_safe_area_changed', insets],
      web_app_request_theme: ['theme_changed', { theme_params: { bg_color: '#17212b', text_color: '#f5f5f5', button_color: '#5288c1', button_text_color: '#ffffff' } }],
      web_app_biometry_get_info: ['biometry_info_received', { available: true, access_requested: false, access_granted: false, device_id: 'e2e', token_saved: false, type: 'finger' }],
    };
    w.TelegramWebviewProxy = {
      postEvent(type: string, data: string) {
        w.__tgEvents.push([type, data ? JSON.parse(data) : undefined]);
        const answer = answers[type];
        if (answer) setTimeout(() => w.__tgEmit(answer[0], answer[1]), 0);
      },
    };
  });
}

/** The mini app's URL as Telegram opens it: launch parameters in the hash. */
function miniAppUrl(initData: string, query = ''): string {
  const theme = JSON.stringify({ bg_color: '#17212b', text_color: '#f5f5f5', button_color: '#5288c1', button_text_color: '#ffffff', secondary_bg_color: '#232e3c' });
  const hash = new URLSearchParams({ tgWebAppData: initData, tgWebAppVersion: '8.0', tgWebAppPlatform: 'ios', tgWebAppThemeParams: theme });
  return `/tg${query}#${hash.toString()}`;
}

const events = (page: Page) => page.evaluate(() => (window as unknown as { __tgEvents: Posted[] }).__tgEvents);
const emit = (page: Page, type: string, data?: unknown) => page.evaluate(([t, d]) => (window as unknown as { __tgEmit: (t: string, d?: unknown) => void }).__tgEmit(t as string, d), [type, data] as const);

/** The last state the app gave a native button. */
async function lastSetup(page: Page, type: 'web_app_setup_main_button' | 'web_app_setup_back_button'): Promise<Record<string, unknown> | undefined> {
  const all = (await events(page)).filter(([name]) => name === type);
  return all.at(-1)?.[1];
}

async function profile(page: Page): Promise<{ email: string | null; accounts: Array<{ id: string }>; tgAuth: boolean }> {
  const response = await page.request.get('/api/user', { headers: { authorization: `Bearer ${await pageAccessToken(page)}` } });
  expect(response.ok()).toBe(true);
  return (await response.json()) as { email: string | null; accounts: Array<{ id: string }>; tgAuth: boolean };
}

/** An address outside the wallet, on the devnet. */
const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');

/** The signed-in user's withdrawals of BTC, from the history API. */
async function withdrawals(page: Page): Promise<Array<{ amount: string; to: string | null; state: string }>> {
  const headers = { authorization: `Bearer ${await pageAccessToken(page)}` };
  const account = (await profile(page)).accounts[0]?.id ?? '';
  const response = await page.request.post(`/api/${account}/asset/transactions`, { headers, data: { currency: 'BTC', sort: 'DESC', pageSize: 100, pageNumber: 1 } });
  expect(response.ok()).toBe(true);
  const items = ((await response.json()) as { result: Array<{ direction: string; amount: string; to: string | null; state: string }> }).result;
  return items.filter((item) => item.direction === 'WITHDRAWAL');
}

async function openMiniApp(page: Page, user: TelegramUser, query = ''): Promise<void> {
  await mockMessenger(page);
  await page.goto(miniAppUrl(initDataFor(user), query));
}

test('the first open creates an account and lands on Home; the native main button drives a send through its review; the back button goes back', async ({ page }) => {
  test.setTimeout(180_000);
  const user = newTelegramUser();
  await openMiniApp(page, user);
  await expect(page).toHaveURL(/\/home$/);
  await expect(page.getByRole('button', { name: 'Add most common assets' })).toBeVisible();
  const posted = (await events(page)).map(([name]) => name);
  expect(posted).toEqual(expect.arrayContaining(['web_app_ready', 'web_app_expand', 'web_app_set_header_color', 'web_app_set_background_color']));
  expect(posted.indexOf('web_app_ready')).toBeLessThan(posted.indexOf('web_app_expand'));
  // The header takes our dark theme's background (the messenger's theme is dark).
  expect((await events(page)).find(([name]) => name === 'web_app_set_header_color')?.[1]).toEqual({ color: '#202025' });
  const created = await profile(page);
  expect(created).toMatchObject({ email: null, tgAuth: true });
  expect(created.accounts).toHaveLength(1);

  // Inside the messenger: no logout and no linking toggle in Settings, no link banner on Home.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await expect(page).toHaveURL(/\/settings$/);
  await expect(page.getByTestId('settings-currency')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Log out' })).toHaveCount(0);
  await expect(page.getByTestId('settings-messenger')).toHaveCount(0);
  // 'Leave feedback' opens the support chat inside Telegram (SUPPORT_TELEGRAM), not the form.
  await expect(page.getByTestId('settings-feedback')).toHaveAttribute('href', 'https://t.me/wallet_support');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Home' }).click();
  await expect(page.getByTestId('link-banner')).toHaveCount(0);

  // Fund the new account: the common assets, then a devnet deposit of BTC.
  await page.getByRole('button', { name: 'Add most common assets' }).click();
  await page.getByRole('button', { name: 'Not now' }).click();
  await expect(page.getByTestId('asset-row')).toHaveCount(3);
  // A reload on a deeper path stays in the mini app (launch parameters kept for the tab).
  await page.goto('/home/asset/BTC/receive');
  const address = (await page.getByTestId('receive-address').textContent())?.trim() ?? '';
  expect((await page.request.post('/sandbox/devnet/deposit', { data: { currency: 'BTC', address, amount: '0.01' } })).status()).toBe(201);
  // Home shows it without a reload, as a user sees it: the balance poll (every 10 s) brings the confirmed deposit.
  await page.goto('/home');
  await expect(page.getByTestId('asset-row').filter({ hasText: 'BTC' })).toContainText('0.01\u00a0BTC', { timeout: 45_000 });
  expect((await profile(page)).accounts).toEqual(created.accounts);

  // Send: the native main button stands in for the page's Continue and Confirm; it follows the form's state.
  await page.getByTestId('asset-row').filter({ hasText: 'BTC' }).click();
  await expect(page).toHaveURL(/\/home\/asset\/BTC$/);
  await page.getByRole('link', { name: 'Send' }).click();
  await expect(page).toHaveURL(/\/home\/asset\/BTC\/send$/);
  await expect.poll(() => lastSetup(page, 'web_app_setup_back_button')).toMatchObject({ is_visible: true });
  // One back control: Telegram's (issue 19 item 27); the page's own arrow is left out.
  await expect(page.getByRole('heading', { name: 'Send BTC' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Back' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Continue' })).toHaveCount(0);
  await expect.poll(async () => (await lastSetup(page, 'web_app_setup_main_button'))?.is_visible ?? false).toBe(false);
  const outside = await deriveAddress(OUTSIDE_SEED, 'BITCOIN', 0, 'mainnet');
  await page.getByTestId('send-amount').fill('0.004');
  await page.getByTestId('send-address').fill(outside);
  await expect.poll(() => lastSetup(page, 'web_app_setup_main_button')).toMatchObject({ is_visible: true, is_active: true, text: 'Continue' });
  await emit(page, 'main_button_pressed');
  await expect(page).toHaveURL(/\/home\/asset\/BTC\/send\/review$/);
  await expect(page.getByTestId('review-amount')).toHaveText('0.004\u00a0BTC');
  await expect(page.getByTestId('review-recipient')).toHaveText(outside);
  await expect(page.getByRole('button', { name: 'Confirm' })).toHaveCount(0);
  await expect.poll(() => lastSetup(page, 'web_app_setup_main_button')).toMatchObject({ is_visible: true, is_active: true, text: 'Confirm' });

  // The native back button walks the history back to the form (still filled); the main button goes forward again.
  await emit(page, 'back_button_pressed');
  await expect(page).toHaveURL(/\/home\/asset\/BTC\/send$/);
  await expect(page.getByTestId('send-amount')).toHaveValue('0.004');
  await expect.poll(() => lastSetup(page, 'web_app_setup_main_button')).toMatchObject({ is_visible: true, is_active: true, text: 'Continue' });
  await emit(page, 'main_button_pressed');
  await expect(page).toHaveURL(/\/send\/review$/);
  await expect.poll(() => lastSetup(page, 'web_app_setup_main_button')).toMatchObject({ is_visible: true, is_active: true, text: 'Confirm' });

  // Confirmed through the main button (no passcode set): the withdrawal exists, its amount on hold or sent.
  await emit(page, 'main_button_pressed');
  await expect(page).toHaveURL(/\/send\/progress$/);
  await expect(page.getByTestId('send-progress')).toHaveAttribute('data-state', /^(IN_PROGRESS|COMPLETED)$/);
  await expect.poll(async () => (await withdrawals(page)).map(({ amount, to }) => ({ amount, to }))).toEqual([{ amount: '0.004', to: outside }]);

  // Back on Home, both native buttons hide.
  await page.getByTestId('continue-assets').click();
  await expect(page).toHaveURL(/\/home$/);
  await expect.poll(() => lastSetup(page, 'web_app_setup_back_button')).toMatchObject({ is_visible: false });
  await expect.poll(() => lastSetup(page, 'web_app_setup_main_button')).toMatchObject({ is_visible: false });
});

test('forged init data lands on /error/B2C_USM0025, stale init data on /error/B2C_USM0023', async ({ page }) => {
  await mockMessenger(page);
  await page.goto(miniAppUrl(forgedInitData(newTelegramUser())));
  await expect(page).toHaveURL(/\/error\/B2C_USM0025$/);
  await expect(page.getByTestId('error-text')).toHaveText('Invalid token. Please reopen the web app and link the account again.');
  await expect(page.getByTestId('contact-support')).toHaveCount(0);

  await page.evaluate(() => window.sessionStorage.clear());
  await page.goto(miniAppUrl(initDataFor(newTelegramUser(), { ageS: 3601 })));
  await expect(page).toHaveURL(/\/error\/B2C_USM0023$/);
  await expect(page.getByTestId('error-text')).toHaveText('Session expired. Please reopen the web app and link the account again.');
});

test('linking from the web: the Home banner opens the bot, a simulated /start update links, and the mini app signs in as the web user', async ({ page, app, browser }) => {
  test.setTimeout(90_000);
  const email = `tglink${Date.now()}@example.com`;
  await signUpAndLogIn(page, app, { email });

  // The banner (outside the messenger, not linked): 'Link' asks for a code and opens the bot's deep link.
  const banner = page.getByTestId('link-banner');
  await expect(banner).toBeVisible();
  let deepLink = '';
  await page.route('https://t.me/**', async (route) => {
    deepLink = route.request().url();
    await route.fulfill({ status: 200, contentType: 'text/html', body: '<p>Telegram</p>' });
  });
  await banner.getByRole('button', { name: 'Link' }).click();
  await expect.poll(() => deepLink).toMatch(/^https:\/\/t\.me\/wallet_test_bot\?start=[A-Za-z0-9_-]{43}$/);
  const code = new URL(deepLink).searchParams.get('start') ?? '';
  // The page goes to the bot's link: let that navigation finish, or the goto('/home') below races it and is interrupted.
  await page.waitForURL(/^https:\/\/t\.me\//, { waitUntil: 'load' });

  // Telegram delivers the user's /start <code> to the webhook; the bot links and answers in the user's language.
  const telegramUser = newTelegramUser({ language_code: 'ru' });
  expect((await postUpdate(app.url, startUpdate(telegramUser, code))).status).toBe(200);
  await expect.poll(() => botMessagesTo(app.url, telegramUser.id)).toEqual([expect.stringContaining('привязан')]);

  // Back in the web app: linked, so no banner; Settings shows the toggle on with the Telegram name.
  await page.goto('/home');
  await expect(page.getByRole('button', { name: 'Add most common assets' })).toBeVisible();
  await expect(banner).toHaveCount(0);
  await page.goto('/settings');
  await expect(page.getByTestId('settings-messenger').getByRole('switch')).toBeChecked();
  await expect(page.getByTestId('settings-messenger')).toContainText(`@${telegramUser.username}`);

  // The same Telegram user opens the mini app (another device): signed in to the web user's account.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, baseURL: app.url });
  const mini = await phone.newPage();
  await openMiniApp(mini, telegramUser);
  await expect(mini).toHaveURL(/\/home$/);
  expect(await profile(mini)).toMatchObject({ email, tgAuth: true });
  await phone.close();

  // With the passcode on, unlinking asks for it first (issue 14): a wrong code stays in the prompt, the right one unlinks.
  const enabled = await page.request.post('/api/user/pinCode/enable', { headers: { authorization: `Bearer ${await pageAccessToken(page)}` }, data: { pinCode: '2580' } });
  expect(enabled.ok()).toBe(true);
  await page.goto('/settings');
  await page.getByTestId('settings-messenger').getByRole('switch').click();
  const prompt = page.getByTestId('messenger-passcode');
  await expect(prompt.getByRole('heading', { name: 'Enter your passcode to unlink Telegram' })).toBeVisible();
  await page.keyboard.type('1111');
  await expect(prompt.getByTestId('passcode-error')).toHaveText('Incorrect pin code');
  expect(await profile(page)).toMatchObject({ tgAuth: true });
  await page.keyboard.type('2580');
  await expect(prompt).toHaveCount(0);
  await expect(page.getByTestId('settings-messenger').getByRole('switch')).not.toBeChecked();
  expect(await profile(page)).toMatchObject({ tgAuth: false });
});

test("'don't show again' hides the link banner for good on this device", async ({ page, app }) => {
  const email = `tgbanner${Date.now()}@example.com`;
  await signUpAndLogIn(page, app, { email });
  // The banner shows on Home's protect-your-wallet state too (SPEC §2: its own conditions decide).
  await page.getByRole('button', { name: 'Add most common assets' }).click();
  await expect(page.getByTestId('home-protect')).toBeVisible();
  await expect(page.getByTestId('link-banner')).toBeVisible();
  await page.getByTestId('link-banner').getByRole('button', { name: "Don't show again" }).click();
  await expect(page.getByTestId('link-banner')).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId('home-protect')).toBeVisible();
  await expect(page.getByTestId('link-banner')).toHaveCount(0);
});
