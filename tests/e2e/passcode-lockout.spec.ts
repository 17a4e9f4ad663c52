import type { Page } from '@playwright/test';
import { test, expect, signUpAndLogIn } from './fixtures.ts';

/**
 * Issue 19 item 19: after the fifth wrong passcode the prompt counts "Try again in 30 s" down (on the page's clock,
 * fast-forwarded) with the keypad off, and takes digits again at zero.
 */
async function tap(page: Page, pin: string): Promise<void> {
  for (const digit of pin) await page.getByTestId(`passcode-key-${digit}`).click();
}

test('five wrong passcodes: the wait counts down with the keypad off', async ({ page, app }) => {
  test.setTimeout(90_000);
  await page.clock.install();
  await signUpAndLogIn(page, app);
  await page.goto('/settings/passcode/enable');
  await tap(page, '2580');
  await expect(page.getByTestId('passcode-circles')).toHaveAttribute('data-filled', '0');
  await tap(page, '2580');
  await expect(page.getByTestId('passcode-success')).toBeVisible();

  // Turning it off asks for the current code: four wrong ones are only wrong.
  await page.goto('/settings/passcode/disable');
  const error = page.getByTestId('passcode-error');
  for (let attempt = 1; attempt <= 4; attempt += 1) {
    await tap(page, '0000');
    await expect(error).toHaveText('Incorrect pin code');
    await expect(page.getByTestId('passcode-circles')).toHaveAttribute('data-filled', '0');
  }
  // The fifth locks the passcode for 30 s: the prompt counts it down and the keypad is off meanwhile.
  await tap(page, '0000');
  await expect(error).toHaveText('Try again in 30 s');
  await expect(page.getByTestId('passcode-key-1')).toBeDisabled();
  await expect(page.getByTestId('passcode-prompt')).toHaveAttribute('data-locked', 'true');
  await page.clock.fastForward(10_000);
  await expect(error).toHaveText(/^Try again in (20|19) s$/);
  await page.clock.fastForward(21_000);
  await expect(error).toHaveText('');
  await expect(page.getByTestId('passcode-key-1')).toBeEnabled();
});
