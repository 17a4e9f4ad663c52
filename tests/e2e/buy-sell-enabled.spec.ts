import { test, expect, signUpAndLogIn } from './fixtures.ts';

/** With SELL_ENABLED=on the sell entry of /home/buy-sell is a link to the sell flow (issue 9's switch). */
test.use({ appEnv: { LOG_LEVEL: 'info', RATES_WALK_MS: '0', SELL_ENABLED: 'on' } });

test('the sell entry of /home/buy-sell is on and leads to /sell/get', async ({ page, app }) => {
  await signUpAndLogIn(page, app);
  await page.goto('/home/buy-sell');
  const sell = page.getByTestId('sell-entry');
  await expect(sell).toHaveAttribute('href', '/sell/get');
  await expect(sell).not.toHaveAttribute('aria-disabled', 'true');
  await sell.click();
  await expect(page).toHaveURL(/\/sell\/(get|pay)$/);
});
