import { test, expect, logIn, signUpConfirmed, newEmail, PASSWORD, outboxCode } from './fixtures.ts';
import { pageAccessToken } from './send-helpers.ts';

/**
 * Issue 36 item 5 in Chromium: the web app links a valid manifest with PNG icons, registers its service worker and
 * passes Chrome's own installability check; the worker keeps the shell and static assets but never an API answer
 * (offline, /api fails instead of answering from a cache); /tg neither links the manifest nor registers the worker.
 */
type ManifestIcon = { src: string; sizes: string; type: string; purpose?: string };

/** A PNG's width and height, from its IHDR chunk. */
const pngSize = (bytes: Buffer) => ({ width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) });

test('the web app is installable and its service worker never serves an API answer', async ({ page, context, app }) => {
  test.setTimeout(180_000);
  const manifest = (await (await page.request.get('/manifest.webmanifest')).json()) as { name: string; short_name: string; start_url: string; display: string; icons: ManifestIcon[] };
  expect(manifest).toMatchObject({ name: 'Wallet', short_name: 'Wallet', start_url: '/home', display: 'standalone' });
  for (const [size, purpose] of [[192, 'any'], [512, 'any'], [512, 'maskable']] as const) {
    const icon = manifest.icons.find((i) => i.sizes === `${size}x${size}` && i.type === 'image/png' && i.purpose === purpose);
    expect(icon, `${size} ${purpose}`).toBeDefined();
    const response = await page.request.get(icon?.src ?? '');
    expect(response.headers()['content-type']).toBe('image/png');
    expect(pngSize(await response.body())).toEqual({ width: size, height: size });
  }
  const worker = await (await page.request.get('/sw.js')).text();
  // The build wrote its version into the worker: a new build is a new worker and a new cache.
  expect(worker).toMatch(/const VERSION = '[0-9a-f]{16}';/);

  const email = newEmail('install');
  await signUpConfirmed(page, { email, password: PASSWORD }, outboxCode(app));
  await logIn(page, email);
  await expect(page.locator('link[rel="manifest"]')).toHaveAttribute('href', '/manifest.webmanifest');
  expect(await page.evaluate(async () => (await navigator.serviceWorker.ready).active?.scriptURL)).toMatch(/\/sw\.js$/);
  await page.reload();
  await expect.poll(() => page.evaluate(() => navigator.serviceWorker.controller?.scriptURL ?? '')).toMatch(/\/sw\.js$/);

  // Chrome's own check, the one Lighthouse reports: the manifest parsed without error and no installability error
  // but the test browser's own: Playwright's contexts are incognito ones, where Chrome never offers to install.
  const cdp = await context.newCDPSession(page);
  const parsed = (await cdp.send('Page.getAppManifest')) as { errors: unknown[] };
  expect(parsed.errors).toEqual([]);
  const installability = async () =>
    ((await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: { errorId: string }[] }).installabilityErrors.map((e) => e.errorId).filter((id) => id !== 'in-incognito');
  await expect.poll(installability, { timeout: 20_000 }).toEqual([]);

  // Online the API answers through the page; offline it fails: nothing was kept to answer from. (`no-store` keeps
  // the browser's HTTP cache out of it: GET /api/client-config may be kept there a while, by its Cache-Control.)
  const token = await pageAccessToken(page);
  const callApi = (path: string) =>
    page.evaluate(
      async ([url, bearer]) => {
        try {
          return (await fetch(url, { headers: { authorization: `Bearer ${bearer}` }, cache: 'no-store' })).status;
        } catch {
          return 'failed';
        }
      },
      [path, token] as const,
    );
  expect(await callApi('/api/user')).toBe(200);
  expect(await callApi('/api/client-config')).toBe(200);
  await context.setOffline(true);
  expect(await callApi('/api/user')).toBe('failed');
  expect(await callApi('/api/client-config')).toBe('failed');
  // The shell still opens offline, from the worker's cache.
  const offline = await page.goto('/settings');
  expect(offline?.status()).toBe(200);
  expect(offline?.fromServiceWorker()).toBe(true);
  await context.setOffline(false);

  const cached = await page.evaluate(async () => {
    const urls: string[] = [];
    for (const name of await caches.keys()) for (const request of await (await caches.open(name)).keys()) urls.push(new URL(request.url).pathname);
    return urls;
  });
  expect(cached).toContain('/home');
  expect(cached.some((path) => path.startsWith('/_astro/'))).toBe(true);
  expect(cached.filter((path) => /^\/(api|oidc|auth|sandbox|tg|operator)(\/|$)/.test(path))).toEqual([]);
});

test('the Telegram mini app neither links the manifest nor registers the service worker', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto('/tg?dev_user=515151');
  await page.waitForURL('**/home');
  await expect(page.locator('link[rel="manifest"]')).toHaveCount(0);
  // A wallet path reloaded inside the messenger stays the mini app's.
  await page.goto('/settings');
  await page.waitForLoadState('networkidle');
  expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).length)).toBe(0);
  expect(await page.evaluate(() => navigator.serviceWorker.controller)).toBeNull();
});
