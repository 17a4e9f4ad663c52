import type { Page } from '@playwright/test';
import pg from 'pg';
import { test, expect, signUpAndLogIn } from './fixtures.ts';
import { pageAccessToken } from './send-helpers.ts';
import { initDataFor, newTelegramUser, telegramEnv } from '../support/telegram.ts';

/**
 * Issue 20 in Chromium: the RudderStack SDK, configured from the client config, sends to the gateway's embedded
 * data plane, which stores the events in PostgreSQL. Analytics is off in tests unless turned on: here it is (an
 * empty ANALYTICS_WRITE_KEY is unset, so the key is generated).
 */
// The web app's service worker fetches the scripts in its place, out of page.route's sight: blocked here, so the ad
// blocker's refusal below reaches the SDK's chunk as an extension's does.
test.use({ appEnv: { ANALYTICS_WRITE_KEY: '', RATES_WALK_MS: '0', ...telegramEnv() }, serviceWorkers: 'block' });

/** Opens /tg as a Telegram mobile client does: launch data in the hash, the webview proxy answering the SDK. */
async function openMiniApp(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const emit = (eventType: string, eventData: unknown) => window.dispatchEvent(new MessageEvent('message', { data: JSON.stringify({ eventType, eventData }), source: window.parent }));
    const insets = { top: 0, bottom: 0, left: 0, right: 0 };
    const answers: Record<string, [string, unknown]> = {
      web_app_request_viewport: ['viewport_changed', { height: 844, width: 390, is_expanded: true, is_state_stable: true }],
      web_app_request_safe_area: ['safe_area_changed', insets],
      web_app_request_content_safe_area: ['content_safe_area_changed', insets],
      web_app_request_theme: ['theme_changed', { theme_params: { bg_color: '#17212b', text_color: '#f5f5f5' } }],
      web_app_biometry_get_info: ['biometry_info_received', { available: false }],
    };
    (window as unknown as { TelegramWebviewProxy: unknown }).TelegramWebviewProxy = {
      postEvent(type: string) {
        const answer = answers[type];
        if (answer) setTimeout(() => emit(answer[0], answer[1]), 0);
      },
    };
  });
  const hash = new URLSearchParams({ tgWebAppData: initDataFor(newTelegramUser()), tgWebAppVersion: '8.0', tgWebAppPlatform: 'ios', tgWebAppThemeParams: JSON.stringify({ bg_color: '#17212b', text_color: '#f5f5f5' }) });
  await page.goto(`/tg#${hash.toString()}`);
}

type Row = { anonymous_id: string; type: string; name: string | null; path: string | null; app_type: string | null; user_id: string | null; payload: Record<string, unknown> & { properties?: Record<string, unknown>; context?: Record<string, unknown> } };

let pool: pg.Pool | undefined;
test.afterAll(async () => pool?.end());

async function events(databaseUrl: string, where: string, values: unknown[]): Promise<Row[]> {
  pool ??= new pg.Pool({ connectionString: databaseUrl, max: 2 });
  return (await pool.query<Row>(`SELECT anonymous_id, type, name, path, app_type, user_id, payload FROM analytics_events WHERE ${where} ORDER BY id`, values)).rows;
}

async function accountOf(page: Page): Promise<string> {
  const response = await page.request.get('/api/user', { headers: { authorization: `Bearer ${await pageAccessToken(page)}` } });
  expect(response.ok()).toBe(true);
  return ((await response.json()) as { accounts: Array<{ id: string }> }).accounts[0]?.id ?? '';
}

test("the browser: 'load' with app type web and the account id, identify, a page per route, the campaign", async ({ page, app }) => {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  // The SDK says nothing when all is well (no unknown plugin, no failed fetch, no storage fallback).
  page.on('console', (message) => {
    if (/RS SDK|analytics:/.test(message.text())) errors.push(message.text());
  });
  await signUpAndLogIn(page, app);
  await page.goto('/home?utm_source=newsletter&utm_campaign=spring');
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible();
  const account = await accountOf(page);
  const db = app.env.DATABASE_URL ?? '';

  await expect.poll(async () => (await events(db, "type = 'track' AND name = 'load' AND user_id = $1", [account])).length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
  const [load] = await events(db, "type = 'track' AND name = 'load' AND user_id = $1", [account]);
  expect(load?.app_type).toBe('web');
  expect(load?.payload.properties).toEqual({ account, appType: 'web' });
  expect(load?.payload).toMatchObject({ channel: 'web', userId: account });
  const context = load?.payload.context as { sessionId?: number; campaign?: Record<string, string>; library?: { name?: string }; traits?: Record<string, unknown> };
  // SPEC §9: a session id is a whole number of at least 10 digits.
  expect(String(context.sessionId)).toMatch(/^\d{10,}$/);
  expect(context.campaign).toEqual({ source: 'newsletter', name: 'spring' });
  expect(context.library?.name).toMatch(/RudderLabs JavaScript SDK/);
  // Never an e-mail: identify carries the account id alone.
  const identify = await events(db, "type = 'identify' AND user_id = $1", [account]);
  expect(identify.length).toBeGreaterThanOrEqual(1);
  expect(JSON.stringify(identify[0]?.payload)).not.toContain('@example.com');

  // A route change of the island is a page event with its path.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.waitForURL('**/settings');
  await expect.poll(async () => (await events(db, "type = 'page' AND user_id = $1 AND path = '/settings'", [account])).length, { timeout: 20_000 }).toBe(1);
  // The first page is sent before the sign-in is resolved: it is the same visitor's (anonymous id).
  const homePages = await events(db, "type = 'page' AND anonymous_id = $1 AND path = '/home'", [load?.payload['anonymousId']]);
  expect(homePages.length).toBeGreaterThanOrEqual(1);
  expect(homePages[0]?.name).toBe('home');

  // Leaving the page sends 'Page Unloaded' with the time on it, in ms.
  await page.goto('/terms');
  await expect.poll(async () => (await events(db, "type = 'track' AND name = 'Page Unloaded' AND user_id = $1", [account])).length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
  const [unloaded] = await events(db, "type = 'track' AND name = 'Page Unloaded' AND user_id = $1", [account]);
  expect(typeof unloaded?.payload.properties?.['timeOnPage']).toBe('number');
  expect(errors).toEqual([]);
});

test("the mini app: 'load' with app type tg", async ({ page, app }) => {
  await openMiniApp(page);
  await page.waitForURL('**/home');
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible();
  const account = await accountOf(page);
  const db = app.env.DATABASE_URL ?? '';
  await expect.poll(async () => (await events(db, "type = 'track' AND name = 'load' AND user_id = $1", [account])).length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
  const [load] = await events(db, "type = 'track' AND name = 'load' AND user_id = $1", [account]);
  expect(load?.app_type).toBe('tg');
  expect(load?.payload.properties).toEqual({ account, appType: 'tg' });
  // The launch data (init data in the hash) never reaches analytics.
  const all = await events(db, 'anonymous_id = $1', [load?.payload['anonymousId']]);
  expect(all.length).toBeGreaterThan(1);
  for (const row of all) expect(JSON.stringify(row.payload)).not.toMatch(/tgWebAppData|auth_date/);
});

test('an ad blocker refusing the data plane leaves the app working', async ({ page, app }) => {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  const consoleLines: string[] = [];
  page.on('console', (message) => consoleLines.push(`${message.type()}: ${message.text()}`));
  let refused = 0;
  await page.route('**/api/analytics/**', (route) => {
    refused += 1;
    return route.abort('blockedbyclient');
  });
  await signUpAndLogIn(page, app);
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible();
  const account = await accountOf(page);
  await expect.poll(() => refused, { timeout: 20_000 }).toBeGreaterThan(0);
  const sdkErrors = () => consoleLines.filter((line) => line.includes('RS SDK'));
  await expect.poll(() => sdkErrors().length).toBe(1);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.waitForURL('**/settings');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Home' }).click();
  await page.waitForURL('**/home');
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible();
  expect(errors).toEqual([]);
  expect(await events(app.env.DATABASE_URL ?? '', 'user_id = $1', [account])).toEqual([]);
  // SPEC §8: the SDK logs the failed source configuration once, and nothing else breaks.
  expect(sdkErrors()).toHaveLength(1);
});

test('an ad blocker refusing the SDK itself leaves the app working, and says so once', async ({ page, app }) => {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  const warnings: string[] = [];
  page.on('console', (message) => {
    if (message.text().startsWith('analytics:')) warnings.push(message.text());
  });
  await page.route('**/_astro/analytics-sdk.*', (route) => route.abort('blockedbyclient'));
  await signUpAndLogIn(page, app);
  await expect.poll(() => warnings.length, { timeout: 20_000 }).toBe(1);
  expect(warnings[0]).toMatch(/the SDK could not be loaded/);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.waitForURL('**/settings');
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible();
  expect(warnings).toHaveLength(1);
  expect(errors).toEqual([]);
});
