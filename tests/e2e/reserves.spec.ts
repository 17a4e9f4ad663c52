import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import ru from '../../i18n/ru.json' with { type: 'json' };
import { formatUnits } from '../../src/lib/amount.ts';
import { test, expect, signUpAndLogIn } from './fixtures.ts';
import { addressOf, available, pageApiUser } from './send-helpers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Issue 36 item 1's walk: a user with a balance, a proof published from the terminal beside the running server
 * (`npm run custody -- reserves`), then Settings → Proof of reserves shows its date, the totals and "Your balances are
 * included" (checked in the browser from the user's leaf), and the public page /reserves shows the root and totals.
 */
test.use({ appEnv: { LOG_LEVEL: 'info', DEVNET_BLOCK_MS: '300', CONFIRMATIONS: 'BITCOIN:1', RATES_WALK_MS: '0', WORKER_POLL_MS: '200' } });

type Proof = { id: string; asOf: string; liabilities: { root: { hash: string }; leaves: number; totals: Record<string, string> } };

test('a user with a balance sees it included in the published proof, and the public page shows the proof', async ({ page, app }) => {
  test.setTimeout(120_000);
  await signUpAndLogIn(page, app);
  const user = await pageApiUser(page);
  const address = await addressOf(page, user, 'BTC');
  expect((await page.request.post('/sandbox/devnet/deposit', { data: { currency: 'BTC', address, amount: '0.0123' } })).status()).toBe(201);
  await expect.poll(() => available(page, user, 'BTC'), { timeout: 30_000 }).toBe('0.0123');

  // Before any proof: the screen says so.
  await page.goto('/settings');
  await page.getByTestId('settings-reserves').click();
  await expect(page).toHaveURL(/\/settings\/reserves$/);
  await expect(page.getByTestId('reserves-none')).toHaveText('No proof of reserves has been published yet.');

  const published = spawnSync('npm', ['run', '--silent', 'custody', '--', 'reserves'], { cwd: ROOT, env: { ...process.env, ...app.env }, encoding: 'utf8', timeout: 60_000 });
  expect(published.status, published.stderr).toBe(0);
  expect(published.stdout).toMatch(/^published proof of reserves \S+ at /m);
  const proof = (await (await page.request.get('/api/reserves')).json()) as Proof;
  expect(published.stdout).toContain(`root ${proof.liabilities.root.hash} over ${proof.liabilities.leaves} users`);
  // Every user in the database is a leaf; this worker's other tests may have made some, so the total is at least ours.
  expect(BigInt(proof.liabilities.totals.BTC ?? '0')).toBeGreaterThanOrEqual(1_230_000n);

  await page.reload();
  await expect(page.getByRole('heading', { name: 'Proof of reserves' })).toBeVisible();
  await expect(page.getByTestId('reserves-date')).toHaveText(/^Made on [A-Z][a-z]{2} \d{1,2}/);
  await expect(page.getByTestId('reserves-yes')).toContainText('✓ Your balances are included');
  await expect(page.getByRole('region', { name: 'Your balances in the proof' })).toContainText(/BTC\s*0\.0123/);
  const totals = page.getByTestId('reserves-totals');
  await expect(totals).toContainText('Owed to users');
  const btcRow = new RegExp(`^BTC${formatUnits(BigInt(proof.liabilities.totals.BTC ?? '0'), 8).replace('.', '\\.')}—$`);
  // The devnet holds nothing on a chain to sign: its holdings are a dash.
  await expect(totals.locator('span.grid').filter({ hasText: /^BTC\d/ })).toHaveText(btcRow);
  await expect(page.getByText(proof.liabilities.root.hash)).toBeVisible();

  // The public page, as anyone opens it: the same root and totals, no sign-in needed.
  await page.getByTestId('reserves-public').click();
  await expect(page).toHaveURL(/\/reserves$/);
  await expect(page.getByTestId('reserves-root')).toHaveText(proof.liabilities.root.hash);
  await expect(page.getByTestId('reserves-date')).toContainText(`Users in the tree: ${proof.liabilities.leaves}`);
  await expect(page.getByTestId('reserves-totals').locator('tr').filter({ hasText: /^BTC\d/ })).toHaveText(btcRow);
  await expect(page.getByTestId('reserves-addresses')).toContainText('BITCOIN: simulated network, nothing on a chain');

  // In Russian.
  await page.goto('/settings/select-language');
  await page.getByRole('radio', { name: 'Русский' }).click();
  await expect(page).toHaveURL(/\/settings$/);
  await page.getByTestId('settings-reserves').click();
  await expect(page.getByRole('heading', { name: ru.reserves_title })).toBeVisible();
  await expect(page.getByTestId('reserves-yes')).toContainText(ru.reserves_included);
});
