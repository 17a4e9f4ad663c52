import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import { expect as baseExpect, signUpAndLogIn } from './fixtures.ts';
import { mineUntil, test } from './litecoin-fixtures.ts';
import { addressOf, available, pageApiUser } from './send-helpers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Issue 31 item 3, as the user sees it: on a Litecoin Core -regtest node whose hot wallet the operator has emptied
 * to cold storage (`npm run custody -- sweep-to-cold`), a withdrawal the hot wallet cannot pay waits; its history item
 * and its details say "Pending" and why, in English and in Russian, light and dark, whole on a 390×844 screen.
 */

// A node of its own: the hot wallet must hold only what this test put there.
test.use({ viewport: { width: 390, height: 844 }, nodeOf: 'waiting-for-funds' });

// Screens load lazily and the machine may be busy: each step gets up to 30 s.
const expect = baseExpect.configure({ timeout: 30_000 });

/** The element lies within the 390-wide screen, not cut off at its right edge. */
async function whole(page: Page, testId: string): Promise<void> {
  const box = await page.getByTestId(testId).first().boundingBox();
  expect(box, testId).not.toBeNull();
  expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(390);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
}

test('a withdrawal the hot wallet cannot pay shows Pending with its reason in the history and the details, in both languages', async ({ page, app, node }) => {
  test.setTimeout(240_000);
  await signUpAndLogIn(page, app);
  const user = await pageApiUser(page);
  const address = await addressOf(page, user, 'LTC');
  await node.send(address, '0.5');
  await mineUntil(node, async () => (await available(page, user, 'LTC')) === '0.5');

  // The operator sends nearly all the custody holds to cold storage: the hot wallet keeps 0.01 LTC less the fee.
  const cold = await node.newAddress();
  const swept = spawnSync('npm', ['run', '--silent', 'custody', '--', 'sweep-to-cold', 'LTC', cold, '0.49'], { cwd: ROOT, env: { ...process.env, ...app.env }, encoding: 'utf8', timeout: 90_000 });
  expect(swept.status, swept.stderr + swept.stdout).toBe(0);
  await mineUntil(node, async () => (await node.received(cold)) === 49_000_000n);

  // 0.2 LTC to the node: more than the hot wallet holds, so it waits instead of being sent.
  const to = await node.newAddress();
  const sent = await page.request.post(`/api/${user.accountId}/withdrawal`, {
    headers: { authorization: `Bearer ${user.token}` },
    data: { currency: 'LTC', amount: '0.2', depositAddress: to, idempotencyKey: crypto.randomUUID() },
  });
  expect(sent.status()).toBe(200);
  const id = ((await sent.json()) as { id: string }).id;
  await expect
    .poll(async () => ((await (await page.request.get(`/api/${user.accountId}/withdrawal/${id}`, { headers: { authorization: `Bearer ${user.token}` } })).json()) as { pendingReason: string | null }).pendingReason, { timeout: 30_000 })
    .toBe('WAITING_FOR_FUNDS');

  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto('/home/asset/LTC');
    const item = page.getByTestId('history-item').first();
    await expect(item).toHaveAttribute('data-state', 'IN_PROGRESS', { timeout: 20_000 });
    await expect(item.getByTestId('pending-badge')).toHaveText(' · Pending');
    await expect(item.getByTestId('pending-reason')).toHaveText('Our sending wallet is being topped up: usually a few hours');
    await whole(page, 'pending-reason');
    await page.screenshot({ path: test.info().outputPath(`waiting-history-en-${scheme}.png`) });
    await item.click();
    await expect(page.getByTestId('detail-tx_detail_status').locator('dd')).toHaveText('Pending');
    await expect(page.getByTestId('detail-tx_detail_pending_reason')).toContainText("Why it's pending");
    await expect(page.getByTestId('detail-tx_detail_pending_reason').locator('dd')).toHaveText(
      'Waiting for our sending wallet to be topped up: usually sent within a few hours. The amount stays on hold until then.',
    );
    await whole(page, 'detail-tx_detail_pending_reason');
    await page.screenshot({ path: test.info().outputPath(`waiting-details-en-${scheme}.png`), fullPage: true });
  }

  await page.goto('/settings/select-language');
  await page.getByRole('radio', { name: 'Русский' }).click();
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto('/home/asset/LTC');
    const item = page.getByTestId('history-item').first();
    await expect(item.getByTestId('pending-badge')).toHaveText(' · В обработке');
    await expect(item.getByTestId('pending-reason')).toHaveText('Пополняем кошелёк для отправки: обычно несколько часов');
    await whole(page, 'pending-reason');
    await page.screenshot({ path: test.info().outputPath(`waiting-history-ru-${scheme}.png`) });
    await item.click();
    await expect(page.getByTestId('detail-tx_detail_status').locator('dd')).toHaveText('В обработке');
    await expect(page.getByTestId('detail-tx_detail_pending_reason').locator('dd')).toHaveText(
      'Ждёт пополнения нашего кошелька для отправки: обычно уходит в течение нескольких часов. До тех пор сумма заморожена.',
    );
    await whole(page, 'detail-tx_detail_pending_reason');
    await page.screenshot({ path: test.info().outputPath(`waiting-details-ru-${scheme}.png`), fullPage: true });
  }

  // Refilled (a deposit to the custody is as good): it is sent, and the reason is gone.
  await node.send(address, '1');
  await mineUntil(node, async () => (await node.received(to)) === 19_900_000n, 90_000);
  await page.goto('/home/asset/LTC');
  await expect(page.getByTestId('pending-reason')).toHaveCount(0, { timeout: 20_000 });
});
