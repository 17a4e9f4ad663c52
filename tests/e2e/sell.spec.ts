import type { Page, Route } from '@playwright/test';
import { test, expect, signUpAndLogIn } from './fixtures.ts';
import { pageApiUser } from './send-helpers.ts';

/**
 * Issue 10's walk: sell BTC to a Sberbank test card with 'save card' on, through get → pay → order (amount, then
 * card) → review (in progress) → success; the next sale offers the saved card; another bank's card shows
 * sell_only_sber_error; an amount outside the limits shows its error; a payout the sandbox bank declines (card
 * ending 0002) returns the crypto. Sandbox test cards and limits are in the README.
 */
test.use({
  appEnv: { LOG_LEVEL: 'info', DEVNET_BLOCK_MS: '300', CONFIRMATIONS: 'BITCOIN:1', RATES_WALK_MS: '0', PAYOUT_SANDBOX_DELAY_MS: '1500', SELL_MIN_RUB: '1000', SELL_MAX_RUB: '300000' },
});

const SBER_CARD = '4276380000000001';
const SBER_DECLINED = '4276380000000002';
const OTHER_BANK_CARD = '5213240000000001';
const ONLY_SBER = "RUB payouts are available only to one specific domestic bank's cards. Please provide a different card.";

/** /sell/get picks RUB and moves on; /sell/pay picks Bitcoin; the order screen shows its terms. */
async function startSellingBitcoin(page: Page): Promise<void> {
  await page.goto('/sell/get');
  await expect(page).toHaveURL(/\/sell\/pay$/);
  await page.getByTestId('sell-choice').filter({ hasText: 'Bitcoin' }).first().click();
  await expect(page).toHaveURL(/\/sell\/order$/);
  await expect(page.getByTestId('sell-limits')).toBeVisible();
}

async function enterAmount(page: Page, amount: string): Promise<void> {
  await page.getByTestId('sell-amount-input').fill(amount);
  await expect(page.getByRole('button', { name: 'Continue' })).toBeEnabled();
  await page.getByRole('button', { name: 'Continue' }).click();
  await expect(page.getByTestId('sell-card-input')).toBeVisible();
}

async function typeCard(page: Page, card: string): Promise<void> {
  const input = page.getByTestId('sell-card-input');
  await input.fill('');
  await input.pressSequentially(card);
}

async function btcBalance(page: Page): Promise<string> {
  return (await page.getByTestId('asset-balance').textContent())?.trim() ?? '';
}

test('sells BTC to a Sberbank card, saves it, reuses it, refuses other banks and out-of-limit amounts, and returns a declined payout', async ({ page, app }) => {
  test.setTimeout(150_000);
  await signUpAndLogIn(page, app);

  // The flow is reachable by its path; choosing BTC, which the account lacks, adds it first.
  await startSellingBitcoin(page);
  await expect(page.getByTestId('sell-amount')).toContainText('Available: 0\u00a0BTC');

  // Fund the account: a devnet deposit to the BTC address.
  await page.goto('/home/asset/BTC/receive');
  const address = (await page.getByTestId('receive-address').textContent())?.trim() ?? '';
  expect((await page.request.post('/sandbox/devnet/deposit', { data: { currency: 'BTC', address, amount: '0.1' } })).status()).toBe(201);
  await page.goto('/home/asset/BTC');
  await expect(page.getByTestId('asset-balance')).toHaveText('0.1\u00a0BTC', { timeout: 30_000 });

  await startSellingBitcoin(page);
  const continueButton = page.getByRole('button', { name: 'Continue' });
  // Zero blocks; an amount under the minimum (about 576 RUB < 1000 RUB) shows the limits; so does one over the maximum.
  await page.getByTestId('sell-amount-input').fill('0');
  await expect(continueButton).toBeDisabled();
  await page.getByTestId('sell-amount-input').fill('0.0001');
  // Issue 33 item 3: the typed crypto's worth in the chosen fiat (USD), beside the RUB it pays out.
  await expect(page.getByTestId('sell-amount-fiat')).toHaveText(/^≈\u00a0\$\d+\.\d{2}$/);
  await expect(page.getByTestId('sell-amount-error')).toHaveText(/^Min 0\.000\d+ - max 0\.0\d+ BTC$/);
  await expect(continueButton).toBeDisabled();
  await page.getByTestId('sell-amount-input').fill('0,09');
  await expect(page.getByTestId('sell-amount-error')).toHaveText(/^Min .* - max .* BTC$/);
  await expect(continueButton).toBeDisabled();

  // A valid amount: the card entry takes the amount step's place.
  await enterAmount(page, '0.001');
  await expect(page.getByTestId('sell-amount-input')).toHaveCount(0);
  await expect(page.getByTestId('sell-saved-cards')).toHaveCount(0);

  // Another bank's card: the lookup on its first 6 digits refuses it.
  await typeCard(page, OTHER_BANK_CARD);
  await expect(page.getByTestId('sell-card-status')).toHaveText(ONLY_SBER);
  await expect(page.getByTestId('sell-save-card')).toHaveCount(0);
  await expect(continueButton).toBeDisabled();

  // The Sberbank test card: at most 16 digits; the save toggle shows only once it is valid.
  await typeCard(page, `${SBER_CARD.slice(0, 12)}`);
  await expect(page.getByTestId('sell-card-status')).toHaveText('SBR · VISA');
  await expect(page.getByTestId('sell-save-card')).toHaveCount(0);
  await expect(continueButton).toBeDisabled();
  await typeCard(page, `${SBER_CARD}99`);
  await expect(page.getByTestId('sell-card-input')).toHaveValue('4276 3800 0000 0001');
  await page.getByTestId('sell-save-card').check();
  await continueButton.click();

  // Review, then the in-progress state while the order is placed (held back here until it has been seen).
  await expect(page).toHaveURL(/\/sell\/order\/review$/);
  await expect(page.getByTestId('sell-review-card')).toHaveText(/4276 38\*\* \*\*\*\* 0001/);
  await expect(page.getByTestId('sell-review-amount')).toContainText('0.001\u00a0BTC');
  await expect(page.getByTestId('sell-review-amount-fiat')).toHaveText(/^≈\u00a0\$[1-9][\d,]*\.\d{2}$/);
  await expect(page.getByTestId('sell-review-bank')).toContainText('SBR');
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/api/c2f/*/order/byCard', async (route: Route) => {
    await held;
    await route.continue();
  });
  await page.getByRole('button', { name: 'Confirm' }).click();
  await expect(page.getByTestId('sell-in-progress')).toBeVisible();
  await expect(page.getByTestId('sell-in-progress')).toContainText('Placing your order…');
  release();
  await expect(page).toHaveURL(/\/sell\/success$/);
  await page.unroute('**/api/c2f/*/order/byCard');
  await expect(page.getByTestId('sell-success-text')).toContainText('4276 38** **** 0001');
  await expect(page.getByTestId('sell-success-status')).toHaveAttribute('data-state', 'COMPLETED', { timeout: 20_000 });
  await expect(page.getByTestId('sell-success-status')).toContainText('Completed');
  // Issue 19 item 10: the heading follows the payout, not the order.
  await expect(page.getByTestId('sell-success-title')).toHaveText('Paid out');
  await expect(page.getByTestId('sell-success-text')).toContainText('has been paid out to the card');

  // The next sale offers the saved card.
  await startSellingBitcoin(page);
  await enterAmount(page, '0.0005');
  const saved = page.getByTestId('sell-saved-card');
  await expect(saved).toHaveCount(1);
  await expect(saved).toContainText('4276 38** **** 0001');
  await expect(continueButton).toBeDisabled();
  await saved.click();
  await expect(saved).toHaveAttribute('aria-checked', 'true');
  await continueButton.click();
  await expect(page.getByTestId('sell-review-card')).toHaveText(/4276 38\*\* \*\*\*\* 0001/);
  await page.getByRole('button', { name: 'Confirm' }).click();
  await expect(page).toHaveURL(/\/sell\/success$/);
  await expect(page.getByTestId('sell-success-status')).toHaveAttribute('data-state', 'COMPLETED', { timeout: 20_000 });

  // The balance after two payouts, then a payout the sandbox bank declines: the crypto comes back.
  await page.goto('/home/asset/BTC');
  await expect(page.getByTestId('history-item').first()).toContainText('Sell');
  await expect(page.getByTestId('asset-balance')).not.toHaveText('0.1\u00a0BTC');
  const before = await btcBalance(page);
  await startSellingBitcoin(page);
  await enterAmount(page, '0.0005');
  await typeCard(page, SBER_DECLINED);
  await expect(page.getByTestId('sell-card-status')).toHaveText('SBR · VISA');
  await continueButton.click();
  await page.getByRole('button', { name: 'Confirm' }).click();
  await expect(page).toHaveURL(/\/sell\/success$/);
  await expect(page.getByTestId('sell-success-status')).toHaveAttribute('data-state', 'FAILED', { timeout: 20_000 });
  await expect(page.getByTestId('sell-failed')).toHaveText('The bank could not pay out. Your crypto is back in your wallet.');
  // A declined payout never says the money is on its way.
  await expect(page.getByTestId('sell-success-title')).toHaveText('Payout declined');
  await expect(page.getByTestId('sell-success-text')).toContainText('The bank declined the payout of ₽');
  await expect(page.getByTestId('sell-success')).not.toContainText('on its way');
  await page.getByTestId('sell-done').click();
  await expect(page).toHaveURL(/\/home$/);
  await page.goto('/home/asset/BTC');
  await expect(page.getByTestId('asset-balance')).toHaveText(before);
  const declined = page.getByTestId('history-item').first();
  await expect(declined).toHaveAttribute('data-state', 'FAILED');
  await expect(declined).toContainText('Sell');
  // Its details: the roubles it was for, the card (not a 'recipient address'), the bank's refusal in words, no network.
  await declined.click();
  await expect(page.getByTestId('detail-tx_detail_to_get')).toContainText('₽');
  await expect(page.getByTestId('detail-tx_detail_card')).toContainText('4276');
  await expect(page.getByTestId('detail-tx_detail_failure')).toHaveText(/The bank declined the payout/);
  await expect(page.getByTestId('detail-tx_detail_recipient_address')).toHaveCount(0);
  await expect(page.getByTestId('detail-tx_detail_network')).toHaveCount(0);
  await expect(page.getByTestId('transaction-amount')).not.toContainText('-');
  // The declined card was not saved: still one saved card.
  await startSellingBitcoin(page);
  await enterAmount(page, '0.0005');
  await expect(page.getByTestId('sell-saved-card')).toHaveCount(1);

  // With the passcode on, Confirm asks for it: a wrong one shows the gateway's message and sells nothing; the right one sells.
  const user = await pageApiUser(page);
  const enabled = await page.request.post('/api/user/pinCode/enable', { headers: { authorization: `Bearer ${user.token}` }, data: { pinCode: '2580' } });
  expect(enabled.ok()).toBe(true);
  await startSellingBitcoin(page);
  await enterAmount(page, '0.0005');
  await page.getByTestId('sell-saved-card').click();
  await continueButton.click();
  await page.getByRole('button', { name: 'Confirm' }).click();
  await expect(page.getByTestId('sell-passcode')).toBeVisible();
  await expect(page.getByTestId('passcode-prompt').getByRole('heading')).toHaveText('Enter your passcode to sell');
  const tap = async (pin: string) => {
    for (const digit of pin) await page.getByTestId(`passcode-key-${digit}`).click();
  };
  await tap('1111');
  await expect(page.getByTestId('passcode-error')).toHaveText('Incorrect pin code');
  await expect(page.getByTestId('passcode-circles')).toHaveAttribute('data-filled', '0');
  await expect(page).toHaveURL(/\/sell\/order\/review$/);
  await tap('2580');
  await expect(page).toHaveURL(/\/sell\/success$/);
  await expect(page.getByTestId('sell-success-status')).toHaveAttribute('data-state', 'COMPLETED', { timeout: 20_000 });
});
