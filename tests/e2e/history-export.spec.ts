import { readFile } from 'node:fs/promises';
import { test, expect, signUpAndLogIn } from './fixtures.ts';
import { addressOf, pageApiUser } from './send-helpers.ts';

/**
 * Issue 36 item 4's walk: a devnet deposit is credited, then the asset screen's "Export history (CSV)" with a range of
 * days downloads the history as a file, whose deposit row has the exact amount (a point, never the locale's comma) and
 * the transaction's hash.
 */
test.use({ appEnv: { LOG_LEVEL: 'info', DEVNET_BLOCK_MS: '300', CONFIRMATIONS: 'BITCOIN:1', RATES_WALK_MS: '0', WORKER_POLL_MS: '200' } });

const HEADER = 'date_utc,type,direction,state,asset,amount,fee,fee_asset,fiat_value,fiat_currency,network,hash,from_address,to_address';

test('the asset screen exports a range of its history as a CSV download', async ({ page, app }) => {
  test.setTimeout(90_000);
  await signUpAndLogIn(page, app);
  const user = await pageApiUser(page);
  const address = await addressOf(page, user, 'BTC');
  const sent = await page.request.post('/sandbox/devnet/deposit', { data: { currency: 'BTC', address, amount: '0.0123' } });
  expect(sent.status()).toBe(201);
  const { txHash } = (await sent.json()) as { txHash: string };
  expect(txHash).toMatch(/^[0-9a-f]{64}$/);

  await page.goto('/home/asset/BTC');
  await expect(page.getByTestId('history-item').first()).toHaveAttribute('data-state', 'COMPLETED', { timeout: 30_000 });

  // The export: a range of UTC days, today only, then the download the signed link starts.
  const today = new Date().toISOString().slice(0, 10);
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  await page.getByText('Export history (CSV)').click();
  await page.getByTestId('history-export-from').fill(yesterday);
  await page.getByTestId('history-export-to').fill(today);
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
  expect(download.suggestedFilename()).toBe(`history-BTC-${yesterday}-${today}.csv`);
  const text = await readFile(await download.path(), 'utf8');
  const [header, ...rows] = text.split('\r\n').filter((line) => line !== '');
  expect(header).toBe(HEADER);
  expect(rows).toHaveLength(1);
  const row = Object.fromEntries(HEADER.split(',').map((name, i) => [name, rows[0]?.split(',')[i]]));
  expect(row).toMatchObject({ type: 'DEPOSIT', state: 'COMPLETED', asset: 'BTC', amount: '0.0123', network: 'BITCOIN', hash: txHash, to_address: address });
  expect(row.date_utc).toMatch(new RegExp(`^${today}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$`));
  // The page stays where it was: the download left no blank page behind.
  await expect(page).toHaveURL(/\/home\/asset\/BTC$/);
});
