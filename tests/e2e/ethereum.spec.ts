import { mnemonicToSeedSync } from '@scure/bip39';
import { encodeFunctionData, parseEther, type Address } from 'viem';
import { test as base, expect, signUpAndLogIn } from './fixtures.ts';
import { addressOf, pageApiUser } from './send-helpers.ts';
import { anvilAccount, mintCall, startAnvil, tokenAbi, type Anvil } from '../support/anvil.ts';
import { TEST_MNEMONIC } from '../support/custody.ts';
import { evmKeys } from '../../src/server/adapters/chains/evm/keys.ts';
import { chainAddressing } from '../../src/server/domain/addresses.ts';

/**
 * Real Ethereum in the browser: the server runs ETHEREUM on its own anvil node (CHAIN_ENV=regtest) with a USDT-like
 * token (transfer returns nothing) deployed by the test. A user receives USDT_ETH from an anvil account, sees it
 * Pending, then the balance once the test has mined the confirmations, and sends part of it back to that account.
 */
type EvmWorker = { anvil: Anvil; usdt: Address; usdc: Address };
const test = base.extend<object, EvmWorker>({
  anvil: [
    // eslint-disable-next-line no-empty-pattern -- Playwright reads a fixture's dependencies from its first parameter: none here.
    async ({}, use) => {
      const anvil = await startAnvil();
      await use(anvil);
      anvil.stop();
    },
    { scope: 'worker' },
  ],
  usdt: [
    async ({ anvil }, use) => {
      const usdt = await anvil.deploy('TetherLike');
      const mint = (to: Address, value: bigint) => anvil.send({ to: usdt, data: mintCall(to, value) });
      await mint(anvilAccount.address, 1_000_000_000n);
      // The hot wallet (the seed's, HOT_WALLET_INDEX) holds ETH for gas and USDT to pay withdrawals from.
      const hot = evmKeys(mnemonicToSeedSync(TEST_MNEMONIC), chainAddressing('regtest')).hot().address;
      await anvil.testClient.setBalance({ address: hot, value: parseEther('10') });
      await mint(hot, 1_000_000_000n);
      await use(usdt);
    },
    { scope: 'worker' },
  ],
  usdc: [async ({ anvil }, use) => use(await anvil.deploy('StandardToken')), { scope: 'worker' }],
  appEnv: [
    async ({ anvil, usdt, usdc }, use) =>
      use({
        WALLET_SEED: TEST_MNEMONIC,
        CHAIN_ENV: 'regtest',
        ETHEREUM_RPC_URL: anvil.url,
        ETHEREUM_TOKENS: JSON.stringify({ USDT_ETH: usdt, USDC_ETH: usdc }),
        CONFIRMATIONS: 'ETHEREUM:3',
        WITHDRAWAL_FEES: JSON.stringify({ USDT_ETH: '1' }),
        RATES_WALK_MS: '0',
        WORKER_POLL_MS: '200',
      }),
    { scope: 'worker' },
  ],
});

test('a user receives USDT_ETH from an anvil account, sees it Pending then credited, and sends some back', async ({ page, app, anvil, usdt }) => {
  test.setTimeout(120_000);
  await signUpAndLogIn(page, app);
  const user = await pageApiUser(page);
  const address = (await addressOf(page, user, 'USDT_ETH')) as Address;
  expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);

  // 25 USDT from anvil's account, mined at once (anvil's automine): one confirmation of three.
  await anvil.send({ to: usdt, data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [address, 25_000_000n] }) });
  await page.goto('/home/asset/USDT_ETH');
  const item = page.getByTestId('history-item').first();
  await expect(item).toHaveAttribute('data-state', 'IN_PROGRESS', { timeout: 20_000 });
  await expect(item).toContainText('Pending');
  await expect(page.getByTestId('asset-balance')).toHaveText(/^0\s/);

  await anvil.mine(2);
  await expect(item).toHaveAttribute('data-state', 'COMPLETED', { timeout: 30_000 });
  await expect(page.getByTestId('asset-balance')).toHaveText(/^25\s/);

  // Back to the anvil account: 10 USDT, of which the recipient gets 9 (the withdrawal fee is 1).
  const before = await anvil.balanceOf(usdt, anvilAccount.address);
  await page.goto('/home/asset/USDT_ETH/send');
  await page.getByTestId('send-amount').fill('10');
  await page.getByTestId('send-address').fill(anvilAccount.address);
  await expect(page.getByTestId('send-fee')).toHaveText(/1\sUSDT/);
  await page.getByRole('button', { name: 'Continue' }).click();
  await expect(page.getByTestId('review-receive')).toHaveText(/^9\s/);
  await page.getByRole('button', { name: 'Confirm' }).click();
  await expect(page.getByTestId('send-progress')).toHaveAttribute('data-state', 'IN_PROGRESS');
  // The worker signs and broadcasts it (mined at once); the test mines the confirmations.
  await expect.poll(async () => (await anvil.balanceOf(usdt, anvilAccount.address)) - before, { timeout: 30_000 }).toBe(9_000_000n);
  await anvil.mine(3);
  await expect(page.getByTestId('send-progress')).toHaveAttribute('data-state', 'COMPLETED', { timeout: 30_000 });
  await page.goto('/home/asset/USDT_ETH');
  await expect(page.getByTestId('asset-balance')).toHaveText(/^15\s/);
  await expect(page.getByTestId('history-item').first()).toContainText('Sent');
});
