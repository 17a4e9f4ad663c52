import { mnemonicToSeedSync } from '@scure/bip39';
import { test, expect, logIn } from './fixtures.ts';
import { addressOf, apiUser, available } from './send-helpers.ts';
import { deriveAddress } from '../../src/server/domain/addresses.ts';

/**
 * Issue 5's walk: user A sends to user B's deposit address (settled at once, no fee, both histories), to an outside
 * devnet address (Pending, then completed with hash and explorer link), saves that recipient from the in-progress
 * screen and picks it next time, when the devnet is told to fail the broadcast (FAILED, hold returned). (QR scanning: send-qr.spec.ts.)
 */
test.use({ appEnv: { LOG_LEVEL: 'info', DEVNET_BLOCK_MS: '1500', CONFIRMATIONS: 'BITCOIN:2', RATES_WALK_MS: '0', WORKER_POLL_MS: '200', WITHDRAWAL_FEES: JSON.stringify({ BTC: '0.0001' }) } });

const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');

test.describe('send', () => {
  test('to another user at once, to an outside address through the chain, from the address book, and a failed one', async ({ page, app }) => {
    test.setTimeout(150_000);
    const alice = await apiUser(app);
    const bob = await apiUser(app);
    const bobAddress = await addressOf(page, bob, 'BTC');
    const aliceAddress = await addressOf(page, alice, 'BTC');
    const outside = await deriveAddress(OUTSIDE_SEED, 'BITCOIN', 0, 'mainnet');
    expect((await page.request.post('/sandbox/devnet/deposit', { data: { currency: 'BTC', address: aliceAddress, amount: '0.05' } })).status()).toBe(201);
    await expect.poll(() => available(page, alice, 'BTC'), { timeout: 30_000 }).toBe('0.05');
    await logIn(page, alice.email);

    // 1. To Bob's deposit address: no fee, settled at once.
    await page.goto('/home/asset/BTC');
    await page.getByRole('link', { name: 'Send' }).click();
    await expect(page).toHaveURL(/\/home\/asset\/BTC\/send$/);
    await expect(page.getByTestId('send-available')).toContainText('0.0499');
    await page.getByTestId('send-amount').fill('0.01');
    // Issue 33 item 3: the typed amount's worth in the chosen fiat (USD).
    await expect(page.getByTestId('send-fiat')).toHaveText(/^≈\u00a0\$[1-9][\d,]*\.\d{2}$/);
    await page.getByTestId('send-address').fill(bobAddress);
    await expect(page.getByTestId('send-fee')).toContainText('No fee');
    await expect(page.getByTestId('send-available')).toContainText('0.05');
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect(page).toHaveURL(/\/send\/review$/);
    await expect(page.getByTestId('review-receive')).toHaveText('0.01\u00a0BTC');
    await expect(page.getByTestId('review-receive-fiat')).toHaveText(/^≈\u00a0\$[1-9][\d,]*\.\d{2}$/);
    await expect(page.getByTestId('review-network')).toHaveText('Bitcoin');
    await expect(page.getByTestId('review-recipient')).toHaveText(bobAddress);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await expect(page).toHaveURL(/\/send\/progress$/);
    await expect(page.getByTestId('send-progress')).toHaveAttribute('data-state', 'COMPLETED');
    await expect(page.getByTestId('progress-title')).toHaveText('Sent');
    expect(await available(page, bob, 'BTC')).toBe('0.01');
    const bobHistory = (await (
      await page.request.post(`/api/${bob.accountId}/asset/transactions`, { headers: { authorization: `Bearer ${bob.token}` }, data: { currency: 'BTC', sort: 'DESC', pageSize: 100, pageNumber: 1 } })
    ).json()) as { result: { direction: string; state: string; amount: string; accountFromType: string; accountToType: string }[] };
    expect(bobHistory.result[0]).toMatchObject({ direction: 'DEPOSIT', state: 'COMPLETED', amount: '0.01', accountFromType: 'B2C', accountToType: 'B2C' });
    await page.getByTestId('continue-assets').click();
    await expect(page).toHaveURL(/\/home$/);

    // 2. Checks in the browser: a malformed address, oneself, more than the balance.
    await page.goto('/home/asset/BTC/send');
    await page.getByTestId('send-address').fill('bc1-not-an-address');
    await expect(page.getByTestId('send-address-error')).toHaveText('The withdrawal address format is wrong.');
    await page.getByTestId('send-address').fill(aliceAddress);
    await expect(page.getByTestId('send-address-error')).toHaveText("You can't make a transfer to yourself");
    await page.getByTestId('send-address').fill(outside);
    await page.getByTestId('send-amount').fill('1');
    await expect(page.getByTestId('send-amount-error')).toHaveText('Not enough funds');
    await expect(page.getByRole('button', { name: 'Continue' })).toHaveCount(0);

    // 3. To an outside address: the fee, Pending, then completed with its hash and explorer link.
    await page.getByTestId('send-max').click();
    await expect(page.getByTestId('send-amount')).toHaveValue('0.04');
    await page.getByTestId('send-amount').fill('0.01');
    await expect(page.getByTestId('send-fee')).toHaveText(/0\.0001\sBTC/);
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect(page.getByTestId('review-receive')).toHaveText('0.0099\u00a0BTC');
    await expect(page.getByTestId('review-fee')).toHaveText('0.0001\u00a0BTC');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await expect(page.getByTestId('send-progress')).toHaveAttribute('data-state', 'IN_PROGRESS');
    await expect(page.getByTestId('progress-waiting')).toContainText('about 2 minutes');

    // Saved to the address book from the in-progress screen.
    await page.getByTestId('add-to-book').click();
    await page.getByTestId('recipient-name').fill('Cold storage');
    await page.getByTestId('recipient-save').click();
    await expect(page.getByTestId('toast')).toHaveText('Address added');
    await expect(page.getByTestId('add-to-book')).toHaveCount(0);

    // The toast says it arrived, wherever the user is.
    await page.getByTestId('continue-assets').click();
    await expect(page.getByTestId('toast')).toHaveText('Sent 0.01 BTC', { timeout: 30_000 });
    await page.goto('/home/asset/BTC');
    const sentItem = page.getByTestId('history-item').first();
    await expect(sentItem).toHaveAttribute('data-state', 'COMPLETED');
    await expect(sentItem).toContainText('Sent');
    await expect(sentItem).toContainText('-0.01\u00a0BTC');
    await sentItem.click();
    await expect(page.getByTestId('detail-tx_detail_hash')).toContainText(/[0-9a-f]{64}/);
    await expect(page.getByTestId('explorer-link')).toHaveAttribute('href', /\/sandbox\/devnet\/tx\/[0-9a-f]{64}$/);
    await expect.poll(() => available(page, alice, 'BTC')).toBe('0.03');

    // 4. Next time the recipient comes from the address book; the devnet is told to refuse that broadcast.
    expect((await page.request.post('/sandbox/devnet/fail', { data: { currency: 'BTC', address: outside, mode: 'REJECT' } })).status()).toBe(201);
    await page.goto('/home/asset/BTC/send');
    await page.getByTestId('send-book').click();
    await page.getByTestId('send-picker-item').filter({ hasText: 'Cold storage' }).click();
    await expect(page.getByTestId('send-address')).toHaveValue(outside);
    await expect(page.getByTestId('send-recipient')).toContainText('Cold storage');
    await page.getByTestId('send-amount').fill('0.005');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Confirm' }).click();
    await expect(page.getByTestId('send-progress')).toHaveAttribute('data-state', 'FAILED', { timeout: 30_000 });
    await expect(page.getByTestId('progress-title')).toHaveText('Failed to send');
    await expect(page.getByTestId('progress-failure')).toHaveText('The network refused the transaction. Nothing was charged: the amount is back in your balance.');
    await expect(page.getByTestId('toast')).toHaveText('Failed to send 0.005 BTC');
    await expect.poll(() => available(page, alice, 'BTC')).toBe('0.03');
    await page.goto('/home/asset/BTC');
    await expect(page.getByTestId('history-item').first()).toHaveAttribute('data-state', 'FAILED');
    await expect(page.getByTestId('asset-on-hold')).toHaveText('0');
    // Its details (issue 19 item 12): the reason as the client's own words for the code, no fee that was not charged, no sign.
    await page.getByTestId('history-item').first().click();
    await expect(page.getByTestId('detail-tx_detail_failure').locator('dd')).toHaveText('The network refused the transaction. Nothing was charged: the amount is back in your balance.');
    await expect(page.getByTestId('detail-tx_detail_fee')).toHaveCount(0);
    await expect(page.getByTestId('transaction-amount')).toHaveText('0.005\u00a0BTC');
    await page.goto('/home/asset/BTC');

    // The address book in settings: read-only detail, delete.
    await page.goto('/settings');
    await page.getByTestId('settings-address-book').click();
    await page.getByTestId('address-book-item').filter({ hasText: 'Cold storage' }).click();
    await expect(page.getByTestId('address-book-detail')).toContainText(outside);
    await page.getByTestId('address-delete').click();
    await page.getByTestId('address-delete-confirm').click();
    await expect(page.getByTestId('toast')).toHaveText('Address deleted');
    await expect(page.getByTestId('address-book-empty')).toBeVisible();
  });

  test('the address book adds an address with its network and refuses a malformed one', async ({ page, app }) => {
    const carol = await apiUser(app);
    await logIn(page, carol.email);
    await page.goto('/settings/address-book');
    await expect(page.getByTestId('address-book-empty')).toBeVisible();
    await page.getByTestId('address-book-add').click();
    await page.getByTestId('address-name').fill('Exchange');
    await page.getByTestId('address-network').selectOption('TRON');
    // Tokens are not networks: USDT_TRX is not a choice, Tron is.
    await expect(page.getByTestId('address-network').locator('option')).not.toContainText(['Tether USD (TRC-20)']);
    await page.getByTestId('address-value').fill('0x52908400098527886E0F7030069857D2E4169EE7');
    await expect(page.getByTestId('address-error')).toHaveText('Address format is wrong.');
    await expect(page.getByRole('button', { name: 'Save' })).toBeDisabled();
    await page.getByTestId('address-value').fill('  TJRabPrwbZy45sbavfcjinPJC18kjpRTv8  ');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByTestId('toast')).toHaveText('Address added');
    await expect(page).toHaveURL(/\/settings\/address-book$/);
    await expect(page.getByTestId('address-book-item')).toContainText('Exchange');
    await expect(page.getByTestId('address-book-item')).toContainText('Tron');
  });
});
