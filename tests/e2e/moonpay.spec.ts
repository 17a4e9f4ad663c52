import type { Page } from '@playwright/test';
import pg from 'pg';
import { MoonPay } from '@moonpay/moonpay-node';
import { encodeFunctionData, type Address, type Hex } from 'viem';
import { test as base, expect, signUpAndLogIn, type TestApp } from './fixtures.ts';
import { addressOf, available, pageApiUser, type ApiUser } from './send-helpers.ts';
import { anvilAccount, mintCall, startAnvil, tokenAbi, type Anvil } from '../support/anvil.ts';
import { auditFailures, TEST_MNEMONIC } from '../support/custody.ts';
import { deployTestTokens, type EvmTokens } from '../support/evm-custody.ts';
import { startMoonPayStandIn, type MoonPayStandIn } from '../support/moonpay-standin.ts';

/**
 * Issue 32 in Chromium: a new user buys USDC_ETH for 100 USD through MoonPay (its loopback stand-in, answering from
 * recorded answers). The screens show MoonPay's method, limits and estimate with its fees; the review sends the
 * browser to MoonPay's widget, whose link the SDK's own check accepts; the test then plays MoonPay: it sends the USDC
 * from an anvil account (a USDC-like token) to the user's deposit address and delivers the signed webhook, in either
 * order. One Buy item, the balance credited once, the ledger audit green. A failed payment ends Failed with its
 * reason in the buyer's words; MoonPay not answering makes the buy entry say so instead of spinning.
 */
type MoonPayWorker = { anvil: Anvil; tokens: EvmTokens; moonpay: MoonPayStandIn };
const USDC = 10n ** 6n;

const test = base.extend<object, MoonPayWorker>({
  anvil: [
    // eslint-disable-next-line no-empty-pattern -- Playwright reads a fixture's dependencies from its first parameter: none here.
    async ({}, use) => {
      const anvil = await startAnvil();
      await use(anvil);
      anvil.stop();
    },
    { scope: 'worker' },
  ],
  tokens: [
    async ({ anvil }, use) => {
      const tokens = await deployTestTokens(anvil);
      // MoonPay's own wallet, in the test: anvil's funded account holds the USDC it pays out.
      await anvil.send({ to: tokens.USDC_ETH, data: mintCall(anvilAccount.address, 1_000_000n * USDC) });
      await use(tokens);
    },
    { scope: 'worker' },
  ],
  moonpay: [
    // eslint-disable-next-line no-empty-pattern -- Playwright reads a fixture's dependencies from its first parameter: none here.
    async ({}, use) => {
      const standIn = await startMoonPayStandIn();
      await use(standIn);
      await standIn.close();
    },
    { scope: 'worker' },
  ],
  appEnv: [
    async ({ anvil, tokens, moonpay }, use) =>
      use({
        LOG_LEVEL: 'info',
        WALLET_SEED: TEST_MNEMONIC,
        CHAIN_ENV: 'regtest',
        ETHEREUM_RPC_URL: anvil.url,
        ETHEREUM_TOKENS: JSON.stringify(tokens),
        CONFIRMATIONS: 'ETHEREUM:3',
        RATES_WALK_MS: '0',
        WORKER_POLL_MS: '200',
        ...moonpay.env({ MOONPAY_TIMEOUT_MS: '2000' }),
      }),
    { scope: 'worker' },
  ],
});

const transferCall = (to: Address, units: bigint): Hex => encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [to, units] });

/** /buy/get → /buy/pay (USD) → /buy/order for 100 USD → review → MoonPay's widget: the order's id and the link. */
async function buyOnMoonPay(page: Page, moonpay: MoonPayStandIn): Promise<{ orderId: string; link: URL }> {
  await page.goto('/buy/get');
  await expect(page.getByTestId('buy-coin')).toHaveCount(1);
  await expect(page.getByTestId('buy-coin')).toHaveAttribute('data-currency', 'USDC_ETH');
  await page.getByTestId('buy-coin').click();
  // MoonPay's IP check places the buyer in the US: USD first.
  await expect(page.getByTestId('buy-fiat')).toHaveCount(2);
  await expect(page.getByTestId('buy-fiat').first()).toHaveAttribute('data-currency', 'USD');
  await page.getByTestId('buy-fiat').first().click();
  await expect(page).toHaveURL(/\/buy\/order$/);
  await page.getByTestId('buy-from-amount').fill('100');
  await expect(page.getByTestId('buy-to-amount')).toHaveValue('95.40184');
  await page.getByRole('button', { name: 'Review order' }).click();
  await expect(page).toHaveURL(/\/buy\/order\/review$/);
  await page.getByRole('button', { name: 'Continue to payment' }).click();
  await page.waitForURL(`${moonpay.url}/widget?**`);
  const link = new URL(page.url());
  // MoonPay's widget, signed with the secret key: the SDK's own check says so.
  expect(new MoonPay(moonpay.keys.secretKey, { debug: false }).url.isSignatureValid(page.url())).toBe(true);
  return { orderId: link.searchParams.get('externalTransactionId') ?? '', link };
}

/** The signed webhook MoonPay sends for the order's transaction as it now stands. */
async function deliver(app: TestApp, moonpay: MoonPayStandIn, type: 'transaction_updated' | 'transaction_failed', set: Parameters<MoonPayStandIn['transaction']>[0]) {
  const answer = await moonpay.deliver(`${app.url}/api/webhooks/moonpay`, moonpay.webhookBody(type, moonpay.transaction(set)));
  expect(answer.status).toBe(200);
  return answer.body.outcome;
}

async function auditGreen(app: TestApp): Promise<void> {
  const pool = new pg.Pool({ connectionString: app.env.DATABASE_URL, max: 1 });
  try {
    expect(await auditFailures(pool)).toEqual([]);
  } finally {
    await pool.end();
  }
}

/** The user's page and API identity, the USDC_ETH asset added, and its deposit address. */
async function newBuyer(page: Page, app: TestApp): Promise<{ user: ApiUser; address: Address }> {
  await signUpAndLogIn(page, app);
  const user = await pageApiUser(page);
  const address = (await addressOf(page, user, 'USDC_ETH')) as Address;
  expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
  return { user, address };
}

test.describe('buying with a card through MoonPay', () => {
  test('buys USDC_ETH for 100 USD on its screens and widget; the coins come first, the webhook later: one Buy item, credited once', async ({ page, app, anvil, tokens, moonpay }) => {
    test.setTimeout(120_000);
    await signUpAndLogIn(page, app);
    const user = await pageApiUser(page);
    await page.getByRole('button', { name: 'Add most common assets' }).click();
    await page.getByRole('button', { name: 'Not now' }).click();

    // Home → Buy/Sell: buying is on, through MoonPay.
    await page.getByRole('link', { name: 'Buy/Sell' }).click();
    await expect(page.getByTestId('buy-entry')).toHaveAttribute('href', '/buy/get');
    await expect(page.getByTestId('buy-entry')).not.toContainText('Unavailable');
    await page.getByTestId('buy-entry').click();

    // /buy/get lists the USDC MoonPay sells on our Ethereum; picking it adds it to the account.
    await expect(page.getByTestId('buy-coin')).toHaveCount(1);
    await page.getByTestId('buy-coin').click();
    await expect(page.getByTestId('buy-fiat').first()).toHaveAttribute('data-currency', 'USD');
    await page.getByTestId('buy-fiat').first().click();
    const address = (await addressOf(page, user, 'USDC_ETH')) as Address;

    // /buy/order: MoonPay's limits bound the amount; its estimate fills the other side.
    const review = page.getByRole('button', { name: 'Review order' });
    await page.getByTestId('buy-from-amount').fill('5');
    await expect(page.getByTestId('buy-error')).toHaveText('Min 20 - max 12,000 USD');
    await expect(review).toBeDisabled();
    await page.getByTestId('buy-from-amount').fill('100');
    await expect(page.getByTestId('buy-to-amount')).toHaveValue('95.40184');
    await expect(page.getByTestId('buy-error')).toHaveText('');
    await expect(page.getByTestId('buy-limits')).toContainText('Min 20 - max 12,000 USD');
    await expect(page.getByTestId('buy-method-link')).toContainText('Bank card');
    await page.getByTestId('buy-method-link').click();

    // /buy/method: MoonPay's method, its fiat amount and its limits.
    await expect(page.getByTestId('buy-method-item')).toHaveCount(1);
    await expect(page.getByTestId('buy-method-item')).toContainText('Bank card');
    await expect(page.getByTestId('buy-method-item')).toContainText('$100.00');
    await expect(page.getByTestId('buy-method-limits')).toHaveText('Min 20 - max 12,000 USD');
    await page.getByTestId('buy-method-item').click();
    await review.click();

    // The review says plainly that the USDC is an estimate and which fees are in the 100 USD.
    await expect(page.getByTestId('buy-review-pay')).toContainText('$100.00');
    await expect(page.getByTestId('buy-review-get')).toContainText('You get (estimate)');
    await expect(page.getByTestId('buy-review-get')).toContainText('≈ 95.4');
    await expect(page.getByTestId('buy-review-fees')).toHaveText('Fees includedprovider $3.99, network $0.57');
    await expect(page.getByTestId('buy-review-estimate')).toHaveText(/^The USDC amount is an estimate: the card provider fixes its price when you pay on its page\./);
    await page.getByRole('button', { name: 'Continue to payment' }).click();

    // MoonPay's widget, signed, for the user's own deposit address, the amount, the coin and our order.
    await page.waitForURL(`${moonpay.url}/widget?**`);
    expect(new MoonPay(moonpay.keys.secretKey, { debug: false }).url.isSignatureValid(page.url())).toBe(true);
    const link = new URL(page.url());
    expect(Object.fromEntries(link.searchParams)).toMatchObject({ walletAddress: address, currencyCode: 'usdc', baseCurrencyCode: 'usd', baseCurrencyAmount: '100', lockAmount: 'true' });
    const orderId = link.searchParams.get('externalTransactionId') ?? '';
    expect(orderId).toMatch(/^[0-9a-f-]{36}$/);

    // MoonPay pays out before it reports anything: 95.4 USDC (a little under the estimate) to the deposit address.
    const sent = await anvil.send({ to: tokens.USDC_ETH, data: transferCall(address, 95_400_000n) });
    // Back from MoonPay: the order's status screen, Pending until the coins have their confirmations.
    await page.getByTestId('moonpay-back').click();
    await expect(page).toHaveURL(/\/home\/asset\/USDC_ETH\/transaction\/[0-9a-f-]{36}\/FIAT_DEPOSIT$/);
    await expect(page.getByTestId('detail-tx_detail_status')).toContainText('Pending');
    await anvil.mine(2);
    await expect(page.getByTestId('detail-tx_detail_status')).toContainText('Completed', { timeout: 30_000 });
    await expect(page.getByTestId('detail-tx_detail_hash')).toContainText(sent.transactionHash);

    // The webhook comes late with the same coins: nothing moves twice.
    expect(await deliver(app, moonpay, 'transaction_updated', { externalTransactionId: orderId, status: 'completed', walletAddress: address, cryptoTransactionId: sent.transactionHash, quoteCurrencyAmount: 95.4 })).toBe('applied');
    await page.goto('/home/asset/USDC_ETH');
    await expect(page.getByTestId('history-item')).toHaveCount(1);
    await expect(page.getByTestId('history-item').first()).toHaveAttribute('data-state', 'COMPLETED');
    await expect(page.getByTestId('asset-balance')).toHaveText(/^95\.4\s/);
    expect(await available(page, user, 'USDC_ETH')).toBe('95.4');
    await auditGreen(app);
  });

  test('the webhook first, the coins later: tied by the hash it reported, one Buy item, credited once', async ({ page, app, anvil, tokens, moonpay }) => {
    test.setTimeout(120_000);
    const { user, address } = await newBuyer(page, app);
    const { orderId } = await buyOnMoonPay(page, moonpay);
    // MoonPay's payout is signed and sent but not mined yet: the wallet's scan cannot have seen it.
    await anvil.testClient.setAutomine(false);
    try {
      const hash = await anvil.wallet.sendTransaction({ to: tokens.USDC_ETH, data: transferCall(address, 95_401_840n) });
      expect(await deliver(app, moonpay, 'transaction_updated', { externalTransactionId: orderId, status: 'completed', walletAddress: address, cryptoTransactionId: hash })).toBe('applied');
      await page.goto('/home/asset/USDC_ETH');
      await expect(page.getByTestId('history-item')).toHaveCount(1);
      await expect(page.getByTestId('history-item').first()).toHaveAttribute('data-state', 'IN_PROGRESS');
      await anvil.mine(1);
      await expect.poll(async () => (await anvil.publicClient.getTransactionReceipt({ hash })).status).toBe('success');
    } finally {
      await anvil.testClient.setAutomine(true);
    }
    await anvil.mine(2);
    await expect(page.getByTestId('history-item').first()).toHaveAttribute('data-state', 'COMPLETED', { timeout: 30_000 });
    await expect(page.getByTestId('history-item')).toHaveCount(1);
    await expect(page.getByTestId('asset-balance')).toHaveText(/^95\.4\d*\s/);
    expect(await available(page, user, 'USDC_ETH')).toBe('95.40184');
    await auditGreen(app);
  });

  test('a failed payment ends Failed with its reason in the buyer\'s words, and credits nothing', async ({ page, app, moonpay }) => {
    const { user, address } = await newBuyer(page, app);
    const { orderId } = await buyOnMoonPay(page, moonpay);
    expect(await deliver(app, moonpay, 'transaction_failed', { externalTransactionId: orderId, status: 'failed', walletAddress: address, failureReason: 'Card declined', stageFailure: 'payment_authorization_declined' })).toBe('applied');
    await page.getByTestId('moonpay-back').click();
    await expect(page).toHaveURL(/\/transaction\/[0-9a-f-]{36}\/FIAT_DEPOSIT$/);
    await expect(page.getByTestId('detail-tx_detail_status')).toContainText('Failed');
    await expect(page.getByTestId('detail-tx_detail_failure')).toHaveText(/Your bank declined the card payment\. Nothing was charged or credited\./);
    await page.goto('/home/asset/USDC_ETH');
    await expect(page.getByTestId('history-item')).toHaveCount(1);
    await expect(page.getByTestId('history-item').first()).toHaveAttribute('data-state', 'FAILED');
    expect(await available(page, user, 'USDC_ETH')).toBe('0');
    await auditGreen(app);
  });

  test('MoonPay not answering makes the buy entry say so, never a spinner without end', async ({ page, app, moonpay }) => {
    await signUpAndLogIn(page, app);
    moonpay.setMode('silent');
    try {
      await page.goto('/home/buy-sell');
      const entry = page.getByTestId('buy-entry');
      await expect(entry).toHaveAttribute('aria-disabled', 'true', { timeout: 15_000 });
      await expect(entry).toContainText('Unavailable');
      await expect(entry).toContainText('The card provider is not answering right now. Please try again later.');
      await page.goto('/buy/get');
      await expect(page.getByTestId('buy-get-error')).toHaveText('The card provider is not answering right now. Please try again later.', { timeout: 15_000 });
      await expect(page.getByTestId('buy-coin')).toHaveCount(0);
    } finally {
      moonpay.setMode('up');
    }
  });
});
