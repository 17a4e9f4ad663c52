import { test, expect, signUpAndLogIn } from './fixtures.ts';

/**
 * Issue 19 items 20, 23, 24: one switch component (a labelled role=switch), a styled select and a code input that
 * keep their native accessibility; toasts never over the screen's header; the send form's errors under the field
 * they concern, with the field in error style, and a 'recipient gets' line.
 */
test('switches, the styled select, toasts clear of the header, send errors by their fields', async ({ page, app, context }) => {
  test.setTimeout(90_000);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await signUpAndLogIn(page, app);
  await page.getByRole('button', { name: 'Add most common assets' }).click();
  await page.getByRole('button', { name: 'Not now' }).click();

  // Settings: the dark theme is a labelled switch that keyboards can use.
  await page.goto('/settings');
  const dark = page.getByRole('switch', { name: 'Dark theme' });
  await expect(dark).toHaveClass(/\bswitch\b/);
  const before = await page.evaluate(() => document.documentElement.dataset.theme);
  await dark.focus();
  await page.keyboard.press('Space');
  await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).not.toBe(before);

  // The address book's network: a styled native select, named for screen readers.
  await page.goto('/settings/address-book/create');
  const network = page.getByRole('combobox', { name: /network/i });
  await expect(network).toHaveClass(/\bselect\b/);
  await network.selectOption('TRON');
  await expect(network).toHaveValue('TRON');

  // A toast sits clear of the screen's header (the back arrow and the title stay usable).
  await page.goto('/home/asset/BTC');
  await page.getByTestId('copy-address').click();
  const toast = page.getByTestId('toast');
  await expect(toast).toBeVisible();
  const header = await page.locator('header').first().boundingBox();
  const toastBox = await toast.boundingBox();
  expect(header && toastBox && toastBox.y > header.y + header.height).toBe(true);

  // Send: each error right under its field, the field marked; the recipient's amount beside the fee.
  await page.goto('/home/asset/BTC/send');
  await page.getByTestId('send-address').fill('not an address');
  const addressError = page.getByTestId('send-address-error');
  await expect(addressError).toHaveText('The withdrawal address format is wrong.');
  await expect(page.getByTestId('send-address')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByTestId('send-address')).toHaveClass(/border-danger/);
  const field = await page.getByTestId('send-address').boundingBox();
  const error = await addressError.boundingBox();
  const paste = await page.getByTestId('send-paste').boundingBox();
  expect(field && error && paste && error.y > field.y && error.y < paste.y).toBe(true);
  await page.getByTestId('send-amount').fill('5');
  await expect(page.getByTestId('send-amount-error')).toHaveText('Not enough funds');
  await expect(page.getByTestId('send-amount')).toHaveClass(/border-danger/);
  await page.getByTestId('send-address').fill('');
  await page.getByTestId('send-amount').fill('0');
  await expect(page.getByTestId('send-recipient-gets')).toHaveCount(0);
});
