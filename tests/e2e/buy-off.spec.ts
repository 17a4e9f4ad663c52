import { test, expect, signUpAndLogIn } from './fixtures.ts';

/** With CARD_PROVIDER=off (as production without a real card provider) buying shows as unavailable, not broken. */
test.use({ appEnv: { LOG_LEVEL: 'info', RATES_WALK_MS: '0', CARD_PROVIDER: 'off' } });

test('the buy entry of /home/buy-sell shows unavailable and leads nowhere when buying is off', async ({ page, app }) => {
  await signUpAndLogIn(page, app);
  await page.goto('/home/buy-sell');
  const buy = page.getByTestId('buy-entry');
  await expect(buy).toHaveAttribute('aria-disabled', 'true');
  await expect(buy).toContainText('Unavailable');
  await expect(buy).not.toHaveAttribute('href');
  await buy.click();
  await expect(page).toHaveURL(/\/home\/buy-sell$/);
  await expect(page.getByTestId('toast')).toHaveCount(0);

  // Reached by its address, the buy screen offers nothing and raises no error.
  await page.goto('/buy/get');
  await expect(page.getByTestId('buy-get')).toContainText('Nothing can be bought right now.');
  await expect(page.getByTestId('buy-coin')).toHaveCount(0);
  await expect(page.getByTestId('toast')).toHaveCount(0);
});
