import type { Browser, Page } from '@playwright/test';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { mnemonicToSeedSync } from '@scure/bip39';
import { test, expect, logIn, newEmail, outboxCode, PASSWORD, signUpConfirmed, type TestApp } from './fixtures.ts';
import { addressOf, apiUser, available } from './send-helpers.ts';
import { signIn } from '../support/auth.ts';
import { deriveAddress } from '../../src/server/domain/addresses.ts';
import { COMMAND_LINE } from '../../src/server/domain/operator/actor.ts';
import { grantRole } from '../../src/server/domain/operator/roles.ts';

/**
 * Issue 30 item 1: the operator console walked in Chromium at desktop width. Roles come from the command line's
 * function; operators sign in through the same provider with the console's own client.
 */
test.use({ viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false });
// The review queue's walk: BTC at the development reference price, a review above $100 (withdrawal-review.spec.ts).
test.use({ appEnv: { DEVNET_BLOCK_MS: '1500', RATES_WALK_MS: '0', WORKER_POLL_MS: '200', WITHDRAWAL_FEES: JSON.stringify({ BTC: '0.0001' }), WITHDRAWAL_REVIEW_ABOVE_USD: '100' } });

const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');

async function newUser(page: Page, app: TestApp): Promise<string> {
  const email = newEmail('op');
  await signUpConfirmed(page, { email, password: PASSWORD }, outboxCode(app));
  return email;
}

/** Content-Security-Policy violations in the operators' own browser contexts (the fixture watches only `page`'s). */
const violations: string[] = [];

/** Opens the console in a context of its own and signs in on the provider's e-mail page. */
async function operatorPage(browser: Browser, app: TestApp, email: string): Promise<Page> {
  const context = await browser.newContext({ baseURL: app.url, viewport: { width: 1280, height: 800 } });
  context.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(`${message.location().url}: ${message.text()}`);
  });
  const page = await context.newPage();
  await page.goto('/operator');
  await page.getByTestId('sign-in').click();
  await page.waitForURL('**/auth/login/email?uid=*');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL((url) => url.pathname === '/operator');
  return page;
}

/** The console's own access token, as the page keeps it. */
async function consoleToken(page: Page): Promise<string> {
  return page.evaluate(() => {
    for (let i = 0; i < sessionStorage.length; i += 1) {
      const key = sessionStorage.key(i) ?? '';
      if (key.startsWith('operator.oidc.user:')) return (JSON.parse(sessionStorage.getItem(key) ?? '{}') as { access_token: string }).access_token;
    }
    return '';
  });
}

test('the operator console: roles, search by each key, freeze, four eyes, refusals', async ({ page, app, browser }) => {
  test.setTimeout(120_000);
  const pool = new pg.Pool({ connectionString: app.env.DATABASE_URL, max: 2 });
  try {
    const [finance1, finance2, support, customer] = [await newUser(page, app), await newUser(page, app), await newUser(page, app), await newUser(page, app)];
    // Roles are granted as `npm run operator -- grant` does.
    await grantRole(pool, COMMAND_LINE, { email: finance1, role: 'admin' });
    await grantRole(pool, COMMAND_LINE, { email: finance2, role: 'finance' });
    await grantRole(pool, COMMAND_LINE, { email: support, role: 'support' });

    const ids = (await pool.query<{ userId: string; accountId: string }>('SELECT u.id AS "userId", a.id AS "accountId" FROM users u JOIN wallet_accounts a ON a.user_id = u.id WHERE u.email = $1', [customer])).rows[0];
    if (!ids) throw new Error('no customer');
    const stamp = Date.now();
    const address = `ltc1qoperatorwalk${stamp}`;
    await pool.query(`INSERT INTO telegram_accounts (telegram_id, user_id, username) VALUES ($1, $2, 'walker')`, [stamp % 1_000_000_000, ids.userId]);
    await pool.query(`INSERT INTO deposit_addresses (network, address, wallet_account_id, derivation_index) VALUES ('LITECOIN', $1, $2, 99999)`, [address, ids.accountId]);
    await pool.query(`INSERT INTO chain_deposits (network, tx_hash, output_index, currency, to_address, amount, wallet_account_id, confirmations_required) VALUES ('LITECOIN', $1, 0, 'LTC', $2, 1000, $3, 6)`, [`deptx${stamp}`, address, ids.accountId]);
    await pool.query(
      `INSERT INTO withdrawals (wallet_account_id, idempotency_key, kind, state, currency, network, amount, fee, to_address, tx_hash) VALUES ($1, $2, 'EXTERNAL', 'BROADCAST', 'LTC', 'LITECOIN', 1000, 10, 'ltc1qelsewhere', $3)`,
      [ids.accountId, `walk-${stamp}`, `wdtx${stamp}`],
    );

    const admin = await operatorPage(browser, app, finance1);
    await expect(admin.getByTestId('operator-who')).toHaveText(`${finance1} · admin`);

    // Find the customer by each key.
    const keys: [string, RegExp][] = [
      [customer, /e-mail/], [ids.userId, /user id/], [ids.accountId, /account id/], [String(stamp % 1_000_000_000), /Telegram id/],
      [address, /deposit address/], [`deptx${stamp}`, /deposit transaction/], [`wdtx${stamp}`, /withdrawal transaction/],
    ];
    for (const [key, matchedBy] of keys) {
      await admin.getByTestId('search-query').fill(key);
      await admin.getByTestId('search-submit').click();
      await expect(admin.getByTestId('search-hits').locator('tbody tr')).toHaveCount(1);
      await expect(admin.getByTestId('search-hit')).toHaveText(customer);
      await expect(admin.getByTestId('search-hits')).toContainText(matchedBy);
    }

    // The user view: freeze and unfreeze with a reason.
    await admin.getByTestId('search-hit').click();
    await expect(admin.getByTestId('user-view')).toBeVisible();
    await expect(admin.getByTestId('user-view')).toContainText('walker');
    await admin.getByTestId('freeze-reason').fill('card fraud report');
    await admin.getByTestId('freeze').click();
    await expect(admin.getByTestId('freeze-state')).toContainText('frozen');
    expect((await pool.query('SELECT withdrawals_frozen_at IS NOT NULL AS frozen FROM wallet_accounts WHERE id = $1', [ids.accountId])).rows[0]).toEqual({ frozen: true });
    await admin.getByTestId('freeze-reason').fill('cleared by the bank');
    await admin.getByTestId('unfreeze').click();
    await expect(admin.getByTestId('freeze-state')).toHaveText('Withdrawals are open.');

    // A credit proposed by one operator...
    await admin.getByTestId('adjustment-currency').fill('BTC');
    await admin.getByTestId('adjustment-amount').fill('0.25');
    await admin.getByTestId('adjustment-reason').fill('lost deposit, checked on chain');
    await admin.getByTestId('adjustment-propose').click();
    await expect(admin.getByText(/waits for another operator/)).toBeVisible();
    await admin.getByTestId('nav-adjustments').click();
    await expect(admin.getByTestId('adjustment-rows')).toContainText('Your proposal');

    // ...applied when a second one approves it.
    const second = await operatorPage(browser, app, finance2);
    await second.getByTestId('nav-adjustments').click();
    await expect(second.getByTestId('adjustment-rows')).toContainText(customer);
    await second.getByTestId('adjustment-approve').click();
    await expect(second.getByTestId('adjustments')).toContainText('Nothing here');
    await second.goto(`/operator/users/${ids.userId}`);
    await expect(second.getByTestId('balances')).toContainText('0.25');
    await second.getByTestId('nav-audit').click();
    await expect(second.getByTestId('audit-lines')).toContainText('adjustment.approve');
    await expect(second.getByTestId('audit-lines')).toContainText('withdrawals.freeze');

    // Russian and dark.
    await second.getByTestId('toggle-language').click();
    await expect(second.getByTestId('nav-audit')).toHaveText('Журнал действий');
    await second.getByTestId('toggle-theme').click();
    await expect(second.locator('html')).toHaveAttribute('data-theme', /dark|light/);

    // Support may look but not move money: no proposal form, and the gateway refuses it (403).
    const helper = await operatorPage(browser, app, support);
    await helper.goto(`/operator/users/${ids.userId}`);
    await expect(helper.getByTestId('freeze-state')).toBeVisible();
    await expect(helper.getByTestId('adjustment-propose')).toHaveCount(0);
    const refused = await helper.request.post('/api/operator/adjustments', {
      headers: { authorization: `Bearer ${await consoleToken(helper)}` },
      data: { account: ids.accountId, kind: 'CREDIT', currency: 'BTC', amount: '1', reason: 'support tries' },
    });
    expect([refused.status(), (await refused.json()).exceptionCode]).toEqual([403, 'FORBIDDEN']);

    // A user without a role: the console says so, and every operator route answers 403.
    const outsider = await operatorPage(browser, app, customer);
    await expect(outsider.getByTestId('refused')).toContainText('no operator role');
    const { accessToken } = await signIn(app.url, { email: customer, password: PASSWORD });
    const routes: [string, string][] = [
      ['GET', '/me'], ['GET', '/search?q=a'], ['GET', `/users/${ids.userId}`], ['GET', `/users/${ids.userId}/ledger`], ['POST', `/accounts/${ids.accountId}/freeze`], ['POST', `/accounts/${ids.accountId}/unfreeze`],
      ['GET', '/adjustments'], ['POST', '/adjustments'], ['POST', `/adjustments/${ids.userId}/approve`], ['POST', `/adjustments/${ids.userId}/reject`], ['GET', '/mail'], ['POST', '/mail/1/resend'],
      ['GET', '/stuck'], ['GET', '/audit'], ['GET', '/roles'], ['POST', '/roles'], ['POST', '/roles/revoke'],
      ['GET', '/reviews'], ['POST', `/reviews/${ids.userId}/approve`], ['POST', `/reviews/${ids.userId}/reject`], ['GET', '/unsealed'], ['POST', `/unsealed/${ids.userId}/reseal`],
    ];
    for (const [method, path] of routes) {
      const answer = await outsider.request.fetch(`/api/operator${path}`, { method, headers: { authorization: `Bearer ${accessToken}` }, data: method === 'POST' ? { reason: 'let me in' } : undefined });
      expect([path, answer.status()]).toEqual([path, 403]);
    }
    expect(violations, 'no Content Security Policy violation in the console').toEqual([]);
  } finally {
    await pool.query(`DELETE FROM withdrawals WHERE idempotency_key LIKE 'walk-%'`).catch(() => {});
    await pool.end();
  }
});

/** A customer with 0.05 BTC credited and a way to withdraw it to the outside seed's `index`th address ($650 per 0.01 BTC: held for review). */
async function customerWithBtc(page: Page, app: TestApp) {
  const customer = await apiUser(app);
  const deposit = await addressOf(page, customer, 'BTC');
  expect((await page.request.post('/sandbox/devnet/deposit', { data: { currency: 'BTC', address: deposit, amount: '0.05' } })).status()).toBe(201);
  await expect.poll(() => available(page, customer, 'BTC'), { timeout: 30_000 }).toBe('0.05');
  const withdraw = async (amount: string, index: number) => {
    const to = await deriveAddress(OUTSIDE_SEED, 'BITCOIN', index, 'mainnet');
    const sent = await page.request.post(`/api/${customer.accountId}/withdrawal`, {
      headers: { authorization: `Bearer ${customer.token}` },
      data: { currency: 'BTC', amount, depositAddress: to, idempotencyKey: randomUUID() },
    });
    expect(sent.status()).toBe(200);
    expect(await sent.json()).toMatchObject({ underReview: true });
    return to;
  };
  return { customer, withdraw };
}

/** A new finance operator's console, on the Review queue. */
async function financeOnReviews(page: Page, app: TestApp, browser: Browser, pool: pg.Pool): Promise<Page> {
  const financeEmail = await newUser(page, app);
  await grantRole(pool, COMMAND_LINE, { email: financeEmail, role: 'finance' });
  const finance = await operatorPage(browser, app, financeEmail);
  await finance.getByTestId('nav-reviews').click();
  return finance;
}

test('the review queue: a withdrawal approved goes on, another rejected ends Failed for its user', async ({ page, app, browser }) => {
  test.setTimeout(120_000);
  const pool = new pg.Pool({ connectionString: app.env.DATABASE_URL, max: 2 });
  try {
    const { customer, withdraw } = await customerWithBtc(page, app);
    // $650 and $130 at the reference price: both over the $100 threshold, both held.
    await withdraw('0.01', 0);
    await withdraw('0.002', 1);
    const stateOf = async (amount: bigint) =>
      (await pool.query<{ state: string; tx_hash: string | null }>('SELECT state, tx_hash FROM withdrawals WHERE wallet_account_id = $1 AND amount = $2', [customer.accountId, amount.toString()])).rows[0];

    const finance = await financeOnReviews(page, app, browser, pool);
    const rows = finance.getByTestId('review-rows').locator('tbody tr');
    await expect(rows).toHaveCount(2);
    await expect(rows.first()).toContainText(customer.email);
    await expect(rows.first()).toContainText('0.01 BTC');
    await expect(rows.first()).toContainText('$650.00');
    await expect(rows.first()).toContainText('above the review threshold');

    // Approved: it leaves the queue and the worker sends it.
    const approved = rows.filter({ hasText: '0.01 BTC' });
    await approved.getByTestId('review-reason').fill('known customer');
    await approved.getByTestId('review-approve').click();
    await expect(rows).toHaveCount(1);
    await expect.poll(async () => (await stateOf(1_000_000n))?.tx_hash ?? null, { timeout: 30_000 }).not.toBeNull();

    // Rejected: the button waits for a reason; then the queue is empty and the hold goes back.
    const rejected = rows.filter({ hasText: '0.002 BTC' });
    await expect(rejected.getByTestId('review-reject')).toBeDisabled();
    await rejected.getByTestId('review-reason').fill('address on a sanctions list');
    await rejected.getByTestId('review-reject').click();
    await expect(finance.getByTestId('reviews')).toContainText('No withdrawal waits for review');
    expect(await stateOf(200_000n)).toMatchObject({ state: 'FAILED', tx_hash: null });
    await expect.poll(() => available(page, customer, 'BTC'), { timeout: 30_000 }).toBe('0.04');

    // Both decisions are in the audit log, and in Russian the queue speaks Russian.
    await finance.getByTestId('nav-audit').click();
    await expect(finance.getByTestId('audit-lines')).toContainText('withdrawal.approve');
    await expect(finance.getByTestId('audit-lines')).toContainText('withdrawal.reject');
    await finance.getByTestId('toggle-language').click();
    await expect(finance.getByTestId('nav-reviews')).toHaveText('Очередь проверки');

    // The user sees the rejected one Failed, saying why.
    await logIn(page, customer.email);
    await page.goto('/home/asset/BTC');
    await page.locator('[data-testid=history-item][data-state=FAILED]').click();
    await expect(page.getByTestId('detail-tx_detail_status')).toContainText('Failed');
    await expect(page.getByTestId('detail-tx_detail_failure')).toContainText('declined after a review');
    expect(violations, 'no Content Security Policy violation in the console').toEqual([]);
  } finally {
    await pool.end();
  }
});

test('a withdrawal from before the approval seal waits until finance re-approves it in the console, then goes on once', async ({ page, app, browser }) => {
  test.setTimeout(120_000);
  const pool = new pg.Pool({ connectionString: app.env.DATABASE_URL, max: 2 });
  try {
    const { customer, withdraw } = await customerWithBtc(page, app);
    // Held for review ($650), then made what a withdrawal from before the seal looks like: on its way, with no seal.
    const to = await withdraw('0.01', 7);
    const row = async () => (await pool.query<{ id: string; state: string; tx_hash: string | null; sealed: boolean }>('SELECT id, state, tx_hash, approval_seal IS NOT NULL AS sealed FROM withdrawals WHERE wallet_account_id = $1', [customer.accountId])).rows[0];
    await pool.query(`UPDATE withdrawals SET state = 'PENDING', approval_seal = NULL WHERE wallet_account_id = $1`, [customer.accountId]);

    const finance = await financeOnReviews(page, app, browser, pool);
    await expect(finance.getByTestId('reviews')).toContainText('No withdrawal waits for review');
    const rows = finance.getByTestId('unsealed-rows').locator('tbody tr');
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toContainText(customer.email);
    await expect(rows.first()).toContainText('PENDING');
    await expect(rows.first()).toContainText('0.01 BTC');
    await expect(rows.first()).toContainText('0.0001 BTC');
    await expect(rows.first()).toContainText(to);
    // The worker has had its polls: the signer signs nothing unsealed.
    await page.waitForTimeout(1_000);
    expect(await row()).toMatchObject({ state: 'PENDING', tx_hash: null, sealed: false });

    await rows.first().getByTestId('unsealed-reason').fill('checked against the request of 2026-03-01');
    await rows.first().getByTestId('unsealed-reseal').click();
    await expect(finance.getByTestId('unsealed')).toContainText('None: every withdrawal on its way is sealed');
    await expect.poll(async () => (await row())?.tx_hash ?? null, { timeout: 30_000 }).not.toBeNull();
    expect((await row())?.sealed).toBe(true);
    // Once: a second re-approval is refused, and the decision is in the audit log.
    const again = await finance.request.post(`/api/operator/unsealed/${(await row())?.id}/reseal`, { headers: { authorization: `Bearer ${await consoleToken(finance)}` }, data: {} });
    expect([again.status(), (await again.json()).exceptionCode]).toEqual([409, 'WITHDRAWAL_NOT_UNSEALED']);
    await finance.getByTestId('nav-audit').click();
    await expect(finance.getByTestId('audit-lines')).toContainText('withdrawal.reseal');
    await finance.getByTestId('toggle-language').click();
    await finance.getByTestId('nav-reviews').click();
    await expect(finance.getByTestId('unsealed')).toContainText('Выводы из времени до печати одобрения');
    expect(violations, 'no Content Security Policy violation in the console').toEqual([]);
  } finally {
    await pool.end();
  }
});
