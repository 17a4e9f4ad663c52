import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MoonPay } from '@moonpay/moonpay-node';
import { checkMoonPaySignature, createMoonPay, parseExact, plainDecimal, signMoonPayWebhook } from '../../../../../src/server/adapters/onramp/moonpay.ts';
import { OnRampRefusedError, OnRampUnavailableError, type OnRampProvider } from '../../../../../src/server/adapters/onramp/port.ts';
import { startMoonPayStandIn, type MoonPayStandIn } from '../../../../support/moonpay-standin.ts';

/**
 * The MoonPay adapter against its loopback stand-in, which answers MoonPay's documented shapes from recorded answers
 * (tests/fixtures/moonpay): what it reads of each, the signed widget link checked with the official SDK's own check,
 * and webhook signatures as MoonPay makes them, forged, stale and tampered.
 */
describe('the MoonPay adapter', () => {
  let standIn: MoonPayStandIn;
  let moonpay: OnRampProvider;

  beforeAll(async () => {
    standIn = await startMoonPayStandIn();
    moonpay = createMoonPay({ ...standIn.keys, apiUrl: standIn.url, widgetUrl: `${standIn.url}/widget`, timeoutMs: 500 });
  });
  afterAll(() => standIn?.close());

  it('reads its currency list: coins with our network and their contract, fiats upper-case', async () => {
    const crypto = await moonpay.cryptoCurrencies();
    expect(crypto.find((c) => c.code === 'usdc')).toEqual({ code: 'usdc', name: 'USD Coin (ERC-20)', network: 'ETHEREUM', contractAddress: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', suspended: false });
    // Polygon is not a network of this wallet: known by its code, with no network of ours.
    expect(crypto.find((c) => c.code === 'usdc_polygon')?.network).toBeUndefined();
    expect(crypto.find((c) => c.code === 'usdt_trx')?.network).toBe('TRON');
    expect(await moonpay.fiatCurrencies()).toEqual([
      { code: 'USD', name: 'US Dollar' },
      { code: 'EUR', name: 'Euro' },
      { code: 'GBP', name: 'Pound Sterling' },
    ]);
    // Kept for a while: the second read asks nothing.
    const asked = standIn.requests.filter((r) => r.path === '/v3/currencies').length;
    await moonpay.cryptoCurrencies();
    expect(standIn.requests.filter((r) => r.path === '/v3/currencies').length).toBe(asked);
    expect(standIn.requests.find((r) => r.path === '/v3/currencies')?.query.apiKey).toBe(standIn.keys.apiKey);
  });

  it('reads the IP check, the limits and the buy quote exactly as written (no float)', async () => {
    expect(await moonpay.country('203.0.113.7')).toEqual({ country: 'US', buyAllowed: true });
    standIn.setCountry('CU', false);
    expect(await moonpay.country('203.0.113.8')).toEqual({ country: 'CU', buyAllowed: false });
    standIn.setCountry('US', true);
    expect(standIn.requests.findLast((r) => r.path === '/v4/ip_address')?.query.ipAddress).toBe('203.0.113.8');

    expect(await moonpay.limits('usdc', 'USD', 'credit_debit_card')).toEqual({ method: 'credit_debit_card', fiat: 'USD', min: '20', max: '12000' });
    expect(standIn.requests.findLast((r) => r.path.endsWith('/limits'))?.query).toMatchObject({ baseCurrencyCode: 'usd', paymentMethod: 'credit_debit_card', areFeesIncluded: 'true' });

    expect(await moonpay.quote({ code: 'usdc', fiat: 'USD', method: 'credit_debit_card', fiatAmount: '100' })).toEqual({
      method: 'credit_debit_card',
      fiat: 'USD',
      fiatAmount: '100',
      cryptoAmount: '95.40184',
      fees: { provider: '3.99', network: '0.57', partner: '0' },
    });
    const byCrypto = await moonpay.quote({ code: 'usdc', fiat: 'USD', method: 'credit_debit_card', cryptoAmount: '50' });
    expect(standIn.requests.findLast((r) => r.path.endsWith('/buy_quote'))?.query).toMatchObject({ quoteCurrencyAmount: '50', baseCurrencyCode: 'usd' });
    expect(Number(byCrypto.fiatAmount)).toBeGreaterThan(50);
  });

  it('answers its refusals with its own words, and its failures and silences as unavailable within the deadline', async () => {
    await expect(moonpay.quote({ code: 'usdc', fiat: 'USD', method: 'credit_debit_card', fiatAmount: '5' })).rejects.toThrow(OnRampRefusedError);
    await expect(moonpay.quote({ code: 'usdc', fiat: 'USD', method: 'credit_debit_card', fiatAmount: '5' })).rejects.toThrow(/Invalid amount/);
    standIn.setMode('error');
    await expect(moonpay.country('203.0.113.7')).rejects.toThrow(OnRampUnavailableError);
    standIn.setMode('silent');
    const started = Date.now();
    await expect(moonpay.limits('usdc', 'EUR', 'apple_pay')).rejects.toThrow(/did not answer .* within 500 ms/);
    expect(Date.now() - started).toBeLessThan(3_000);
    standIn.setMode('up');
    const wrongKey = createMoonPay({ ...standIn.keys, apiKey: 'pk_test_other', apiUrl: standIn.url, currenciesTtlMs: 0 });
    await expect(wrongKey.cryptoCurrencies()).rejects.toThrow(OnRampUnavailableError);
  });

  it('finds a transaction by our external id with the secret key, and none when the buyer never started one', async () => {
    expect(await moonpay.transaction('a5f1b1e2-0000-4000-8000-000000000001')).toBeUndefined();
    standIn.transaction({ externalTransactionId: 'a5f1b1e2-0000-4000-8000-000000000001', status: 'waitingPayment', walletAddress: '0xabc' });
    standIn.transaction({ externalTransactionId: 'a5f1b1e2-0000-4000-8000-000000000001', status: 'completed', walletAddress: '0xabc', cryptoTransactionId: '0xhash', quoteCurrencyAmount: 95.40184 });
    expect(await moonpay.transaction('a5f1b1e2-0000-4000-8000-000000000001')).toMatchObject({
      reference: 'a5f1b1e2-0000-4000-8000-000000000001',
      status: 'completed',
      walletAddress: '0xabc',
      code: 'usdc',
      cryptoAmount: '95.40184',
      txHash: '0xhash',
      failureReason: null,
    });
    expect(standIn.requests.findLast((r) => r.path.startsWith('/v1/transactions/ext/'))).toMatchObject({ authorization: `Api-Key ${standIn.keys.secretKey}` });
    expect(standIn.requests.findLast((r) => r.path.startsWith('/v1/transactions/ext/'))?.query.apiKey).toBeUndefined();
  });

  it("signs the widget link so that the SDK's own check with the secret key accepts it, and no altered one", () => {
    const link = moonpay.widgetUrl({
      code: 'usdc',
      walletAddress: '0x1111111111111111111111111111111111111111',
      fiat: 'USD',
      fiatAmount: '100',
      method: 'credit_debit_card',
      reference: '5d0c5f0e-0000-4000-8000-000000000002',
      customer: 'acc-1',
      returnUrl: 'http://127.0.0.1:4321/home/asset/USDC_ETH/transaction/x/FIAT_DEPOSIT',
      email: 'buyer+test@example.com',
      language: 'en',
    });
    const url = new URL(link);
    expect(`${url.origin}${url.pathname}`).toBe(`${standIn.url}/widget`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      apiKey: standIn.keys.apiKey,
      currencyCode: 'usdc',
      walletAddress: '0x1111111111111111111111111111111111111111',
      baseCurrencyCode: 'usd',
      baseCurrencyAmount: '100',
      lockAmount: 'true',
      paymentMethod: 'credit_debit_card',
      externalTransactionId: '5d0c5f0e-0000-4000-8000-000000000002',
      redirectURL: 'http://127.0.0.1:4321/home/asset/USDC_ETH/transaction/x/FIAT_DEPOSIT',
      email: 'buyer+test@example.com',
    });
    const sdk = new MoonPay(standIn.keys.secretKey, { debug: false });
    expect(sdk.url.isSignatureValid(link)).toBe(true);
    const tampered = new URL(link);
    tampered.searchParams.set('walletAddress', '0x2222222222222222222222222222222222222222');
    expect(sdk.url.isSignatureValid(tampered.toString())).toBe(false);
    expect(new MoonPay('sk_test_someoneelse', { debug: false }).url.isSignatureValid(link)).toBe(false);
  });

  it('believes a webhook signed with the webhook key over "t.body" within 300 s, and nothing else', () => {
    const data = standIn.transaction({ externalTransactionId: '5d0c5f0e-0000-4000-8000-000000000003', status: 'completed', walletAddress: '0xabc', cryptoTransactionId: '0xfeed' });
    const body = standIn.webhookBody('transaction_updated', data);
    const now = Math.floor(Date.now() / 1000);
    const read = moonpay.readWebhook(standIn.sign(body, now), body, now);
    expect(read).toMatchObject({ ok: true, event: { type: 'transaction_updated', transaction: { reference: '5d0c5f0e-0000-4000-8000-000000000003', status: 'completed', txHash: '0xfeed', cryptoAmount: '95.40184' } } });
    expect(moonpay.readWebhook(undefined, body, now)).toEqual({ ok: false, problem: 'MISSING' });
    expect(moonpay.readWebhook('t=abc,s=zz', body, now)).toEqual({ ok: false, problem: 'MALFORMED' });
    expect(moonpay.readWebhook(standIn.sign(body, now, 'a forged webhook key'), body, now)).toEqual({ ok: false, problem: 'MISMATCH' });
    expect(moonpay.readWebhook(standIn.sign(body, now - 301), body, now)).toEqual({ ok: false, problem: 'STALE' });
    expect(moonpay.readWebhook(standIn.sign(body, now), body.replace('0xfeed', '0xbeef'), now)).toEqual({ ok: false, problem: 'MISMATCH' });
    // Signed, but not a transaction event: read as a bad body, never half-believed.
    expect(moonpay.readWebhook(standIn.sign('{"type":"x"}', now), '{"type":"x"}', now)).toEqual({ ok: false, problem: 'BODY' });
    expect(checkMoonPaySignature('k', signMoonPayWebhook('k', 'b', now), 'b', now)).toBeNull();
  });

  it('keeps JSON numbers as the decimal text they were written as', () => {
    expect(parseExact('{"a":95.40184,"b":0.1,"c":[100,1e-7,2.5E3],"d":"9.9"}')).toEqual({ a: '95.40184', b: '0.1', c: ['100', '0.0000001', '2500'], d: '9.9' });
    expect(plainDecimal('1.25e-2')).toBe('0.0125');
    expect(plainDecimal('12')).toBe('12');
  });
});
