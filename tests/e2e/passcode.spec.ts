import type { Page } from '@playwright/test';
import { mnemonicToSeedSync } from '@scure/bip39';
import { test as base, expect, signUpAndLogIn } from './fixtures.ts';
import { addressOf, available, pageApiUser, type ApiUser } from './send-helpers.ts';
import { startMailCatcher } from '../support/smtp.ts';
import { deriveAddress } from '../../src/server/domain/addresses.ts';

/**
 * Issue 6's walk, in Chromium against the real server: set a passcode (a mismatch first), send BTC with it (a wrong
 * code first), change it (a wrong code first), turn it off, and change the e-mail with both codes read from mails a test SMTP server received. The resend
 * countdown runs on the page's own clock (page.clock), fast-forwarded: nothing waits 59 real seconds.
 */
type Mail = { to: string; raw: string };
type Inbox = { mails: Mail[]; url: string };

const test = base.extend<object, { inbox: Inbox }>({
  inbox: [
    // Playwright reads a fixture's dependencies from its destructured first argument: this one has none.
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const smtp = await startMailCatcher();
      await use({ mails: smtp.inbox, url: smtp.url });
      await smtp.close();
    },
    { scope: 'worker' },
  ],
  appEnv: [
    async ({ inbox }, use) => use({ SMTP_URL: inbox.url, RATES_WALK_MS: '0', DEVNET_BLOCK_MS: '200', CONFIRMATIONS: 'BITCOIN:1', WORKER_POLL_MS: '250' }),
    { scope: 'worker' },
  ],
});

const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');

/** The newest mail to an address whose text matches, and how many there were before. */
async function mailTo(inbox: Inbox, to: string, pattern: RegExp, skip = 0): Promise<string> {
  await expect.poll(() => inbox.mails.filter((mail) => mail.to === to && pattern.test(mail.raw)).length, { message: `a mail to ${to}` }).toBeGreaterThan(skip);
  return inbox.mails.filter((mail) => mail.to === to && pattern.test(mail.raw))[skip]?.raw ?? '';
}

/** The 4-character code on a line of its own in the plain-text part. */
function codeIn(raw: string): string {
  const code = /^([A-Z0-9]{4})\r?$/m.exec(raw)?.[1];
  if (!code) throw new Error(`no code in the mail:\n${raw}`);
  return code;
}

/** The sign-up confirmation code, from the mail the test SMTP server received. */
async function mailedConfirmationCode(inbox: Inbox, email: string): Promise<string> {
  const mail = await mailTo(inbox, email, /Confirm your e-mail/);
  return /\/auth\/signup\/confirm\/([\w-]+)/.exec(mail)?.[1] ?? '';
}

/** Taps the digits on the keypad, as a finger would. */
async function tap(page: Page, pin: string): Promise<void> {
  for (const digit of pin) await page.getByTestId(`passcode-key-${digit}`).click();
}

type HistoryItem = { direction: string; state: string; amount: string; to: string | null };
async function history(page: Page, user: ApiUser, currency: string): Promise<HistoryItem[]> {
  const response = await page.request.post(`/api/${user.accountId}/asset/transactions`, {
    headers: { authorization: `Bearer ${user.token}` },
    data: { currency, sort: 'DESC', pageSize: 100, pageNumber: 1 },
  });
  expect(response.ok()).toBe(true);
  return ((await response.json()) as { result: HistoryItem[] }).result;
}

const circles = (page: Page) => page.getByTestId('passcode-circles');
const promptTitle = (page: Page) => page.getByTestId('passcode-prompt').getByRole('heading');

test.describe('passcode and e-mail change', () => {
  test('set (mismatch first), send with it (wrong code first), change (wrong code first), turn off; e-mail changed with both mailed codes', async ({ page, inbox }) => {
    test.setTimeout(120_000);
    await page.clock.install();
    const email = `pin${Date.now()}@example.com`;
    const next = `moved${Date.now()}@example.com`;
    await signUpAndLogIn(page, (to) => mailedConfirmationCode(inbox, to), { email });

    // Something to send: a devnet deposit of BTC, credited while the passcode is set up.
    const user = await pageApiUser(page);
    const outside = await deriveAddress(OUTSIDE_SEED, 'BITCOIN', 0, 'mainnet');
    const deposit = await addressOf(page, user, 'BTC');
    expect((await page.request.post('/sandbox/devnet/deposit', { data: { currency: 'BTC', address: deposit, amount: '0.05' } })).status()).toBe(201);

    // Settings → wallet protection → passcode: none set yet.
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByTestId('settings-protection').click();
    await expect(page).toHaveURL(/\/settings\/wallet-protection$/);
    await expect(page.getByTestId('protection-passcode')).toContainText('Off');
    await page.getByTestId('protection-passcode').click();
    await page.getByTestId('passcode-enable').click();
    await expect(page).toHaveURL(/\/settings\/passcode\/enable$/);

    // Enter, then a different confirmation: APP_0001 and back to the start.
    await expect(promptTitle(page)).toHaveText('Create a 4-digit passcode');
    await tap(page, '1234');
    await expect(promptTitle(page)).toHaveText('Repeat the passcode');
    await expect(circles(page)).toHaveAttribute('data-filled', '0');
    await tap(page, '4321');
    await expect(page.getByTestId('passcode-error')).toHaveText('Pin codes do not match');
    await expect(promptTitle(page)).toHaveText('Create a 4-digit passcode');
    await expect(circles(page)).toHaveAttribute('data-filled', '0');
    await tap(page, '2580');
    await tap(page, '2580');

    // Saved: success with the 5 s countdown, then back to the protection screen.
    await expect(page.getByTestId('passcode-success')).toHaveText('Passcode saved');
    await expect(page.getByTestId('passcode-redirect')).toHaveText('Back to wallet protection in 5 s');
    await page.clock.fastForward(2_000);
    await expect(page.getByTestId('passcode-redirect')).toHaveText('Back to wallet protection in 3 s');
    await page.clock.fastForward(3_000);
    await expect(page).toHaveURL(/\/settings\/wallet-protection$/);
    await expect(page.getByTestId('protection-passcode')).toContainText('On');

    // Send with it: the review's Confirm asks for the passcode; a wrong one clears the circles and shows the
    // gateway's message, and nothing is sent; the right one sends.
    await expect.poll(() => available(page, user, 'BTC'), { timeout: 30_000 }).toBe('0.05');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Home' }).click();
    await page.getByTestId('asset-row').filter({ hasText: 'BTC' }).click();
    await expect(page).toHaveURL(/\/home\/asset\/BTC$/);
    await page.getByRole('link', { name: 'Send' }).click();
    await expect(page).toHaveURL(/\/home\/asset\/BTC\/send$/);
    await page.getByTestId('send-amount').fill('0.01');
    await page.getByTestId('send-address').fill(outside);
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect(page).toHaveURL(/\/send\/review$/);
    await expect(page.getByTestId('review-recipient')).toHaveText(outside);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await expect(page.getByTestId('send-passcode')).toBeVisible();
    await expect(circles(page)).toHaveAttribute('data-filled', '0');
    await tap(page, '1111');
    await expect(page.getByTestId('passcode-error')).toHaveText('Incorrect pin code');
    await expect(circles(page)).toHaveAttribute('data-filled', '0');
    await expect(page).toHaveURL(/\/send\/review$/);
    expect((await history(page, user, 'BTC')).filter((item) => item.direction === 'WITHDRAWAL')).toEqual([]);
    expect(await available(page, user, 'BTC')).toBe('0.05');
    await tap(page, '2580');
    await expect(page).toHaveURL(/\/send\/progress$/);
    await expect(page.getByTestId('send-progress')).toHaveAttribute('data-state', /^(IN_PROGRESS|COMPLETED)$/);
    await expect
      .poll(async () => (await history(page, user, 'BTC')).filter((item) => item.direction === 'WITHDRAWAL'))
      .toEqual([expect.objectContaining({ amount: '0.01', to: outside })]);
    expect(await available(page, user, 'BTC')).toBe('0.04');

    // Back to the protection screen: the pin state was reset on leaving the passcode routes, so it asks again.
    await page.goto('/settings/wallet-protection');
    await expect(promptTitle(page)).toHaveText('Enter your passcode');
    await tap(page, '2580');
    await expect(page.getByTestId('protection-email')).toContainText(email);

    // Change (SPEC §4: enter new, then confirm): the passcode was entered on the protection screen, so it is not asked again.
    await page.getByTestId('protection-passcode').click();
    await page.getByTestId('passcode-change').click();
    await expect(promptTitle(page)).toHaveText('Create a 4-digit passcode');
    await page.getByRole('link', { name: 'Back' }).click();
    // Opened by its address (nothing entered in this visit), the change asks for the current code first: a wrong one
    // clears the circles and shows the gateway's message.
    await page.goto('/settings/passcode/change');
    await expect(promptTitle(page)).toHaveText('Enter your current passcode');
    await tap(page, '1111');
    await expect(page.getByTestId('passcode-error')).toHaveText('Incorrect pin code');
    await expect(circles(page)).toHaveAttribute('data-filled', '0');
    await tap(page, '2580');
    await expect(promptTitle(page)).toHaveText('Create a 4-digit passcode');
    await tap(page, '1357');
    await tap(page, '1357');
    await expect(page.getByTestId('passcode-success')).toBeVisible();
    await page.clock.fastForward(5_000);
    await expect(page).toHaveURL(/\/settings\/wallet-protection$/);

    // A fresh visit to the protection screen asks for the passcode first; the new one opens it.
    await page.goto('/settings/wallet-protection');
    await expect(promptTitle(page)).toHaveText('Enter your passcode');
    await tap(page, '2580');
    await expect(page.getByTestId('passcode-error')).toHaveText('Incorrect pin code');
    await tap(page, '1357');
    await expect(page.getByTestId('protection-email')).toContainText(email);

    // E-mail change: the old address's code, then the new address's, each submitted when complete.
    await page.getByTestId('protection-email').click();
    await expect(page.getByTestId('email-current')).toHaveText(email);
    await page.getByTestId('email-start').click();
    await expect(page).toHaveURL(/\/email\/edit$/);
    await page.getByTestId('email-new').fill('not-an-email');
    await expect(page.getByRole('button', { name: 'Continue' })).toBeDisabled();
    await page.getByTestId('email-new').fill(next);
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect(page).toHaveURL(/\/email\/verification\/old$/);
    await expect(page.getByTestId('email-verify-text')).toContainText(email);
    const oldCode = codeIn(await mailTo(inbox, email, /Confirm the change of your e-mail/));
    await page.getByTestId('email-code').fill(oldCode.toLowerCase());
    await expect(page).toHaveURL(/\/email\/verification\/new$/);
    await expect(page.getByTestId('email-verify-text')).toContainText(next);
    const firstNew = codeIn(await mailTo(inbox, next, /Confirm your new e-mail/));

    // Resend waits 59 s on the page's clock, shown as 00:ss.
    const resend = page.getByTestId('email-resend');
    await expect(resend).toHaveText('Send again in 00:59');
    await expect(resend).toBeDisabled();
    await page.clock.fastForward(30_000);
    await expect(resend).toHaveText('Send again in 00:29');
    await expect(resend).toBeDisabled();
    await page.clock.fastForward(29_000);
    await expect(resend).toHaveText('Send the code again');
    await resend.click();
    const secondNew = codeIn(await mailTo(inbox, next, /Confirm your new e-mail/, 1));
    await expect(resend).toHaveText('Send again in 00:59');
    if (secondNew !== firstNew) {
      await page.getByTestId('email-code').fill(firstNew);
      await expect(page.getByTestId('toast')).toHaveText('Something went wrong...');
      await expect(page.getByTestId('email-code')).toHaveValue('');
    }
    await page.getByTestId('email-code').fill(secondNew);
    await expect(page.getByText('E-mail set')).toBeVisible();
    await expect(page).toHaveURL(/\/settings\/wallet-protection$/);
    await expect(page.getByTestId('protection-email')).toContainText(next);

    // Turn the passcode off: needs the current one.
    await page.getByTestId('protection-passcode').click();
    await page.getByTestId('passcode-disable').click();
    await tap(page, '2580');
    await expect(page.getByTestId('passcode-error')).toHaveText('Incorrect pin code');
    await tap(page, '1357');
    await expect(page.getByText('Passcode turned off')).toBeVisible();
    await expect(page.getByTestId('protection-passcode')).toContainText('Off');
    // Without a passcode the protection screen opens straight away.
    await page.goto('/settings/wallet-protection');
    await expect(page.getByTestId('protection-email')).toContainText(next);
  });
});
