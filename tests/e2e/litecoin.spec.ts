import { expect, signUpAndLogIn } from './fixtures.ts';
import { mineUntil, test } from './litecoin-fixtures.ts';
import { addressOf, available, pageApiUser } from './send-helpers.ts';

/**
 * Issue 16's walk on a real node: the server runs Litecoin on a Litecoin Core -regtest node of this spec's own. A user
 * receives LTC the node sends (Pending in the history, then the balance after the confirmations), sends LTC back
 * to a node address and sees it Completed with its hash and no explorer link (regtest has none); the node received
 * the amount less the fee, to the litoshi.
 */

test.describe('Litecoin on a regtest node', () => {
  test('receives LTC from the node, then sends LTC back and sees it completed without an explorer link', async ({ page, app, node }) => {
    test.setTimeout(150_000);
    await signUpAndLogIn(page, app);
    const user = await pageApiUser(page);
    const address = await addressOf(page, user, 'LTC');
    expect(address).toMatch(/^rltc1q/);

    await page.goto('/home/asset/LTC/receive');
    await expect(page.getByTestId('receive-address')).toHaveText(address);

    // The node pays the deposit address: Pending at once.
    const depositTx = await node.send(address, '0.5');
    await page.goto('/home/asset/LTC');
    const item = page.getByTestId('history-item').first();
    await expect(item).toHaveAttribute('data-state', 'IN_PROGRESS', { timeout: 20_000 });
    await expect(item).toContainText('Pending');
    await expect(page.getByTestId('asset-balance')).toHaveText('0\u00a0LTC');

    // Credited after two blocks.
    await mineUntil(node, async () => (await available(page, user, 'LTC')) === '0.5');
    await expect(item).toHaveAttribute('data-state', 'COMPLETED', { timeout: 20_000 });
    await expect(item).toContainText('+0.5\u00a0LTC');
    await expect(page.getByTestId('asset-balance')).toHaveText('0.5\u00a0LTC');
    await item.click();
    await expect(page.getByTestId('detail-tx_detail_hash')).toContainText(depositTx);
    await expect(page.getByTestId('explorer-link')).toHaveCount(0);

    // Sends 0.2 LTC to an address of the node's wallet.
    const to = await node.newAddress();
    await page.goto('/home/asset/LTC/send');
    await page.getByTestId('send-amount').fill('0.2');
    await page.getByTestId('send-address').fill(to);
    await expect(page.getByTestId('send-fee')).toHaveText(/0\.001\sLTC/);
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect(page.getByTestId('review-receive')).toHaveText('0.199\u00a0LTC');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await expect(page.getByTestId('send-progress')).toHaveAttribute('data-state', 'IN_PROGRESS');
    await mineUntil(node, async () => (await page.getByTestId('send-progress').getAttribute('data-state')) === 'COMPLETED', 60_000);
    await page.goto('/home/asset/LTC');
    const sent = page.getByTestId('history-item').first();
    await expect(sent).toHaveAttribute('data-state', 'COMPLETED');
    await expect(sent).toContainText('-0.2\u00a0LTC');
    await sent.click();
    await expect(page.getByTestId('transaction-title')).toHaveText('Sent');
    await expect(page.getByTestId('detail-tx_detail_hash')).toContainText(/[0-9a-f]{64}/);
    await expect(page.getByTestId('explorer-link')).toHaveCount(0);
    expect(await node.received(to)).toBe(19_900_000n);
    expect(await available(page, user, 'LTC')).toBe('0.3');
  });
});
