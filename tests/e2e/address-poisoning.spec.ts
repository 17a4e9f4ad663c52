import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { test, expect, logIn } from './fixtures.ts';
import { addressOf, apiUser, available } from './send-helpers.ts';

/**
 * Issue 36 item 3 in Chromium: an address sharing the ends of a saved one, or one that only ever sent dust, shows a
 * warning on the send form and on the address book's form, and nothing goes on until the user ticks that they checked it.
 */
test.use({ appEnv: { DEVNET_BLOCK_MS: '300', CONFIRMATIONS: 'ETHEREUM:1', RATES_WALK_MS: '0', WORKER_POLL_MS: '200', WITHDRAWAL_FEES: JSON.stringify({ ETH: '0.001' }) } });

const SAVED = '0x9858effd232b4033e47d90003d41ec34ecaeda94';
/** SAVED's first and last four hex digits around another middle. */
const LOOKALIKE = '0x98580000000000000000000000000000000eda94';
const DUST_SENDER = '0x5151000000000000000000000000000000005151';

test('send and the address book warn of a lookalike or dust-only address until the user confirms checking it', async ({ page, app }) => {
  test.setTimeout(120_000);
  const alice = await apiUser(app);
  const headers = { authorization: `Bearer ${alice.token}` };
  const deposit = await addressOf(page, alice, 'ETH');
  expect((await page.request.post('/sandbox/devnet/deposit', { data: { currency: 'ETH', address: deposit, amount: '0.05' } })).status()).toBe(201);
  expect((await page.request.post(`/api/${alice.accountId}/address-book`, { headers, data: { name: 'Exchange', blockchain: 'ETHEREUM', address: SAVED } })).status()).toBe(201);
  // A poisoner's dust, as the chain scanner records it.
  const db = new pg.Client({ connectionString: app.env.DATABASE_URL });
  await db.connect();
  await db.query(
    `INSERT INTO chain_deposits (network, tx_hash, output_index, currency, from_address, to_address, amount, wallet_account_id, confirmations_required, state)
     VALUES ('ETHEREUM', $1, 0, 'ETH', $2, $3, 1000, $4, 1, 'CREDITED')`,
    [`0x${randomBytes(32).toString('hex')}`, DUST_SENDER, deposit, alice.accountId],
  );
  await db.end();
  await expect.poll(() => available(page, alice, 'ETH'), { timeout: 30_000 }).toBe('0.05');
  await logIn(page, alice.email);

  // Send: the lookalike warns and names the saved address; Continue waits for the tick.
  await page.goto('/home/asset/ETH/send');
  await page.getByTestId('send-amount').fill('0.01');
  await page.getByTestId('send-address').fill(LOOKALIKE);
  await expect(page.getByTestId('address-caution')).toBeVisible();
  await expect(page.getByTestId('address-caution-text')).toContainText('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
  await expect(page.getByTestId('send-fee')).toContainText('0.001');
  await expect(page.getByRole('button', { name: 'Continue' })).toHaveCount(0);
  await page.getByTestId('address-caution-confirm').check();
  await page.getByRole('button', { name: 'Continue' }).click();
  await expect(page).toHaveURL(/\/send\/review$/);
  await expect(page.getByTestId('review-recipient')).toHaveText(LOOKALIKE);

  // Back on the form, another address asks again: the tick was for that address only.
  await page.goBack();
  await page.getByTestId('send-address').fill(DUST_SENDER);
  await expect(page.getByTestId('address-caution-text')).toContainText('only ever sent you tiny amounts');
  await expect(page.getByTestId('address-caution-confirm')).not.toBeChecked();
  await expect(page.getByRole('button', { name: 'Continue' })).toHaveCount(0);
  // The saved address itself is no warning.
  await page.getByTestId('send-address').fill(SAVED);
  await expect(page.getByTestId('send-fee')).toContainText('0.001');
  await expect(page.getByRole('button', { name: 'Continue' })).toBeVisible();
  await expect(page.getByTestId('address-caution')).toHaveCount(0);

  // The address book: saving the lookalike waits for the tick.
  await page.goto('/settings/address-book/create');
  await page.getByTestId('address-name').fill('Lookalike');
  await page.getByTestId('address-network').selectOption('ETHEREUM');
  await page.getByTestId('address-value').fill(LOOKALIKE);
  await expect(page.getByTestId('address-caution')).toBeVisible();
  const save = page.getByRole('button', { name: 'Save' });
  await expect(save).toBeDisabled();
  await page.getByTestId('address-caution-confirm').check();
  await expect(save).toBeEnabled();
  await page.getByTestId('address-caution-confirm').uncheck();
  await expect(save).toBeDisabled();
  await page.getByTestId('address-caution-confirm').check();
  await save.click();
  await expect(page).toHaveURL(/\/settings\/address-book$/);
  await expect(page.getByTestId('address-book-item')).toHaveCount(2);
});
