import { createServer, type Server, type Socket } from 'node:net';
import { mnemonicToSeedSync } from '@scure/bip39';
import { test as base, expect, logIn } from './fixtures.ts';
import { addressOf, apiUser } from './send-helpers.ts';
import { deriveAddress } from '../../src/server/domain/addresses.ts';

/**
 * Issue 29 item 2 in the browser: the server's Litecoin "node" accepts connections and never answers. Typing an
 * outside LTC address in the send form says, in English and Russian, that the Litecoin network is not answering,
 * within the request budget (CHAIN_REQUEST_BUDGET_MS, 1.5 s here), and offers no Continue.
 */
type Silent = { url: string };

const test = base.extend<object, { silentNode: Silent }>({
  silentNode: [
    // Playwright reads a fixture's dependencies from this pattern: none.
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const sockets = new Set<Socket>();
      const server: Server = createServer((socket) => void sockets.add(socket));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      await use({ url: `http://user:password@127.0.0.1:${(server.address() as { port: number }).port}` });
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
    { scope: 'worker' },
  ],
  appEnv: [async ({ silentNode }, use) => use({ CHAIN_ENV: 'regtest', LITECOIN_RPC_URL: silentNode.url, CHAIN_REQUEST_BUDGET_MS: '1500', RATES_WALK_MS: '0' }), { scope: 'worker' }],
});

const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');

test('the send form says the Litecoin network is not answering, in English and Russian', async ({ page, app }) => {
  const alice = await apiUser(app);
  expect(await addressOf(page, alice, 'LTC')).toMatch(/^rltc1/);
  const outside = await deriveAddress(OUTSIDE_SEED, 'LITECOIN', 0, 'regtest');
  await logIn(page, alice.email);
  await page.goto('/home/asset/LTC/send');
  await page.getByTestId('send-amount').fill('0.1');
  await page.getByTestId('send-address').fill(outside);
  await expect(page.getByTestId('send-check-error')).toHaveText("The Litecoin network isn't answering right now. Please try again in a few minutes.", { timeout: 5_000 });
  await expect(page.getByRole('button', { name: 'Continue' })).toHaveCount(0);
  expect((await page.request.post('/api/user/language/RUS', { headers: { authorization: `Bearer ${alice.token}` } })).ok()).toBe(true);
  await page.reload();
  await expect(page.locator('html')).toHaveAttribute('lang', 'ru');
  await page.getByTestId('send-address').fill(outside);
  await expect(page.getByTestId('send-check-error')).toHaveText('Сеть Litecoin сейчас не отвечает. Попробуйте через несколько минут.', { timeout: 5_000 });
});
