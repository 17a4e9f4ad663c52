import { bech32 } from '@scure/base';
import { test, expect, signUpAndLogIn } from './fixtures.ts';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Issue 4's walk: a new user adds the common assets, receives BTC on a valid bech32 address with its QR code, and a
 * devnet deposit shows as Pending, then completed after its confirmations, with balance and fiat total updating
 * without a reload. Blocks are slow enough that the Pending state lasts longer than one balance poll (10 s).
 */
test.use({ appEnv: { LOG_LEVEL: 'info', DEVNET_BLOCK_MS: '8000', CONFIRMATIONS: 'BITCOIN:3', RATES_WALK_MS: '0' } });

test.describe('custody: assets, receive and a deposit', () => {
  test('a new user adds the common assets, receives BTC, and sees the deposit go from Pending to completed', async ({ page, app, context }) => {
    test.setTimeout(120_000);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await signUpAndLogIn(page, app);

    // First-time empty account.
    await expect(page.getByTestId('home-empty')).toBeVisible();
    await expect(page.getByText('Add assets from the list')).toBeVisible();
    await page.getByRole('button', { name: 'Add most common assets' }).click();

    // Assets exist and no passcode: the protect-your-wallet prompt, dismissed for good.
    await expect(page.getByRole('heading', { name: 'Protect your wallet' })).toBeVisible();
    await page.getByRole('button', { name: 'Not now' }).click();
    await expect(page.getByTestId('home-wallet')).toBeVisible();
    await expect(page.getByTestId('asset-row')).toHaveCount(3);
    await expect(page.getByTestId('asset-row').first()).toContainText('Bitcoin');
    await expect(page.getByTestId('total-balance')).toHaveText('$0');
    // From here on nothing may reload the page: the marker would be lost.
    await page.evaluate(() => ((window as unknown as { noReload: boolean }).noReload = true));

    // Receive → choose BTC → address and QR code.
    await page.getByRole('link', { name: 'Receive' }).click();
    await expect(page).toHaveURL(/\/select-asset\/receive$/);
    await page.getByPlaceholder('Search').fill('bitc');
    await page.getByTestId('chooser-item').filter({ hasText: 'Bitcoin' }).first().click();
    await expect(page).toHaveURL(/\/home\/asset\/BTC\/receive$/);
    const address = (await page.getByTestId('receive-address').textContent())?.trim() ?? '';
    const decoded = bech32.decode(address as `${string}1${string}`);
    expect(decoded.prefix).toBe('bc');
    expect(decoded.words[0]).toBe(0); // witness version 0: native segwit (BIP84)
    const qr = page.getByTestId('qr-code');
    await expect(qr).toBeVisible();
    await expect(qr).toHaveAttribute('data-text', address);
    expect(await qr.boundingBox()).toMatchObject({ width: 200, height: 200 });
    await page.getByRole('button', { name: 'Copy address' }).click();
    await expect(page.getByTestId('toast')).toHaveText('Address copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(address);

    // The devnet faucet sends 0.01 BTC to that address from the terminal, beside the running server.
    const sent = spawnSync('npm', ['run', '--silent', 'devnet', '--', 'deposit', 'BTC', address, '0.01'], { cwd: ROOT, env: { ...process.env, ...app.env }, encoding: 'utf8', timeout: 60_000 });
    expect(sent.status, sent.stderr).toBe(0);
    expect(sent.stdout).toContain(`sent 0.01 BTC to ${address}`);

    await page.getByRole('link', { name: 'Back' }).click();
    await expect(page).toHaveURL(/\/home\/asset\/BTC$/);
    await expect(page.getByTestId('copy-address')).toContainText(`${address.slice(0, 8)}...${address.slice(-4)}`);
    const item = page.getByTestId('history-item').first();
    await expect(item).toHaveAttribute('data-state', 'IN_PROGRESS', { timeout: 15_000 });
    await expect(item).toContainText('Receiving');
    await expect(item).toContainText('Pending');
    await expect(page.getByTestId('asset-balance')).toHaveText('0\u00a0BTC');

    // Credited after its confirmations: the poll brings the new state and balance.
    await expect(item).toHaveAttribute('data-state', 'COMPLETED', { timeout: 45_000 });
    await expect(item).toContainText('Received');
    await expect(item).toContainText('+0.01\u00a0BTC');
    await expect(page.getByTestId('asset-balance')).toHaveText('0.01\u00a0BTC');
    await expect(page.getByText('Today')).toBeVisible();

    // Its details: every field the deposit has, with the explorer link.
    await item.click();
    await expect(page.getByTestId('transaction-title')).toHaveText('Received');
    await expect(page.getByTestId('detail-tx_detail_status')).toContainText('Completed');
    await expect(page.getByTestId('detail-tx_detail_date')).toContainText(/[A-Z][a-z]{2} \d{1,2}, \d{1,2}:\d{2} (AM|PM)/);
    await expect(page.getByTestId('detail-tx_detail_receiver')).toContainText(address);
    await expect(page.getByTestId('detail-tx_detail_network')).toContainText('Bitcoin');
    await expect(page.getByTestId('explorer-link')).toHaveAttribute('href', /\/sandbox\/devnet\/tx\/[0-9a-f]{64}$/);

    // Home: the total in fiat now counts the deposit.
    await page.getByRole('link', { name: 'Back' }).click();
    await page.getByRole('link', { name: 'Back' }).click();
    await expect(page).toHaveURL(/\/home$/);
    await expect(page.getByTestId('total-balance')).toHaveText(/^\$[1-9][\d,]*\.\d{2}$/);
    await expect(page.getByTestId('asset-row').first()).toContainText('0.01\u00a0BTC');
    expect(await page.evaluate(() => (window as unknown as { noReload?: boolean }).noReload)).toBe(true);
  });

  test('manage assets hides an asset on this device and adds one the account lacks', async ({ page, app }) => {
    await signUpAndLogIn(page, app);
    await page.getByRole('link', { name: 'Select assets' }).click();
    await expect(page).toHaveURL(/\/manage-assets$/);
    // Issue 33 item 3: Lightning is not a second bare "BTC" beside Bitcoin; it carries its network, as tokens do.
    await expect(page.getByTestId('manage-assets')).toContainText('BTC · Lightning');
    await page.getByTestId('toggle-LTC').check();
    await expect(page.getByTestId('toggle-LTC')).toBeChecked();
    await page.getByRole('link', { name: 'Back' }).click();
    await expect(page.getByRole('heading', { name: 'Protect your wallet' })).toBeVisible();
    await page.getByRole('button', { name: 'Not now' }).click();
    await expect(page.getByTestId('asset-row')).toHaveText([/Litecoin/]);
    await page.getByRole('link', { name: 'Manage assets' }).first().click();
    await page.getByTestId('toggle-LTC').uncheck();
    await page.getByRole('link', { name: 'Back' }).click();
    await expect(page.getByTestId('asset-row')).toHaveCount(0);
    await expect(page.getByText('All your assets are hidden')).toBeVisible();
    // Hidden on the device only: the send chooser leaves it out too, and the account still has it.
    await page.getByRole('link', { name: 'Send' }).click();
    await expect(page.getByTestId('chooser-item').filter({ hasText: 'Litecoin' })).toHaveCount(0);
    await expect(page.getByTestId('chooser-item').filter({ hasText: 'Bitcoin' }).first()).toBeVisible();
  });
});
