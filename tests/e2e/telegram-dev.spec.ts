import { test, expect } from './fixtures.ts';
import { pageApiUser } from './send-helpers.ts';

/**
 * Issue 19 item 27: /tg opened in a plain browser against a development server (no bot token) signs in a test
 * Telegram user; with no native buttons to show, the page keeps its own back arrow and main button (the in-page
 * stand-ins), and a reload on a deeper path keeps the same dev user.
 */
test('the development mini app in a plain browser: in-page main button and back arrow, the dev user kept across reloads', async ({ page }) => {
  test.setTimeout(90_000);
  await page.goto('/tg?dev_user=424242');
  await page.waitForURL('**/home');
  const before = await pageApiUser(page);
  expect(before.accountId).not.toBe('');

  await page.goto('/buy/get');
  await page.getByTestId('buy-coin').click();
  await page.getByTestId('buy-fiat').filter({ hasText: 'USD' }).first().click();
  await expect(page).toHaveURL(/\/buy\/order$/);
  await expect(page.getByRole('button', { name: 'Review order' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Back' })).toBeVisible();

  await page.reload();
  await expect(page).toHaveURL(/\/buy\//);
  await expect(page.getByRole('link', { name: 'Back' })).toBeVisible();
  expect((await pageApiUser(page)).accountId).toBe(before.accountId);
});
