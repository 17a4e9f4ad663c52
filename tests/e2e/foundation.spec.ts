import { test, expect, signUpAndLogIn } from './fixtures.ts';

test.describe('foundation', () => {
  test('/home on a device where nobody signed in goes straight to the sign-in area, without loading the wallet', async ({ page }) => {
    const scripts: string[] = [];
    page.on('request', (request) => {
      if (request.resourceType() === 'script') scripts.push(new URL(request.url()).pathname);
    });
    const answer = await page.request.get('/home/asset/BTC', { maxRedirects: 0 });
    expect(answer.status()).toBe(302);
    expect(answer.headers()['location']).toBe('/auth/login');
    // Framed (the mini app in Telegram Web, where the hint is a third-party cookie) the island decides.
    expect((await page.request.get('/home/asset/BTC', { maxRedirects: 0, headers: { 'sec-fetch-dest': 'iframe' } })).status()).toBe(200);
    await page.goto('/home');
    expect(new URL(page.url()).pathname).toBe('/auth/login');
    await expect(page.getByRole('heading', { name: 'Log in' })).toBeVisible();
    expect(scripts.filter((path) => /island|WebWallet/i.test(path))).toEqual([]);
  });

  test('/home with a stale signed-in hint shows the spinner, lands in the sign-in area and clears the hint', async ({ page, context, baseURL }) => {
    await context.addCookies([{ name: 'signed_in', value: '1', url: baseURL ?? '' }]);
    await page.goto('/home');
    await expect(page.getByTestId('app-spinner')).toBeVisible();
    await page.waitForURL('**/auth/login');
    await expect(page.getByRole('heading', { name: 'Log in' })).toBeVisible();
    expect((await context.cookies()).find((cookie) => cookie.name === 'signed_in')).toBeUndefined();
  });

  test('/error/B2C_USM0027 offers a contact-support mail link', async ({ page }) => {
    await page.goto('/error/B2C_USM0027');
    await expect(page.getByTestId('error-text')).toHaveText('Something went wrong. Please try again later or contact support.');
    const support = page.getByTestId('contact-support');
    await expect(support).toBeVisible();
    await expect(support).toHaveAttribute('href', /^mailto:support@wallet\.example\?subject=B2C_USM0027$/);
  });

  test('/error/B2C_USM0023 shows its text and no button', async ({ page }) => {
    await page.goto('/error/B2C_USM0023');
    await expect(page.getByTestId('error-text')).toHaveText('Session expired. Please reopen the web app and link the account again.');
    await expect(page.locator('main a, main button')).toHaveCount(0);
  });

  test('/exchange and /notifications need sign-in (SPEC §6), then show coming soon with the bottom navigation', async ({ page, app }) => {
    for (const path of ['/exchange', '/notifications']) {
      await page.goto(path);
      await page.waitForURL('**/auth/login');
    }
    await signUpAndLogIn(page, app);
    await page.goto('/exchange');
    await expect(page.getByRole('heading', { name: 'Coming soon' })).toBeVisible();
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect(nav.getByRole('link')).toHaveText([/Home/, /Exchange\s*soon/, /Notify\s*soon/, /Settings/]);
    await expect(nav.getByRole('link', { name: /Exchange/ })).toHaveAttribute('aria-current', 'page');
    await nav.getByRole('link', { name: /Notify/ }).click();
    await expect(page).toHaveURL(/\/notifications$/);
    await expect(page.getByRole('heading', { name: 'Coming soon' })).toBeVisible();
  });

  test('switching to Russian changes the texts and survives a reload', async ({ page }) => {
    await page.goto('/auth');
    await expect(page.getByRole('link', { name: 'Log in' })).toBeVisible();
    await page.getByRole('link', { name: 'Русский' }).click();
    await expect(page.getByRole('link', { name: 'Войти' })).toBeVisible();
    await expect(page.locator('html')).toHaveAttribute('lang', 'ru');
    await page.reload();
    await expect(page.getByRole('link', { name: 'Войти' })).toBeVisible();
    await page.goto('/auth');
    await page.getByRole('link', { name: 'English' }).click();
    await expect(page.getByRole('link', { name: 'Log in' })).toBeVisible();
  });

  test('the theme choice survives a reload and applies before the first paint', async ({ page }) => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto('/auth');
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(await background()).toBe('rgb(255, 255, 255)');
    await page.getByRole('link', { name: 'Dark' }).click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
    expect(await background()).toBe('rgb(32, 32, 37)');
    await page.reload();
    expect(await background()).toBe('rgb(32, 32, 37)');
    // The server renders the stored theme into the HTML, so there is no flash of the other one.
    const html = await (await page.request.get('/auth')).text();
    expect(html).toMatch(/<html[^>]*data-theme="dark"/);
    await page.getByRole('link', { name: 'Light' }).click();
    expect(await background()).toBe('rgb(255, 255, 255)');
  });

  test('without a stored choice the system preference decides the theme', async ({ page }) => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto('/auth/login');
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(32, 32, 37)');
  });

  test('static shells load no script unless they have a form', async ({ page }) => {
    const scripts: string[] = [];
    page.on('request', (request) => {
      if (request.resourceType() === 'script') scripts.push(request.url());
    });
    for (const path of ['/auth', '/auth/login', '/terms', '/error/B2C_USM0022']) await page.goto(path);
    expect(scripts).toEqual([]);
    expect(await page.locator('script').count()).toBe(0);
  });

  test('the main pages run under their Content-Security-Policy without a violation; an injected inline script is blocked', async ({ page, cspViolations }) => {
    // The wallet (spinner, then the sign-in redirect), the forms with their scripts, the mini app's shell.
    for (const path of ['/home', '/auth', '/auth/login', '/auth/login/email', '/auth/signup/email', '/auth/forgot', '/settings', '/terms']) {
      await page.goto(path);
      await page.waitForLoadState('networkidle');
    }
    await page.goto('/auth/signup/email');
    await page.getByLabel('E-mail').first().fill('someone@example.com');
    expect(cspViolations).toEqual([]);
    const csp = (await page.request.get('/auth/signup/email')).headers()['content-security-policy'] ?? '';
    expect(csp).toMatch(/script-src 'self'( 'sha256-[\w+/=]+')*;/);

    // What an injected <script> would do is refused, and the fixture sees the report.
    const ran = await page.evaluate(async () => {
      const script = document.createElement('script');
      script.textContent = 'window.injected = true';
      document.body.append(script);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return (window as unknown as { injected?: boolean }).injected === true;
    });
    expect(ran).toBe(false);
    await expect.poll(() => cspViolations.length).toBeGreaterThan(0);
    expect(cspViolations.join('\n')).toContain('script-src');
    cspViolations.length = 0;
  });
});
