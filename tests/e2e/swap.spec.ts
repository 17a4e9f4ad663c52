import { test, expect, signUpAndLogIn } from './fixtures.ts';
import { setReferencePrices } from './rates-helpers.ts';

/**
 * Issue 7's walk: a user holding BTC and USDT_TRX takes Home's quick swap path to the order BTC → USDT_TRX, meets
 * each limit error, reverses the pair with the arrow, lets the review's 300 s run out (the browser clock is driven,
 * nothing sleeps), takes a fresh rate and swaps, with both balances changing by the quoted amounts. Rates are fixed
 * (BTC 65000, USDT 1) and the spread is 50 bps, so 0.004 BTC buys 258.7 USDT. Once, BTC falls 1.5 % while the review
 * is open: the gateway refuses the stale rate (issue 14 item 11) and the review shows 'Order expired' with 'Update rate'.
 */
test.use({ appEnv: { LOG_LEVEL: 'info', DEVNET_BLOCK_MS: '200', CONFIRMATIONS: 'BITCOIN:1', RATES_WALK_MS: '0', SWAP_SPREAD_BPS: '50', WORKER_POLL_MS: '250' } });

test('swap BTC to USDT_TRX: quick path, limits, arrow, expiry and Update rate, then both balances move', async ({ page, app }) => {
  test.setTimeout(120_000);
  // The browser's clock is Playwright's: it runs at normal speed until the test moves it.
  await page.clock.install();
  await signUpAndLogIn(page, app);
  await page.getByRole('button', { name: 'Add most common assets' }).click();
  await page.getByRole('button', { name: 'Not now' }).click();
  await expect(page.getByTestId('asset-row')).toHaveCount(3);

  // 0.01 BTC arrives from the devnet faucet. Everything from here is in-app navigation (no reload).
  await page.getByTestId('asset-row').filter({ hasText: 'Bitcoin' }).click();
  await page.getByRole('link', { name: 'Receive' }).click();
  const address = (await page.getByTestId('receive-address').textContent())?.trim() ?? '';
  expect((await page.request.post('/sandbox/devnet/deposit', { data: { currency: 'BTC', address, amount: '0.01' } })).status()).toBe(201);
  await page.getByRole('link', { name: 'Back' }).click();
  await page.getByRole('link', { name: 'Back' }).click();
  await expect(page).toHaveURL(/\/home$/);
  // Balances poll every 10 s: the test moves the browser's clock instead of waiting for it.
  await expect(async () => {
    await page.clock.fastForward('00:10');
    await expect(page.getByTestId('asset-row').filter({ hasText: 'Bitcoin' })).toContainText('0.01\u00a0BTC', { timeout: 1_000 });
  }).toPass({ timeout: 30_000 });

  // Quick swap path: both BTC and USDT_TRX are held.
  await page.getByRole('button', { name: 'Swap' }).click();
  await expect(page).toHaveURL(/\/swap\/order$/);
  await expect(page.getByTestId('swap-source-currency')).toHaveAttribute('data-currency', 'BTC');
  await expect(page.getByTestId('swap-destination-currency')).toHaveAttribute('data-currency', 'USDT_TRX');
  const source = page.getByTestId('swap-source-amount');
  const destination = page.getByTestId('swap-destination-amount');
  const error = page.getByTestId('swap-error');
  const proceed = page.getByRole('button', { name: 'Continue' });

  // Each limit error, from the limits the server sends.
  await source.fill('0.0001');
  await expect(error).toHaveText('Min amount limit is: 0.0002 BTC');
  await expect(proceed).toBeDisabled();
  await source.fill('3');
  await expect(error).toHaveText('Max amount limit is: 1.5 BTC');
  await source.fill('0.5');
  await expect(error).toHaveText('Not enough funds');
  await expect(proceed).toBeDisabled();

  // Typed by source: the destination is calculated. A comma is the point (SPEC §5), as in every amount field;
  // the rate and what the user gets are shown by the destination's round (USDT: 2), not 8 decimals.
  await source.fill('0,004');
  await expect(source).toHaveValue('0.004');
  await expect(destination).toHaveValue('258.7');
  await expect(error).toHaveText('');
  await expect(page.getByTestId('swap-rate')).toContainText(/1 BTC ≈ 64,6\d\d(\.\d{1,2})? USDT \(TRC-20\)/);
  // Issue 33 item 3: both sides show what they are worth in the chosen fiat (USD here).
  await expect(page.getByTestId('swap-source-fiat')).toHaveText(/^≈\u00a0\$2\d\d\.\d{2}$/);
  await expect(page.getByTestId('swap-destination-fiat')).toHaveText(/^≈\u00a0\$2\d\d\.\d{2}$/);
  // The arrow swaps the currencies and the amounts; the quote follows.
  await page.getByTestId('swap-reverse').click();
  await expect(page.getByTestId('swap-source-currency')).toHaveAttribute('data-currency', 'USDT_TRX');
  await expect(page.getByTestId('swap-destination-currency')).toHaveAttribute('data-currency', 'BTC');
  // The typed BTC amount moved to the destination and is kept; the source is re-quoted for it (the spread now
  // applies the other way, so it costs more than the 258.7 USDT it paid).
  await expect(destination).toHaveValue('0.004');
  // Each side keeps its own decimals: the USDT paid is shown by USDT's round (2), rounded up.
  await expect(source).toHaveValue(/^26[01]\.\d{1,2}$/);
  await page.getByTestId('swap-reverse').click();
  await expect(page.getByTestId('swap-source-currency')).toHaveAttribute('data-currency', 'BTC');
  // Typed by destination: the source is calculated.
  await destination.fill('64.675');
  await expect(source).toHaveValue('0.001');
  await source.fill('0.004');
  await expect(destination).toHaveValue('258.7');
  await expect(proceed).toBeEnabled();
  await proceed.click();

  // Review: the rate holds 5:00, counting down.
  await expect(page).toHaveURL(/\/swap\/order\/review$/);
  await expect(page.getByTestId('review-pay')).toContainText('0.004\u00a0BTC');
  await expect(page.getByTestId('review-get')).toContainText('258.7\u00a0USDT');
  await expect(page.getByTestId('review-pay-fiat')).toHaveText(/^≈\u00a0\$[1-9][\d,]*\.\d{2}$/);
  await expect(page.getByTestId('review-get-fiat')).toHaveText(/^≈\u00a0\$[1-9][\d,]*\.\d{2}$/);
  await expect(page.getByTestId('swap-countdown')).toHaveText(/^Rate valid for [45]:\d\d$/);
  await page.clock.fastForward('01:00');
  await expect(page.getByTestId('swap-countdown')).toHaveText(/^Rate valid for [34]:\d\d$/);
  await page.clock.fastForward('04:00');
  await expect(page.getByTestId('swap-expired')).toHaveText('Order expired');
  await expect(page.getByRole('button', { name: 'Confirm swap' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Update rate' }).click();
  await expect(page.getByTestId('swap-countdown')).toHaveText(/^Rate valid for (5:00|4:5\d)$/);
  await expect(page.getByTestId('review-get')).toContainText('258.7\u00a0USDT');

  // BTC falls 1.5 % with the countdown still running: the stale rate is refused and nothing moves.
  await setReferencePrices(app, { BTC: '64000' });
  await page.getByRole('button', { name: 'Confirm swap' }).click();
  await expect(page.getByTestId('swap-expired')).toHaveText('Order expired');
  await expect(page.getByRole('button', { name: 'Confirm swap' })).toHaveCount(0);
  // Back at 65 000, a fresh rate is the same 258.7 USDT.
  await setReferencePrices(app, { BTC: '65000' });
  await page.getByRole('button', { name: 'Update rate' }).click();
  await expect(page.getByTestId('swap-countdown')).toHaveText(/^Rate valid for (5:00|4:5\d)$/);
  await expect(page.getByTestId('review-get')).toContainText('258.7\u00a0USDT');

  await page.getByRole('button', { name: 'Confirm swap' }).click();
  await expect(page).toHaveURL(/\/swap\/order\/success$/);
  await expect(page.getByTestId('swap-success-text')).toHaveText('You paid 0.004\u00a0BTC and got 258.7\u00a0USDT (TRC-20).');
  await page.getByRole('button', { name: 'Done' }).click();
  await expect(page).toHaveURL(/\/home$/);
  const rows = page.getByTestId('asset-row');
  await expect(rows.filter({ hasText: 'Bitcoin' })).toContainText('0.006\u00a0BTC');
  await expect(rows.filter({ hasText: 'TRC-20' })).toContainText('258.7\u00a0USDT');

  // History: one Swapped item; the reviews that were not swapped (the rate update, the refused stale rate) left none.
  await rows.filter({ hasText: 'Bitcoin' }).click();
  const items = page.getByTestId('history-item').filter({ hasText: /swap/i });
  await expect(items).toHaveCount(1);
  await expect(items.first()).toContainText('Swapped');
  await expect(items.first()).toHaveAttribute('data-state', 'COMPLETED');
  await expect(page.getByTestId('asset-on-hold')).toContainText('0');

  // Details of the swap, opened from the USDT side: headed by that side's amount, its spread a service fee, no network.
  await page.goto('/home/asset/USDT_TRX');
  await page.getByTestId('history-item').filter({ hasText: 'Swapped' }).click();
  await expect(page.getByTestId('transaction-amount')).toHaveText('+258.7\u00a0USDT');
  await expect(page.getByTestId('detail-tx_detail_service_fee')).toBeVisible();
  await expect(page.getByTestId('detail-tx_detail_fee')).toHaveCount(0);
  await expect(page.getByTestId('detail-tx_detail_network')).toHaveCount(0);
});
