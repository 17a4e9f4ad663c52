import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MoonPay } from '@moonpay/moonpay-node';
import { encodeFunctionData, type Address, type Hex } from 'viem';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';
import { auditFailures, quietLog, TEST_MNEMONIC, TEST_SECRETS_KEY } from '../../support/custody.ts';
import { startProductionInProcess, type InProcessServer } from '../../support/in-process.ts';
import { anvilAccount, mintCall, startAnvil, tokenAbi, type Anvil } from '../../support/anvil.ts';
import { deployTestTokens, type EvmTokens } from '../../support/evm-custody.ts';
import { startMailCatcher, type MailCatcher } from '../../support/smtp.ts';
import { startMoonPayStandIn, type MoonPayStandIn } from '../../support/moonpay-standin.ts';
import { loadConfig, type Config } from '../../../src/server/config.ts';
import { openCustody, type Custody } from '../../../src/server/custody.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import { startSummary } from '../../../src/server/start-summary.ts';
import type { AssetItem } from '../../../src/server/domain/assets.ts';
import type { TransactionItem } from '../../../src/server/domain/history.ts';
import type { BuyOrderView, BuyQuote } from '../../../src/lib/wire/buy.ts';

/**
 * Issue 32 through the whole product in production mode (APP_ENV=production: no stand-in of the wallet's own), with
 * MoonPay's loopback stand-in (recorded answers) and ETHEREUM on anvil, whose USDC-like token plays MoonPay sending
 * the coins. The worker is off: the test runs the deposit scan when it wants the chain read, so the webhook can come
 * before the scan sees the coins, or after. Each purchase ends as one Buy item, credited once by its deposit.
 */
const PASSWORD = 'a long enough passphrase 42';
const USDC = 10n ** 6n;

describe('buying USDC_ETH through MoonPay', () => {
  let anvil: Anvil;
  let tokens: EvmTokens;
  let standIn: MoonPayStandIn;
  let smtp: MailCatcher;
  let testDatabase: TestDatabase;
  let server: InProcessServer;
  let config: Config;
  let database: Database;
  let custody: Custody;
  let user: SignedInUser;
  let address: Address;
  const call = gatewayClient<Record<string, unknown>>(() => server.url);
  const at = (path: string) => `/api/${user.accountId}${path}`;
  const run = async (prefix: string) => {
    for (const job of custody.jobs) if (job.name.startsWith(prefix)) await job.run();
  };
  const webhook = (body: string, signature?: string | null) => standIn.deliver(`${server.url}/api/webhooks/moonpay`, body, ...(signature === undefined ? [] : [signature]));
  const balance = async () => (await call<AssetItem[]>(user, 'GET', at('/asset'))).body.find((a) => a.currency === 'USDC_ETH')?.totalAvailable;
  const history = async () => (await call<{ result: TransactionItem[] }>(user, 'POST', at('/asset/transactions'), { currency: 'USDC_ETH' })).body.result;
  const orderOf = async (id: string) => (await call<BuyOrderView>(user, 'GET', `/api/b2c/order/${id}?account=${user.accountId}`)).body;
  const methods = (amounts: Record<string, string>, extra: Record<string, string> = {}) =>
    call<BuyQuote & { exceptionCode?: string }>(undefined, 'POST', '/api/b2c/fiat/method', { currency: 'USDC_ETH', geoId: 'US', fiatCurrency: 'USD', account: user.accountId, ...amounts, ...extra });
  /** Quote, order and confirm for `fiatAmount` USD: the order and MoonPay's widget link. */
  const buy = async (fiatAmount = '100') => {
    const quote = (await methods({ fiatAmount })).body;
    const item = quote.methods[0];
    const returnUrl = `http://localhost:${server.port}/home/asset/USDC_ETH`;
    const created = await call<BuyOrderView>(undefined, 'POST', '/api/b2c/order', { rateId: quote.fixedRateId, itemId: item?.itemId, description: 'Buy USDC', returnUrl, idempotencyKey: randomUUID(), account: user.accountId, fiatAmount });
    expect(created.status).toBe(200);
    const requestParams = { email: 'buyer@example.com', browserLanguage: 'en-US', screenHeight: 844, screenWidth: 390, timeZone: 'UTC', userAgent: 'test', javascriptEnabled: true, ip: '' };
    const confirmed = await call<{ redirectUrl: string }>(user, 'POST', '/api/b2c/order/confirm', { id: created.body.id, account: user.accountId, requestParams });
    expect(confirmed.status).toBe(200);
    return { order: created.body, redirectUrl: confirmed.body.redirectUrl };
  };
  /** MoonPay sending the coins: a transfer of the token from anvil's account, mined at once. */
  const sendCoins = async (units: bigint): Promise<Hex> => {
    const receipt = await anvil.send({ to: tokens.USDC_ETH, data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [address, units] }) });
    return receipt.transactionHash;
  };
  /** The chain read (and, after `blocks` more blocks, the confirmations counted). */
  const scan = async (blocks = 0) => {
    if (blocks > 0) await anvil.mine(blocks);
    await run('chain.deposits');
  };
  const event = (type: 'transaction_created' | 'transaction_updated' | 'transaction_failed', order: BuyOrderView, set: Omit<Parameters<MoonPayStandIn['transaction']>[0], 'externalTransactionId' | 'walletAddress'>) =>
    standIn.webhookBody(type, standIn.transaction({ externalTransactionId: order.id, walletAddress: address, ...set }));

  beforeAll(async () => {
    [anvil, standIn, smtp] = await Promise.all([startAnvil(), startMoonPayStandIn(), startMailCatcher()]);
    tokens = await deployTestTokens(anvil);
    await anvil.send({ to: tokens.USDC_ETH, data: mintCall(anvilAccount.address, 1_000_000n * USDC) });
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    const env = {
      APP_ENV: 'production',
      DATABASE_URL: testDatabase.url,
      WALLET_SEED: TEST_MNEMONIC,
      SECRETS_KEY: TEST_SECRETS_KEY,
      WORKERS: 'off',
      PUBLIC_RATE_LIMIT: '0',
      SMTP_URL: smtp.url,
      CHAIN_ENV: 'regtest',
      ETHEREUM_RPC_URL: anvil.url,
      ETHEREUM_TOKENS: JSON.stringify(tokens),
      CONFIRMATIONS: 'ETHEREUM:3',
      ...standIn.env({ MOONPAY_TIMEOUT_MS: '1000' }),
    };
    server = await startProductionInProcess(env);
    config = loadConfig({ ...env, DATA_DIR: await mkdtemp(join(tmpdir(), 'moonpay-buy-')) }, '0.0.0-test');
    database = await openDatabase(config, quietLog);
    custody = await openCustody(config, quietLog, database.pool, { owner: false });
    user = await signUpAndSignIn(server.url, { email: `moonpay-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: testDatabase.url, confirmationLink: (email) => smtp.waitForLink(email, /Confirm your e-mail/) });
    expect((await call(user, 'POST', at('/account/currency'), { currency: 'USDC_ETH' })).status).toBe(200);
    address = ((await call<AssetItem[]>(user, 'GET', at('/asset'))).body.find((a) => a.currency === 'USDC_ETH')?.depositAddress ?? '') as Address;
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
  }, 180_000);

  afterAll(async () => {
    if (database) expect(await auditFailures(database.pool)).toEqual([]);
    await custody?.close();
    await database?.close();
    await server?.close();
    await testDatabase?.drop();
    anvil?.stop();
    await standIn?.close();
    await smtp?.close();
  });

  it('starts with buying on through MoonPay in production, and offers what MoonPay sells where the buyer is', async () => {
    const summary = startSummary(config, custody);
    expect(summary.on).toContainEqual(expect.stringMatching(/^buying \(MoonPay on-ramp, test keys, credit_debit_card; coins sent on chain to deposit addresses; webhook http:\/\/localhost:\d+\/api\/webhooks\/moonpay\)$/));
    expect(summary.off).toContain('stand-ins (/sandbox/*)');
    expect((await call(undefined, 'GET', '/api/client-config')).body).toMatchObject({ buyEnabled: true });
    expect(await call(undefined, 'GET', '/api/b2c/currencies')).toMatchObject({ status: 200, body: { provider: 'moonpay', currencies: ['USDC_ETH'] } });
    // The IP check places the buyer (127.0.0.1 asks as any address): in the US, USD first; in Germany, EUR first.
    expect(await call(undefined, 'GET', '/api/b2c/fiat/availability')).toMatchObject({ status: 200, body: [{ fiatCurrency: 'USD', geoId: 'US' }, { fiatCurrency: 'EUR', geoId: 'US' }] });
    expect(standIn.requests.findLast((r) => r.path === '/v4/ip_address')?.query.ipAddress).toBe('127.0.0.1');
    standIn.setCountry('DE', true);
    expect((await call(undefined, 'GET', `/api/fiatDeposit/geo?account=${user.accountId}`)).body).toEqual([{ fiatCurrency: 'EUR', geoId: 'DE' }, { fiatCurrency: 'USD', geoId: 'DE' }]);
    standIn.setCountry('CU', false);
    expect(await call(undefined, 'GET', '/api/b2c/fiat/availability')).toMatchObject({ status: 403, body: { exceptionCode: 'B2C_REGION' } });
    expect(await call(undefined, 'GET', '/api/b2c/currencies')).toMatchObject({ status: 403, body: { exceptionCode: 'B2C_REGION', message: 'Buying with a card is not available in your country.' } });
    standIn.setCountry('US', true);
  });

  it("shows MoonPay's method with its limits and its estimate, saying which fees are in it", async () => {
    const quote = await methods({ fiatAmount: '100' });
    expect(quote.status).toBe(200);
    expect(quote.body.methods).toEqual([
      {
        paymentMethodCode: 'credit_debit_card',
        paymentMethodName: 'Bank card',
        fiatAmount: '100',
        fiatCurrency: 'USD',
        cryptoAmount: '95.40184',
        minLimit: '20',
        maxLimit: '12000',
        itemId: expect.any(String),
        rate: '1.04819782',
        estimate: true,
        fees: { provider: '3.99', network: '0.57', partner: '0' },
      },
    ]);
    // Outside the limits MoonPay is not asked: no coins, the limits for the message.
    expect((await methods({ fiatAmount: '5' })).body.methods[0]).toMatchObject({ fiatAmount: '5', cryptoAmount: '0', minLimit: '20', maxLimit: '12000' });
    // By the crypto amount: the fiat side is MoonPay's total for it.
    const byCrypto = (await methods({ cryptoAmount: '50' })).body.methods[0];
    expect(byCrypto).toMatchObject({ cryptoAmount: '50', fiatAmount: '54.58' });
    // The geoId alone picks its country's fiat.
    expect((await call<BuyQuote>(undefined, 'POST', '/api/b2c/fiat/method', { currency: 'USDC_ETH', geoId: 'US', account: user.accountId, fiatAmount: '100' })).body.fiatCurrency).toBe('USD');
    expect(await methods({ fiatAmount: '100' }, { currency: 'USDT_ETH' })).toMatchObject({ status: 400, body: { exceptionCode: 'UNKNOWN_CURRENCY' } });
  });

  it('buys for 100 USD: a signed widget link, webhooks checked and applied once in order, the coins credited once as one Buy item (webhook first)', async () => {
    const { order, redirectUrl } = await buy('100');
    expect(order).toMatchObject({ state: 'NEW', delivery: 'CHAIN', cryptoAmount: '95.40184', fiatAmount: '100' });
    // MoonPay's widget, signed with the secret key for the user's own deposit address, the amount and our order.
    expect(new MoonPay(standIn.keys.secretKey, { debug: false }).url.isSignatureValid(redirectUrl)).toBe(true);
    const link = new URL(redirectUrl);
    expect(`${link.origin}${link.pathname}`).toBe(`${standIn.url}/widget`);
    const pending = await orderOf(order.id);
    expect(Object.fromEntries(link.searchParams)).toMatchObject({
      apiKey: standIn.keys.apiKey,
      currencyCode: 'usdc',
      walletAddress: address,
      baseCurrencyCode: 'usd',
      baseCurrencyAmount: '100',
      paymentMethod: 'credit_debit_card',
      externalTransactionId: order.id,
      externalCustomerId: user.accountId,
      redirectURL: `http://localhost:${server.port}/home/asset/USDC_ETH/transaction/${pending.transactionId}/FIAT_DEPOSIT`,
      email: 'buyer@example.com',
      language: 'en',
    });
    expect(pending).toMatchObject({ state: 'PENDING', redirectUrl });
    const requestParams = { email: 'buyer@example.com', browserLanguage: 'en', screenHeight: 1, screenWidth: 1, timeZone: 'UTC', userAgent: 't', javascriptEnabled: true, ip: '' };
    expect((await call(user, 'POST', '/api/b2c/order/confirm', { id: order.id, account: user.accountId, requestParams })).body).toEqual({ redirectUrl });
    expect((await history()).map((i) => [i.transactionType, i.state])).toEqual([['FIAT_DEPOSIT', 'IN_PROGRESS']]);

    // Missing, forged and stale signatures, and a signed body that is no event: refused, nothing changed.
    const created = event('transaction_created', order, { status: 'pending' });
    const now = Math.floor(Date.now() / 1000);
    expect(await webhook(created, null)).toMatchObject({ status: 401, body: { exceptionCode: 'WEBHOOK_SIGNATURE' } });
    expect(await webhook(created, standIn.sign(created, now, 'a key MoonPay never gave us'))).toMatchObject({ status: 401 });
    expect(await webhook(created, standIn.sign(created, now - 600))).toMatchObject({ status: 401, body: { message: expect.stringMatching(/stale/) } });
    expect(await webhook('{"hello":"world"}', standIn.sign('{"hello":"world"}'))).toMatchObject({ status: 400 });
    const untouched = await database.pool.query('SELECT provider_status FROM buy_orders WHERE id = $1', [order.id]);
    expect(untouched.rows[0]).toEqual({ provider_status: null });

    // Applied once; the very same delivery again (a replay inside the 300 s) is a duplicate.
    const signed = standIn.sign(created);
    expect(await webhook(created, signed)).toMatchObject({ status: 200, body: { outcome: 'applied' } });
    expect(await webhook(created, signed)).toMatchObject({ status: 200, body: { outcome: 'duplicate' } });

    // MoonPay pays out: the coins' transaction exists before the chain scan sees it, and its webhook comes first.
    const hash = await sendCoins(95_401_840n);
    expect(await webhook(event('transaction_updated', order, { status: 'completed', cryptoTransactionId: hash }))).toMatchObject({ body: { outcome: 'applied' } });
    // An older status arriving late moves nothing back.
    expect(await webhook(event('transaction_updated', order, { status: 'waitingPayment', cryptoTransactionId: null }))).toMatchObject({ body: { outcome: 'stale' } });
    expect(await orderOf(order.id)).toMatchObject({ state: 'PENDING' });
    const status = await database.pool.query('SELECT provider_status, provider_tx_hash, provider_amount::text FROM buy_orders WHERE id = $1', [order.id]);
    expect(status.rows[0]).toEqual({ provider_status: 'completed', provider_tx_hash: hash, provider_amount: '95401840' });

    // The scan sees the deposit: it is the purchase's (by its hash), one item, not credited before its confirmations.
    await scan();
    const seen = await history();
    expect(seen.map((i) => [i.transactionType, i.state, i.hash, i.amount])).toEqual([['FIAT_DEPOSIT', 'IN_PROGRESS', hash, '95.40184']]);
    expect(await balance()).toBe('0');
    await scan(2);
    expect(await orderOf(order.id)).toMatchObject({ state: 'COMPLETED', cryptoAmount: '95.40184' });
    expect((await history()).map((i) => [i.transactionType, i.state])).toEqual([['FIAT_DEPOSIT', 'COMPLETED']]);
    expect(await balance()).toBe('95.40184');
    // Scanning again, or MoonPay repeating itself, credits nothing more.
    await scan(1);
    expect(await webhook(event('transaction_updated', order, { status: 'completed', cryptoTransactionId: hash }))).toMatchObject({ status: 200 });
    expect(await balance()).toBe('95.40184');
  });

  it('completes a purchase whose coins came before any webhook, tied by address, amount and time (deposit first)', async () => {
    const { order } = await buy('100');
    const before = await history();
    // MoonPay delivered a little less than its estimate (the price moved): still this purchase.
    const hash = await sendCoins(95_390_000n);
    await scan();
    const items = await history();
    expect(items.length).toBe(before.length);
    expect(items[0]).toMatchObject({ transactionType: 'FIAT_DEPOSIT', state: 'IN_PROGRESS', hash, amount: '95.39' });
    await scan(2);
    expect(await orderOf(order.id)).toMatchObject({ state: 'COMPLETED', cryptoAmount: '95.39' });
    expect(await balance()).toBe('190.79184');
    // The webhook comes late: it confirms the same coins, and nothing moves twice.
    expect(await webhook(event('transaction_updated', order, { status: 'completed', cryptoTransactionId: hash, quoteCurrencyAmount: 95.39 }))).toMatchObject({ body: { outcome: 'applied' } });
    expect(await orderOf(order.id)).toMatchObject({ state: 'COMPLETED' });
    expect((await history()).filter((i) => i.transactionType === 'DEPOSIT')).toEqual([]);
    expect(await balance()).toBe('190.79184');
  });

  it('merges a deposit recorded on its own into its purchase once MoonPay reports its hash: still one item, one credit', async () => {
    const { order } = await buy('100');
    // Far from the estimate: recorded as a plain deposit while MoonPay has said nothing.
    const hash = await sendCoins(50n * USDC);
    await scan();
    expect((await history())[0]).toMatchObject({ transactionType: 'DEPOSIT', hash });
    expect(await webhook(event('transaction_updated', order, { status: 'completed', cryptoTransactionId: hash, quoteCurrencyAmount: 50 }))).toMatchObject({ body: { outcome: 'applied' } });
    const merged = await history();
    expect(merged.filter((i) => i.hash === hash).map((i) => [i.transactionType, i.state])).toEqual([['FIAT_DEPOSIT', 'IN_PROGRESS']]);
    await scan(2);
    expect(await orderOf(order.id)).toMatchObject({ state: 'COMPLETED', cryptoAmount: '50' });
    expect(await balance()).toBe('240.79184');
    expect((await history()).filter((i) => i.transactionType === 'DEPOSIT')).toEqual([]);
  });

  it('ends a failed payment Failed with its reason, credits nothing, and takes no later word against it', async () => {
    const { order } = await buy('100');
    // The failed step's code is kept rather than MoonPay's English: the browser words it in the buyer's language.
    const failed = event('transaction_failed', order, { status: 'failed', failureReason: 'Your card was declined', stageFailure: 'payment_authorization_declined' });
    expect(await webhook(failed)).toMatchObject({ body: { outcome: 'applied' } });
    expect(await orderOf(order.id)).toMatchObject({ state: 'FAILED', failureReason: 'payment_authorization_declined' });
    const failedId = (await orderOf(order.id)).transactionId;
    const item = (await history()).find((i) => i.id === failedId);
    expect(item).toMatchObject({ transactionType: 'FIAT_DEPOSIT', state: 'FAILED', failureReason: 'payment_authorization_declined' });
    expect(await webhook(event('transaction_updated', order, { status: 'completed', cryptoTransactionId: '0x' + 'ab'.repeat(32) }))).toMatchObject({ body: { outcome: 'ignored' } });
    expect(await orderOf(order.id)).toMatchObject({ state: 'FAILED' });
    expect(await balance()).toBe('240.79184');
  });

  it('takes one delivery once however many arrive at the same moment', async () => {
    const { order } = await buy('50');
    const body = event('transaction_updated', order, { status: 'waitingPayment' });
    const signature = standIn.sign(body);
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => webhook(body, signature)));
    expect(outcomes.map((o) => o.body.outcome).toSorted()).toEqual(['applied', ...Array<string>(7).fill('duplicate')]);
  });

  it('gives a purchase up only when MoonPay has no transaction for it or failed it', async () => {
    // Back from MoonPay without paying: no transaction there, so it ends now.
    const first = await buy('30');
    expect((await call<BuyOrderView>(user, 'POST', '/api/b2c/order/cancel', { id: first.order.id, account: user.accountId })).body).toMatchObject({ state: 'FAILED', failureReason: 'The payment was cancelled' });
    // Past its time while MoonPay is still checking the buyer: it waits on; once MoonPay failed it, it fails.
    const second = await buy('30');
    standIn.transaction({ externalTransactionId: second.order.id, walletAddress: address, status: 'pending' });
    await database.pool.query(`UPDATE buy_orders SET expires_at = now() - interval '1 second' WHERE id = $1`, [second.order.id]);
    await run('buy.expiry');
    expect(await orderOf(second.order.id)).toMatchObject({ state: 'PENDING' });
    expect(Date.parse((await orderOf(second.order.id)).expiresAt)).toBeGreaterThan(Date.now() + 1_000_000);
    standIn.transaction({ externalTransactionId: second.order.id, walletAddress: address, status: 'failed', failureReason: 'Identity check not passed' });
    await database.pool.query(`UPDATE buy_orders SET expires_at = now() - interval '1 second' WHERE id = $1`, [second.order.id]);
    await run('buy.expiry');
    expect(await orderOf(second.order.id)).toMatchObject({ state: 'FAILED', failureReason: 'Identity check not passed' });
  });

  it('sends MoonPay to no address when the stored deposit address is not the custody\'s: 503, the order stays new', async () => {
    const quote = (await methods({ fiatAmount: '100' })).body;
    const returnUrl = `http://localhost:${server.port}/home/asset/USDC_ETH`;
    const created = await call<BuyOrderView>(undefined, 'POST', '/api/b2c/order', { rateId: quote.fixedRateId, itemId: quote.methods[0]?.itemId, description: 'Buy USDC', returnUrl, idempotencyKey: randomUUID(), account: user.accountId, fiatAmount: '100' });
    expect(created.status).toBe(200);
    // Whoever writes the database puts an address of theirs in place of the user's.
    await database.pool.query(`UPDATE deposit_addresses SET address = $2 WHERE wallet_account_id = $1 AND network = 'ETHEREUM'`, [user.accountId, '0x000000000000000000000000000000000000dEaD']);
    try {
      const requestParams = { email: 'buyer@example.com', browserLanguage: 'en', screenHeight: 1, screenWidth: 1, timeZone: 'UTC', userAgent: 't', javascriptEnabled: true, ip: '' };
      const refused = await call<{ exceptionCode: string; message: string }>(user, 'POST', '/api/b2c/order/confirm', { id: created.body.id, account: user.accountId, requestParams });
      expect(refused).toMatchObject({ status: 503, body: { exceptionCode: 'B2C_UNAVAILABLE', message: 'Buying USDC_ETH is not available right now. Please try again later.' } });
      expect((await database.pool.query('SELECT state, redirect_url FROM buy_orders WHERE id = $1', [created.body.id])).rows[0]).toEqual({ state: 'NEW', redirect_url: null });
    } finally {
      await database.pool.query(`UPDATE deposit_addresses SET address = $2 WHERE wallet_account_id = $1 AND network = 'ETHEREUM'`, [user.accountId, address]);
    }
  });

  it('answers "unavailable" with the reason, within its deadline, when MoonPay fails or does not answer', async () => {
    for (const mode of ['error', 'silent'] as const) {
      standIn.setMode(mode);
      const started = Date.now();
      expect(await methods({ fiatAmount: '100' })).toMatchObject({ status: 503, body: { exceptionCode: 'B2C_PROVIDER_DOWN', message: 'The card provider is not answering right now. Please try again later.' } });
      expect(await call(undefined, 'GET', '/api/b2c/fiat/availability')).toMatchObject({ status: 503, body: { exceptionCode: 'B2C_PROVIDER_DOWN' } });
      // What the buy entry asks: unavailable with the reason too, although MoonPay's currency list is still kept.
      expect(await call(undefined, 'GET', '/api/b2c/currencies')).toMatchObject({ status: 503, body: { exceptionCode: 'B2C_PROVIDER_DOWN' } });
      expect(Date.now() - started).toBeLessThan(5_000);
    }
    standIn.setMode('up');
  });
});
