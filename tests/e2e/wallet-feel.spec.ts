import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Locator, Page, Route } from '@playwright/test';
import { test, expect as baseExpect, logIn, signUpAndLogIn } from './fixtures.ts';
import { addressOf, apiUser, available } from './send-helpers.ts';

/**
 * Issue 33 item 4 (flows that feel like a wallet) and item 3's clock: inside the send, swap, buy, sell and passcode
 * flows no bottom navigation; on every review screen the main action pinned at the foot of a 390×844 screen without
 * scrolling; every address in groups of four in the app's font with its first and last four characters emphasised;
 * one h1 on each main screen (axe agrees); skeletons while home's assets, the history and the address book load; and
 * one clock per language in history and details.
 */
test.use({ appEnv: { LOG_LEVEL: 'info', DEVNET_BLOCK_MS: '300', CONFIRMATIONS: 'BITCOIN:1', RATES_WALK_MS: '0', WORKER_POLL_MS: '200', SELL_MIN_RUB: '1000', SELL_MAX_RUB: '300000' } });

// Screens load lazily and the machine may be busy: each step gets up to 30 s.
const expect = baseExpect.configure({ timeout: 30_000 });

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SBER_CARD = '4276380000000001';

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

/** One h1 on the screen, and axe finds nothing wrong with its headings. */
async function oneHeading(page: Page, screen: string): Promise<void> {
  await expect(page.locator('h1'), `${screen}: one h1`).toHaveCount(1);
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const violations = () =>
    page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: { id: string }[] }> } }).axe;
      const result = await axe.run(document, { runOnly: { type: 'rule', values: ['page-has-heading-one', 'heading-order', 'empty-heading'] } });
      return result.violations.map((violation) => violation.id);
    });
  // Asked until the screen has settled: a lazy screen's URL changes a moment before its DOM replaces the last one's.
  await expect.poll(violations, { message: `${screen}: axe's heading rules`, timeout: 10_000 }).toEqual([]);
}

/** The screen's main action at the foot of the 390×844 screen, whole and visible from the top of the screen. */
async function pinnedAtTheFoot(page: Page, shot?: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  const bar = page.getByTestId('main-action-bar');
  await expect(bar).toBeVisible();
  await expect(bar.getByTestId('main-action')).toBeInViewport({ ratio: 1 });
  const box = await bar.boundingBox();
  expect(box && Math.round(box.y + box.height)).toBe(844);
  expect(await page.evaluate(() => window.scrollY)).toBe(0);
  // For a person to look at (the test's output folder): review screens are not in `npm run screenshots`.
  if (shot) await page.screenshot({ path: test.info().outputPath(`${shot}.png`) });
}

/** An address as the wallet sets it: the address itself as text, in groups of four, its first and last four emphasised, not monospaced. */
async function grouped(locator: Locator, address: string, short = false): Promise<void> {
  await expect(locator).toHaveText(short ? `${address.slice(0, 8)}...${address.slice(-4)}` : address);
  const groups = locator.locator('.address-group');
  await expect(groups).toHaveCount(short ? 4 : Math.ceil(address.length / 4));
  await expect(groups.first()).toHaveText(address.slice(0, 4));
  expect((await locator.locator('strong').allTextContents()).join('')).toBe(`${address.slice(0, 4)}${address.slice(-4)}`);
  const font = await groups.first().evaluate((element) => getComputedStyle(element).fontFamily);
  expect(font).toMatch(/Inter/);
  expect(font).not.toMatch(/mono/i);
  // The groups are apart on screen, though the text has no space in it.
  const first = await groups.nth(0).boundingBox();
  const second = await groups.nth(1).boundingBox();
  expect(first && second && (second.x > first.x + first.width + 2 || second.y > first.y)).toBe(true);
}

test('flows without the bottom navigation, pinned main actions, grouped addresses, one h1 per screen, one clock per language', async ({ page, app }) => {
  test.setTimeout(480_000);
  const alice = await apiUser(app);
  const bob = await apiUser(app);
  const bobAddress = await addressOf(page, bob, 'BTC');
  const aliceAddress = await addressOf(page, alice, 'BTC');
  await addressOf(page, alice, 'USDT_TRX');
  expect((await page.request.post('/sandbox/devnet/deposit', { data: { currency: 'BTC', address: aliceAddress, amount: '0.05' } })).status()).toBe(201);
  await expect.poll(() => available(page, alice, 'BTC'), { timeout: 30_000 }).toBe('0.05');
  await logIn(page, alice.email);
  await page.getByRole('button', { name: 'Not now' }).click();

  // The main screens: the navigation is there, one h1 each.
  await expect(page.getByTestId('asset-row').filter({ hasText: 'Bitcoin' })).toContainText('0.05');
  await expect(nav(page)).toBeVisible();
  await oneHeading(page, 'home');
  await page.goto('/settings');
  await expect(nav(page)).toBeVisible();
  await oneHeading(page, 'settings');
  await page.goto('/settings/address-book');
  await expect(page.getByTestId('address-book-empty')).toBeVisible();
  await oneHeading(page, 'address book');
  await page.goto('/select-asset/send');
  await oneHeading(page, 'select asset');
  await page.goto('/manage-assets');
  await oneHeading(page, 'manage assets');

  // The asset: its deposit address shortened in the same groups; receive shows the whole address grouped.
  await page.goto('/home/asset/BTC');
  await expect(nav(page)).toBeVisible();
  await grouped(page.getByTestId('copy-address').locator('.address'), aliceAddress, true);
  await oneHeading(page, 'asset');
  await page.getByRole('link', { name: 'Receive', exact: true }).click();
  await grouped(page.getByTestId('receive-address'), aliceAddress);
  await oneHeading(page, 'receive');

  // History and details read English's 12-hour clock; the details end with the time the row shows. The deposit's
  // details show the receiving address grouped.
  await page.goto('/home/asset/BTC');
  const time = page.getByTestId('history-time').first();
  await expect(time).toHaveText(/^\d{1,2}:\d\d [AP]M$/);
  const rowTime = (await time.textContent()) ?? '';
  await page.getByTestId('history-item').first().click();
  await expect(page.getByTestId('detail-tx_detail_date').locator('dd')).toHaveText(new RegExp(`^[A-Z][a-z]{2} \\d{1,2}, ${rowTime}$`));
  await grouped(page.getByTestId('detail-tx_detail_receiver').locator('dd'), aliceAddress);
  await oneHeading(page, 'transaction');

  // Send: no navigation in the form or the review; the review's Confirm pinned at the foot; the recipient grouped.
  await page.goto('/home/asset/BTC');
  await page.getByRole('link', { name: 'Send' }).click();
  await expect(page).toHaveURL(/\/send$/);
  await expect(page.getByTestId('send-amount')).toBeVisible();
  await expect(nav(page)).toHaveCount(0);
  await oneHeading(page, 'send');
  await page.getByTestId('send-amount').fill('0.01');
  await page.getByTestId('send-address').fill(bobAddress);
  await pinnedAtTheFoot(page);
  await page.getByRole('button', { name: 'Continue' }).click();
  await expect(page).toHaveURL(/\/send\/review$/);
  await expect(nav(page)).toHaveCount(0);
  await pinnedAtTheFoot(page, 'send-review');
  await grouped(page.getByTestId('review-recipient'), bobAddress);
  await oneHeading(page, 'send review');
  await page.getByRole('button', { name: 'Confirm' }).click();
  await expect(page).toHaveURL(/\/send\/progress$/);
  await expect(page.getByTestId('send-progress')).toHaveAttribute('data-state', 'COMPLETED');
  await expect(nav(page)).toHaveCount(0);

  // Swap: the order and its review, no navigation, Confirm pinned.
  await page.goto('/home');
  await page.getByRole('button', { name: 'Swap' }).click();
  await expect(page).toHaveURL(/\/swap\/order$/);
  await expect(nav(page)).toHaveCount(0);
  await oneHeading(page, 'swap');
  await page.getByTestId('swap-source-amount').fill('0.004');
  await expect(page.getByTestId('swap-destination-amount')).not.toHaveValue('');
  await page.getByRole('button', { name: 'Continue' }).click();
  await expect(page).toHaveURL(/\/swap\/order\/review$/);
  await expect(nav(page)).toHaveCount(0);
  await pinnedAtTheFoot(page, 'swap-review');
  await expect(page.getByTestId('main-action')).toHaveText('Confirm swap');
  await oneHeading(page, 'swap review');
  await page.getByRole('link', { name: 'Back' }).click();
  await expect(page).toHaveURL(/\/swap\/order$/);

  // Sell: amount, card, review; no navigation, Confirm pinned.
  await page.goto('/sell/get');
  await expect(page).toHaveURL(/\/sell\/pay$/);
  await expect(nav(page)).toHaveCount(0);
  await page.getByTestId('sell-choice').filter({ hasText: 'Bitcoin' }).first().click();
  await expect(page).toHaveURL(/\/sell\/order$/);
  await expect(nav(page)).toHaveCount(0);
  await page.getByTestId('sell-amount-input').fill('0.001');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByTestId('sell-card-input').pressSequentially(SBER_CARD);
  await expect(page.getByTestId('sell-card-status')).toHaveText('SBR · VISA');
  await page.getByRole('button', { name: 'Continue' }).click();
  await expect(page).toHaveURL(/\/sell\/order\/review$/);
  await expect(nav(page)).toHaveCount(0);
  await pinnedAtTheFoot(page, 'sell-review');
  await oneHeading(page, 'sell review');

  // Buy with a card: the order and its review; no navigation, Pay pinned.
  await page.goto('/home/buy-sell');
  await expect(nav(page)).toHaveCount(0);
  await oneHeading(page, 'buy or sell');
  await page.getByTestId('buy-entry').click();
  await expect(page).toHaveURL(/\/buy\/get$/);
  await expect(nav(page)).toHaveCount(0);
  await page.getByTestId('buy-coin').first().click();
  await expect(page).toHaveURL(/\/buy\/pay$/);
  await page.getByTestId('buy-fiat').filter({ hasText: 'USD' }).first().click();
  await expect(page).toHaveURL(/\/buy\/order$/);
  await expect(nav(page)).toHaveCount(0);
  await page.getByTestId('buy-from-amount').fill('100');
  await expect(page.getByTestId('buy-to-amount')).not.toHaveValue('');
  await page.getByRole('button', { name: 'Review order' }).click();
  await expect(page).toHaveURL(/\/buy\/order\/review$/);
  await expect(nav(page)).toHaveCount(0);
  await pinnedAtTheFoot(page, 'buy-review');
  await oneHeading(page, 'buy review');

  // The passcode: its settings screen has the navigation, setting one up does not.
  await page.goto('/settings/passcode');
  await expect(nav(page)).toBeVisible();
  await oneHeading(page, 'passcode');
  await page.getByTestId('passcode-enable').click();
  await expect(page).toHaveURL(/\/settings\/passcode\/enable$/);
  await expect(page.getByTestId('passcode-prompt')).toBeVisible();
  await expect(nav(page)).toHaveCount(0);
  await oneHeading(page, 'passcode enable');

  // In Russian both read the 24-hour clock.
  await page.goto('/settings/select-language');
  await page.getByRole('radio', { name: 'Русский' }).click();
  await page.goto('/home/asset/BTC');
  const ruTime = page.getByTestId('history-time').first();
  await expect(ruTime).toHaveText(/^\d\d:\d\d$/);
  const ruRowTime = (await ruTime.textContent()) ?? '';
  await page.getByTestId('history-item').first().click();
  await expect(page.getByTestId('detail-tx_detail_date').locator('dd')).toHaveText(new RegExp(`^\\d{1,2} \\S+, ${ruRowTime}$`));
});

/** Holds the requests matching `url` until the returned release is called. */
async function hold(page: Page, url: string): Promise<() => Promise<void>> {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route(url, async (route: Route) => {
    await held;
    await route.continue();
  });
  // Released for good: later requests pass at once (unrouting while one waits would answer it twice).
  return async () => release();
}

test('skeletons while home, the history and the address book load', async ({ page, app }) => {
  test.setTimeout(180_000);
  // Home: the balances held back show the assets' outline, then the screen.
  const balances = await hold(page, '**/api/*/asset');
  await signUpAndLogIn(page, app);
  await expect(page.getByTestId('asset-list-skeleton')).toBeVisible();
  await expect(page.getByTestId('asset-list-skeleton').locator('.skeleton').first()).toBeVisible();
  await page.screenshot({ path: test.info().outputPath('home-skeleton.png') });
  await oneHeading(page, 'home while loading');
  await balances();
  await expect(page.getByTestId('home-empty')).toBeVisible();
  await expect(page.getByTestId('asset-list-skeleton')).toHaveCount(0);
  await page.getByRole('button', { name: 'Add most common assets' }).click();
  await page.getByRole('button', { name: 'Not now' }).click();
  await expect(page.getByTestId('asset-row').first()).toBeVisible();

  // The history: its outline until the transactions come.
  const history = await hold(page, '**/api/*/asset/transactions');
  await page.goto('/home/asset/BTC');
  await expect(page.getByTestId('history-skeleton')).toBeVisible();
  await page.screenshot({ path: test.info().outputPath('history-skeleton.png') });
  await expect(page.getByTestId('history-empty')).toHaveCount(0);
  await history();
  await expect(page.getByTestId('history-empty')).toBeVisible();
  await expect(page.getByTestId('history-skeleton')).toHaveCount(0);

  // The address book: its outline until the entries come.
  const book = await hold(page, '**/api/*/address-book/all');
  await page.goto('/settings/address-book');
  await expect(page.getByTestId('address-book-skeleton')).toBeVisible();
  await book();
  await expect(page.getByTestId('address-book-empty')).toBeVisible();
  await expect(page.getByTestId('address-book-skeleton')).toHaveCount(0);
});
