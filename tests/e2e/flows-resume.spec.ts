import type { Page } from '@playwright/test';
import { test, expect, signUpAndLogIn } from './fixtures.ts';

/**
 * Issue 19 items 14, 15, 17: an order in flight survives a reload and leaving its review gives it up at once; the
 * browser's back from the sell card step returns to the amount; the sell rate counts down and offers Update rate.
 */
test.use({ appEnv: { LOG_LEVEL: 'info', DEVNET_BLOCK_MS: '200', CONFIRMATIONS: 'BITCOIN:1', RATES_WALK_MS: '0', WORKER_POLL_MS: '250' } });

/** A new user holding the common assets and 0.01 BTC from the devnet faucet. */
async function userWithBitcoin(page: Page, app: Parameters<typeof signUpAndLogIn>[1]): Promise<void> {
  await signUpAndLogIn(page, app);
  await page.getByRole('button', { name: 'Add most common assets' }).click();
  await page.getByRole('button', { name: 'Not now' }).click();
  await page.goto('/home/asset/BTC/receive');
  const address = (await page.getByTestId('receive-address').textContent())?.trim() ?? '';
  expect((await page.request.post('/sandbox/devnet/deposit', { data: { currency: 'BTC', address, amount: '0.01' } })).status()).toBe(201);
  await page.goto('/home/asset/BTC');
  await expect(page.getByTestId('asset-balance')).toHaveText('0.01\u00a0BTC', { timeout: 30_000 });
}

test('a reload on the swap review keeps the order and its countdown; leaving the review frees the hold at once', async ({ page, app }) => {
  test.setTimeout(120_000);
  await userWithBitcoin(page, app);
  await page.goto('/home');
  await page.getByRole('button', { name: 'Swap' }).click();
  await expect(page).toHaveURL(/\/swap\/order$/);
  await page.getByTestId('swap-source-amount').fill('0.004');
  await expect(page.getByTestId('swap-destination-amount')).not.toHaveValue('');
  await page.getByRole('button', { name: 'Continue' }).click();
  await expect(page).toHaveURL(/\/swap\/order\/review$/);
  const received = (await page.getByTestId('review-get').textContent()) ?? '';

  await page.reload();
  await expect(page).toHaveURL(/\/swap\/order\/review$/);
  await expect(page.getByTestId('review-pay')).toContainText('0.004\u00a0BTC');
  await expect(page.getByTestId('review-get')).toHaveText(received);
  await expect(page.getByTestId('swap-countdown')).toHaveText(/^Rate valid for [45]:\d\d$/);

  // Back to the form: the order is cancelled and its 0.004 BTC is free again, not after five minutes.
  await page.getByRole('link', { name: 'Back' }).click();
  await expect(page).toHaveURL(/\/swap\/order$/);
  await page.goto('/home/asset/BTC');
  await expect(page.getByTestId('asset-on-hold')).toContainText('0', { timeout: 10_000 });
  await expect(page.getByTestId('asset-balance')).toHaveText('0.01\u00a0BTC');
  // Nothing to restore any more: the review opened by its address goes back to the form.
  await page.goto('/swap/order/review');
  await expect(page).not.toHaveURL(/\/swap\/order\/review$/);
});

test('sell: the browser back from the card step returns to the amount; a reload keeps the amount; the rate counts down to Update rate', async ({ page, app }) => {
  test.setTimeout(120_000);
  await page.clock.install();
  await userWithBitcoin(page, app);
  await page.goto('/sell/get');
  await page.getByTestId('sell-choice').filter({ hasText: 'Bitcoin' }).first().click();
  await expect(page).toHaveURL(/\/sell\/order$/);
  await expect(page.getByTestId('sell-countdown')).toHaveText(/^Rate valid for (5:00|4:5\d)$/);
  await page.getByTestId('sell-amount-input').fill('0.005');
  await page.getByRole('button', { name: 'Continue' }).click();
  await expect(page.getByTestId('sell-card-input')).toBeVisible();
  await expect(page).toHaveURL(/\/sell\/order\?step=card$/);

  await page.goBack();
  await expect(page).toHaveURL(/\/sell\/order$/);
  await expect(page.getByTestId('sell-amount-input')).toHaveValue('0.005');

  await page.reload();
  await expect(page.getByTestId('sell-amount-input')).toHaveValue('0.005');

  // The fixed rate runs out: it says so, Continue gives way to Update rate, which fixes a fresh one.
  await page.clock.fastForward('05:01');
  await expect(page.getByTestId('sell-rate-expired')).toHaveText('Rate expired');
  await expect(page.getByRole('button', { name: 'Continue' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Update rate' }).click();
  await expect(page.getByTestId('sell-countdown')).toHaveText(/^Rate valid for (5:00|4:5\d)$/);
  await expect(page.getByRole('button', { name: 'Continue' })).toBeEnabled();
});
