import pg from 'pg';
import { mnemonicToSeedSync } from '@scure/bip39';
import { test, expect, logIn } from './fixtures.ts';
import { addressOf, apiUser, available } from './send-helpers.ts';
import { deriveAddress } from '../../src/server/domain/addresses.ts';
import { rejectWithdrawal } from '../../src/server/domain/withdrawals/review.ts';

/**
 * Issue 30 item 2 as the user sees it: a withdrawal above WITHDRAWAL_REVIEW_ABOVE_USD is "Under review" on the send
 * screen, in the history and in its details; rejected by an operator, it ends Failed with the review's reason.
 */
test.use({ appEnv: { DEVNET_BLOCK_MS: '1500', RATES_WALK_MS: '0', WORKER_POLL_MS: '200', WITHDRAWAL_FEES: JSON.stringify({ BTC: '0.0001' }), WITHDRAWAL_REVIEW_ABOVE_USD: '100' } });

const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');

test('a withdrawal waiting for review shows Under review, then Failed once rejected', async ({ page, app }) => {
  test.setTimeout(90_000);
  const alice = await apiUser(app);
  const aliceAddress = await addressOf(page, alice, 'BTC');
  const outside = await deriveAddress(OUTSIDE_SEED, 'BITCOIN', 0, 'mainnet');
  expect((await page.request.post('/sandbox/devnet/deposit', { data: { currency: 'BTC', address: aliceAddress, amount: '0.05' } })).status()).toBe(201);
  await expect.poll(() => available(page, alice, 'BTC'), { timeout: 30_000 }).toBe('0.05');
  await logIn(page, alice.email);

  // $650 at the reference price: over the $100 threshold.
  await page.goto('/home/asset/BTC/send');
  await page.getByTestId('send-amount').fill('0.01');
  await page.getByTestId('send-address').fill(outside);
  await expect(page.getByTestId('send-fee')).toHaveText(/0\.0001\sBTC/);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('button', { name: 'Confirm' }).click();
  await expect(page.getByTestId('send-progress')).toHaveAttribute('data-state', 'IN_PROGRESS');
  await expect(page.getByTestId('progress-title')).toHaveText('Under review');
  await expect(page.getByTestId('progress-waiting')).toContainText('under review');

  await page.goto('/home/asset/BTC');
  const item = page.getByTestId('history-item').first();
  await expect(item).toHaveAttribute('data-state', 'IN_PROGRESS');
  await expect(page.getByTestId('pending-badge').first()).toHaveText(' · Under review');
  await item.click();
  await expect(page.getByTestId('detail-tx_detail_status')).toContainText('Under review');
  await expect.poll(() => available(page, alice, 'BTC')).toBe('0.04');

  const pool = new pg.Pool({ connectionString: app.env.DATABASE_URL, max: 2 });
  try {
    const order = await pool.query<{ id: string; user_id: string }>(
      `SELECT w.id, wa.user_id FROM withdrawals w JOIN wallet_accounts wa ON wa.id = w.wallet_account_id WHERE w.wallet_account_id = $1 AND w.state = 'UNDER_REVIEW'`,
      [alice.accountId],
    );
    expect(order.rows).toHaveLength(1);
    const [{ id, user_id: operator }] = order.rows as [{ id: string; user_id: string }];
    expect(await rejectWithdrawal(pool, { orderId: id, operatorId: operator, reason: 'e2e' })).toBe('rejected');
  } finally {
    await pool.end();
  }
  await expect(page.getByTestId('detail-tx_detail_status')).toContainText('Failed', { timeout: 30_000 });
  await expect(page.getByTestId('detail-tx_detail_failure')).toContainText('The withdrawal was declined after a review. Nothing was charged: the amount is back in your balance. Contact support to learn more.');
  await expect.poll(() => available(page, alice, 'BTC')).toBe('0.05');
});
