import { mnemonicToSeedSync } from '@scure/bip39';
import { Address } from '@ton/core';
import { test as base, expect, logIn } from './fixtures.ts';
import { addressOf, apiUser } from './send-helpers.ts';
import { startTonStandIn, type TonStandIn } from '../support/toncenter.ts';
import { deriveAddress } from '../../src/server/domain/addresses.ts';

/**
 * TON on its adapter (the toncenter stand-in over the TON emulator, in this worker): the send form warns, in English
 * and Russian, of a bounceable address of a wallet not deployed yet, and not of its non-bounceable spelling.
 */
const test = base.extend<object, { tonStandIn: TonStandIn }>({
  tonStandIn: [
    // Playwright reads a fixture's dependencies from this pattern: none.
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const standIn = await startTonStandIn();
      await use(standIn);
      await standIn.close();
    },
    { scope: 'worker' },
  ],
  appEnv: [async ({ tonStandIn }, use) => use({ TON_API_URL: tonStandIn.url }), { scope: 'worker' }],
});

const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');

test('the send form warns of a bounceable TON address of an undeployed wallet', async ({ page, app }) => {
  const alice = await apiUser(app);
  expect(await addressOf(page, alice, 'TON')).toMatch(/^UQ/);
  const undeployed = Address.parse(await deriveAddress(OUTSIDE_SEED, 'TON', 0, 'mainnet'));
  await logIn(page, alice.email);
  await page.goto('/home/asset/TON/send');
  await page.getByTestId('send-address').fill(undeployed.toString({ bounceable: true }));
  await expect(page.getByTestId('send-address-warning')).toContainText('not active yet');
  await page.getByTestId('send-address').fill(undeployed.toString({ bounceable: false }));
  await expect(page.getByTestId('send-fee')).not.toContainText('…');
  await expect(page.getByTestId('send-address-warning')).toHaveCount(0);
  // Russian, as the settings' language switch leaves it: the account's language (the profile sets the device's).
  expect((await page.request.post('/api/user/language/RUS', { headers: { authorization: `Bearer ${alice.token}` } })).ok()).toBe(true);
  await page.reload();
  await expect(page.locator('html')).toHaveAttribute('lang', 'ru');
  await page.getByTestId('send-address').fill(undeployed.toRawString());
  await expect(page.getByTestId('send-address-warning')).toContainText('ещё не активированному');
});
