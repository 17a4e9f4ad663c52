import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from 'viem';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';
import { auditFailures, quietLog, TEST_MNEMONIC, TEST_SECRETS_KEY } from '../../support/custody.ts';
import { startProductionInProcess, type InProcessServer } from '../../support/in-process.ts';
import { startLitecoind, type Litecoind } from '../../support/litecoind.ts';
import { startAnvil, type Anvil } from '../../support/anvil.ts';
import { deployTestTokens } from '../../support/evm-custody.ts';
import { startExchangeStandIn, EXCHANGES, type ExchangeStandIn } from '../../support/exchange-standin.ts';
import { startCentralBankStandIn } from '../../support/central-bank-standin.ts';
import { startMailCatcher, type MailCatcher } from '../../support/smtp.ts';
import { loadConfig } from '../../../src/server/config.ts';
import { openCustody, type Custody } from '../../../src/server/custody.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import type { AssetItem } from '../../../src/server/domain/assets.ts';
import { custodyBalances } from '../../../src/server/domain/custody-balances.ts';
import { DESK_ACCOUNT } from '../../../src/server/domain/market/desk.ts';
import { fundDeskFromChain } from '../../../src/server/domain/market/desk-funding.ts';
import { deskExposure } from '../../../src/server/domain/market/exposure.ts';
import type { QuoteView, SwapOrderView } from '../../../src/server/domain/swaps/view.ts';

/**
 * Issue 28's attack, replayed in production on two real networks: a real LTC deposit on Litecoin Core -regtest, then a
 * swap to ETH on anvil. Prices come from five exchanges through ccxt (a local stand-in answering in their shapes). With
 * no ETH on the desk the swap is refused; once the operator sent ETH to the hot wallet and booked it as the desk's
 * inventory, it settles exactly at the median price and `custody balances` matches both nodes.
 */
const PASSWORD = 'a long enough passphrase 42';

describe('the market in production on Litecoin Core and anvil', () => {
  let node: Litecoind;
  let anvil: Anvil;
  let exchanges: ExchangeStandIn;
  let banks: Awaited<ReturnType<typeof startCentralBankStandIn>>;
  let smtp: MailCatcher;
  let testDatabase: TestDatabase;
  let server: InProcessServer;
  let database: Database;
  let custody: Custody;
  let user: SignedInUser;
  const call = gatewayClient(() => server.url);
  const at = (path: string) => `/api/${user.accountId}${path}`;
  const run = async (prefix: string) => {
    for (const job of custody.jobs) if (job.name.startsWith(prefix)) await job.run();
  };
  const pollPrices = async () => {
    await run('rates.');
    // The gateway caches prices for a second.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
  };
  const balance = async (currency: string) => (await call<AssetItem[]>(user, 'GET', at('/asset'))).body.find((a) => a.currency === currency)?.totalAvailable ?? '0';
  const quote = (sourceAmount: string) => call<QuoteView & { exceptionCode?: string }>(user, 'POST', at('/exchange/pre-calculate'), { sourceCurrency: 'LTC', destinationCurrency: 'ETH', sourceAmount });

  beforeAll(async () => {
    [node, anvil, exchanges, banks, smtp] = await Promise.all([startLitecoind(), startAnvil(), startExchangeStandIn(), startCentralBankStandIn(), startMailCatcher()]);
    const tokens = await deployTestTokens(anvil);
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
      LITECOIN_RPC_URL: node.url,
      ETHEREUM_RPC_URL: anvil.url,
      ETHEREUM_TOKENS: JSON.stringify(tokens),
      CONFIRMATIONS: 'LITECOIN:1,ETHEREUM:1',
      FEE_RATE_FALLBACK: 'LITECOIN:5',
      RATES_SOURCES: EXCHANGES.join(','),
      RATES_SOURCE_URLS: JSON.stringify(exchanges.urls),
      RATES_FIAT_URLS: JSON.stringify(banks.urls),
      RATES_MAX_AGE_SECONDS: '5',
    };
    server = await startProductionInProcess(env);
    const config = loadConfig({ ...env, DATA_DIR: await mkdtemp(join(tmpdir(), 'market-attack-')) }, '0.0.0-test');
    database = await openDatabase(config, quietLog);
    custody = await openCustody(config, quietLog, database.pool, { owner: false });
    expect(custody.chainAdapters).toMatchObject({ LITECOIN: 'utxo-node', ETHEREUM: 'ethereum-rpc' });
    user = await signUpAndSignIn(server.url, {
      email: `attack-${Date.now()}@example.com`,
      password: PASSWORD,
      databaseUrl: testDatabase.url,
      confirmationLink: (email) => smtp.waitForLink(email, /Confirm your e-mail/),
    });
    await pollPrices();
  }, 180_000);

  afterAll(async () => {
    if (database) expect(await auditFailures(database.pool)).toEqual([]);
    await custody?.close();
    await database?.close();
    await server?.close();
    await testDatabase?.drop();
    await node?.stop();
    anvil?.stop();
    await exchanges?.close();
    await banks?.close();
    await smtp?.close();
  });

  it('prices every asset at the median of the five exchanges, and no fiat whose official rate is days old', async () => {
    const rates = await call<{ ratesMap: Record<string, Record<string, string>>; asOf: Record<string, string> }>(undefined, 'POST', '/api/rate', { currencies: ['LTC', 'ETH', 'BTC'], fiatCurrencies: ['USD', 'EUR'] });
    // USDT is 0.99993 USD (kraken 0.99995, coinbase 0.99991); prices read against USDT count at that. LTC mids in USD:
    // coinbase 74.87 (LTC/USD), the others' 74.885, 74.905, 74.915, 74.935 USDT × 0.99993: the median is bybit's
    // 74.89975665. ETH and BTC are read against USDT everywhere: their medians 3187.125 and 64979.95 USDT × 0.99993.
    expect(rates.body.ratesMap).toEqual({ LTC: { USD: '74.89975665' }, ETH: { USD: '3186.90190125' }, BTC: { USD: '64975.4014035' } });
    expect(rates.body.asOf).toEqual({});
  });

  it('refuses the swap to ETH while the desk holds none, then settles it exactly once the operator funded the desk', async () => {
    await call(user, 'POST', at('/account/currency'), { currency: 'LTC' });
    const address = (await call<AssetItem[]>(user, 'GET', at('/asset'))).body.find((a) => a.currency === 'LTC')?.depositAddress ?? '';
    await node.send(address, '10');
    await run('chain.');
    await node.mine(1);
    await run('chain.');
    expect(await balance('LTC')).toBe('10');

    // The desk has no ETH: no quote, nothing held.
    await pollPrices();
    expect(await quote('10')).toMatchObject({ status: 503, body: { exceptionCode: 'SWAP_DESK_INVENTORY' } });

    // The operator sends 1 ETH to the hot wallet and books it; booking more than the chain shows is refused.
    const hot = (await custody.chain.hotWalletAddress('ETHEREUM')) as Address;
    await anvil.send({ to: hot, value: 10n ** 18n });
    await expect(fundDeskFromChain(database.pool, custody.chain, { currency: 'ETH', amount: '1.5' })).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    expect(await fundDeskFromChain(database.pool, custody.chain, { currency: 'ETH', amount: '1' })).toMatchObject({ units: 10n ** 18n, replayed: false });
    expect(await fundDeskFromChain(database.pool, custody.chain, { currency: 'ETH', amount: '1' })).toMatchObject({ replayed: true });

    await pollPrices();
    const q = await quote('10');
    expect(q.status).toBe(200);
    // 10 × 74.89975665 / 3186.90190125 = 0.23502372828... ETH before the 50 bps spread; the user gets it less the spread, to 8 places.
    expect(q.body).toMatchObject({ sourceAmount: '10', destinationAmount: '0.2338486', feeCurrency: 'ETH' });
    const placed = await call<SwapOrderView>(user, 'POST', at('/exchange'), { quoteId: q.body.quoteId, sourceAmount: '10', idempotencyKey: randomUUID() });
    expect(placed.status).toBe(200);
    expect(await call<SwapOrderView>(user, 'POST', at(`/exchange/confirm/${placed.body.id}`))).toMatchObject({ status: 200, body: { state: 'COMPLETED' } });
    expect(await balance('ETH')).toBe('0.2338486');
    expect(await balance('LTC')).toBe('0');

    // The quote keeps the five sources of each price it used.
    const stored = await database.pool.query<{ prices: Record<string, { price: string; sources: { source: string }[] }> }>('SELECT prices FROM swap_quotes WHERE id = $1', [q.body.quoteId]);
    expect(stored.rows[0]?.prices.LTC?.price).toBe('74.89975665');
    expect(stored.rows[0]?.prices.LTC?.sources.map((s) => s.source)).toEqual(['binance', 'bybit', 'coinbase', 'kraken', 'okx']);
    expect(stored.rows[0]?.prices.ETH?.price).toBe('3186.90190125');

    // The desk: 10 LTC bought, destination and spread sold out of its 1 ETH; the exposure says so.
    const desk = await database.pool.query<{ currency: string; available: string }>('SELECT currency, available::text AS available FROM ledger_balances WHERE ledger_account_id = $1 ORDER BY currency', [DESK_ACCOUNT]);
    expect(desk.rows).toEqual([
      { currency: 'ETH', available: (10n ** 18n - 235_023_728_281_758_638n).toString() },
      { currency: 'LTC', available: '1000000000' },
    ]);
    const exposure = await deskExposure(database.pool, await custody.rates.prices());
    expect(exposure.find((e) => e.asset === 'LTC')).toMatchObject({ net: 10n * 10n ** 18n });
    expect(exposure.find((e) => e.asset === 'ETH')).toMatchObject({ net: -235_023_728_281_758_638n });

    // What the chains hold = users + desk + fees, on both networks.
    const rows = await custodyBalances(database.pool, custody.chain);
    for (const currency of ['LTC', 'ETH']) {
      const row = rows.find((r) => r.currency === currency);
      expect({ currency, matches: row?.matches, inFlight: row?.inFlight }).toEqual({ currency, matches: true, inFlight: 0 });
      expect(row?.position).toBe((row?.liability ?? 0n) + (row?.desk ?? 0n) + (row?.fees ?? 0n));
    }
  });

  it('quotes nothing once every exchange is down past the freshness limit, and again once they answer', async () => {
    for (const source of EXCHANGES) exchanges.setDown(source, 'unavailable');
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    await pollPrices();
    expect(await quote('0.1')).toMatchObject({ status: 503, body: { exceptionCode: 'PRICE_UNAVAILABLE' } });
    const rates = await call<{ ratesMap: Record<string, Record<string, string>>; asOf: Record<string, string> }>(undefined, 'POST', '/api/rate', { currencies: ['LTC'], fiatCurrencies: ['USD'] });
    expect(rates.body.ratesMap).toEqual({ LTC: { USD: '74.89975665' } });
    expect(Object.keys(rates.body.asOf)).toEqual(['LTC']);
    for (const source of EXCHANGES) exchanges.setDown(source, false);
    await pollPrices();
    expect((await call(undefined, 'POST', '/api/rate', { currencies: ['LTC'], fiatCurrencies: ['USD'] })).body).toEqual({ ratesMap: { LTC: { USD: '74.89975665' } }, asOf: {} });
  });
});
