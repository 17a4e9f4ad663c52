import { test, expect, signUpAndLogIn } from './fixtures.ts';
import { withholdPrices } from './rates-helpers.ts';

/**
 * Issue 28: what a user sees while the market gives no price. BTC's price is taken away (as a feed that stopped
 * would): Home and the asset show its last value with the time it held, a swap from BTC says why it cannot be
 * quoted and stays blocked, a purchase in EUR says so on the order screen; once prices return, both go on.
 */
test.use({ appEnv: { LOG_LEVEL: 'info', DEVNET_BLOCK_MS: '200', CONFIRMATIONS: 'BITCOIN:1', RATES_WALK_MS: '0', WORKER_POLL_MS: '250' } });

const NO_PRICE = "Prices are unavailable right now, so this can't be quoted. Please try again in a few minutes.";

test('without a price nothing is quoted and the last value shows its time; with it back, the swap goes on', async ({ page, app }) => {
  test.setTimeout(120_000);
  await signUpAndLogIn(page, app);
  await page.getByRole('button', { name: 'Add most common assets' }).click();
  await page.getByRole('button', { name: 'Not now' }).click();
  await page.getByTestId('asset-row').filter({ hasText: 'Bitcoin' }).click();
  await page.getByRole('link', { name: 'Receive' }).click();
  const address = (await page.getByTestId('receive-address').textContent())?.trim() ?? '';
  expect((await page.request.post('/sandbox/devnet/deposit', { data: { currency: 'BTC', address, amount: '0.01' } })).status()).toBe(201);
  await withholdPrices(app, ['BTC']);
  await page.goto('/home');

  // Home: BTC's value from its last price, with the time it held; the total still counts it.
  const btc = page.getByTestId('asset-row').filter({ hasText: 'Bitcoin' });
  await expect(btc).toContainText('0.01\u00a0BTC', { timeout: 30_000 });
  await expect(btc).toContainText(/\$650\.00 · as of \d{1,2}:\d\d [AP]M/);
  await btc.click();
  await expect(page.getByTestId('asset-fiat-value')).toHaveText(/^\$650\.00 · as of \d{1,2}:\d\d [AP]M$/);
  await page.getByRole('link', { name: 'Back' }).click();

  // Swap from BTC: the amount cannot be quoted, the screen says why and Continue stays off.
  await page.getByRole('button', { name: 'Swap' }).click();
  await expect(page).toHaveURL(/\/swap\/order$/);
  await expect(page.getByTestId('swap-source-currency')).toHaveAttribute('data-currency', 'BTC');
  await page.getByTestId('swap-source-amount').fill('0.004');
  await expect(page.getByTestId('swap-error')).toHaveText(NO_PRICE);
  await expect(page.getByTestId('swap-destination-amount')).toHaveValue('');
  await expect(page.getByRole('button', { name: 'Continue' })).toBeDisabled();

  // Prices back: the same screen quotes on the next edit; nothing is stuck.
  await withholdPrices(app, []);
  await page.getByTestId('swap-source-amount').fill('0.0041');
  await page.getByTestId('swap-source-amount').fill('0.004');
  await expect(page.getByTestId('swap-error')).toHaveText('');
  await expect(page.getByTestId('swap-destination-amount')).not.toHaveValue('');
  await expect(page.getByRole('button', { name: 'Continue' })).toBeEnabled();

  // Buying in EUR without EUR's rate: the order screen says why, review stays off.
  await withholdPrices(app, ['EUR']);
  await page.goto('/home/buy-sell');
  await page.getByTestId('buy-entry').click();
  await page.getByTestId('buy-coin').click();
  await page.getByTestId('buy-fiat').filter({ hasText: 'EUR' }).first().click();
  await expect(page).toHaveURL(/\/buy\/order$/);
  await page.getByTestId('buy-from-amount').fill('100');
  await expect(page.getByTestId('buy-error')).toHaveText(NO_PRICE);
  await expect(page.getByRole('button', { name: 'Review order' })).toBeDisabled();
  await withholdPrices(app, []);
});
