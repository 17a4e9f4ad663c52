import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';
import { auditFailures, TEST_MNEMONIC, waitFor } from '../../support/custody.ts';
import type { AssetItem } from '../../../src/server/domain/assets.ts';
import type { SwapOrderView, QuoteView } from '../../../src/server/domain/swaps/view.ts';
import { DESK_ACCOUNT } from '../../../src/server/domain/market/desk.ts';
import { purgeExpiredQuotes } from '../../../src/server/domain/market/quotes.ts';

/**
 * The market on the development walk (BTC 65000, ETH 3200, fixed): the swap desk sells only what it holds down to its
 * limit, even when two confirmations race for the last of it; every quote keeps the prices it was made from; a
 * missing price refuses every quote with 503 PRICE_UNAVAILABLE and shows the last value with its time; quotes are
 * bounded per user and purged once nobody can take them.
 */
const ENV = {
  WALLET_SEED: TEST_MNEMONIC,
  DEVNET_BLOCK_MS: '100',
  CONFIRMATIONS: 'BITCOIN:1',
  WORKER_POLL_MS: '100',
  RATES_WALK_MS: '0',
  SWAP_SPREAD_BPS: '50',
  // The devnet funds the desk with 312.5 ETH (a million dollars at 3200): it may sell 0.5 of them.
  SWAP_INVENTORY_LIMITS: JSON.stringify({ ETH: '312' }),
};
const PASSWORD = 'a long enough passphrase 42';
const ETH = 10n ** 18n;

describe('the market and the swap desk', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let pool: pg.Pool;
  let alice: SignedInUser;

  const call = gatewayClient(() => server.url);
  const at = (user: SignedInUser, path: string) => `/api/${user.accountId}${path}`;
  const quote = (user: SignedInUser, body: Record<string, string>) => call<QuoteView & { exceptionCode?: string }>(user, 'POST', at(user, '/exchange/pre-calculate'), body);
  const order = (user: SignedInUser, q: QuoteView) => call<SwapOrderView>(user, 'POST', at(user, '/exchange'), { quoteId: q.quoteId, sourceAmount: q.sourceAmount, idempotencyKey: randomUUID() });
  const confirm = (user: SignedInUser, id: string) => call<SwapOrderView & { exceptionCode?: string }>(user, 'POST', at(user, `/exchange/confirm/${id}`));
  const desk = async (currency: string) =>
    BigInt((await pool.query<{ available: string }>('SELECT available::text AS available FROM ledger_balances WHERE ledger_account_id = $1 AND currency = $2', [DESK_ACCOUNT, currency])).rows[0]?.available ?? '0');
  const withhold = async (codes: string[]) => {
    await pool.query(`INSERT INTO app_setting (key, value) VALUES ('rates.walk', $1) ON CONFLICT (key) DO UPDATE SET value = app_setting.value || excluded.value, updated_at = now()`, [{ withheld: codes }]);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
  };
  const deposit = async (user: SignedInUser, currency: string, amount: string) => {
    await call(user, 'POST', at(user, '/account/currency'), { currency });
    const items = (await call<AssetItem[]>(user, 'GET', at(user, '/asset'))).body;
    const address = items.find((a) => a.currency === currency)?.depositAddress ?? '';
    const sent = await fetch(`${server.url}/sandbox/devnet/deposit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ currency, address, amount }) });
    expect(sent.status).toBe(201);
    await waitFor(`${amount} ${currency} credited`, async () => (await call<AssetItem[]>(user, 'GET', at(user, '/asset'))).body.find((a) => a.currency === currency)?.totalAvailable === amount);
  };

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    server = await startInProcess({ ...testServerEnv(database.url), ...ENV });
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    alice = await signUpAndSignIn(server.url, { email: `market-alice-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
    await deposit(alice, 'BTC', '0.1');
  }, 120_000);

  afterAll(async () => {
    if (pool) expect(await auditFailures(pool)).toEqual([]);
    await pool?.end();
    // Shut down cleanly: what `npm start` exits 0 after (main.ts exits 1 when close fails).
    await server?.close();
    await database?.drop();
  });

  it('starts the development desk with a million dollars of each devnet coin, once', async () => {
    expect(await desk('ETH')).toBe(3125n * ETH / 10n);
    expect(await desk('USDT_TRX')).toBe(1_000_000n * 10n ** 6n);
    const entries = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_entries WHERE kind = 'DESK_FUNDING' AND idempotency_key = 'desk-funding:devnet:ETH'`);
    expect(entries.rows[0]?.n).toBe(1);
  });

  it('starts the development hot wallets with ten thousand dollars of gas float each on the ledger, once', async () => {
    const floats = await pool.query<{ code: string; currency: string; units: string; fundings: number }>(
      `SELECT a.code, p.currency, sum(p.amount)::text AS units, count(*)::int AS fundings FROM ledger_postings p
         JOIN ledger_entries e ON e.id = p.entry_id JOIN ledger_accounts a ON a.id = p.ledger_account_id
        WHERE e.kind = 'GAS_FUNDING' AND a.kind = 'GAS_FLOAT' GROUP BY a.code, p.currency ORDER BY a.code`,
    );
    expect(floats.rows.map((r) => [r.code, r.currency, r.fundings])).toEqual([['GAS_FLOAT:ETHEREUM', 'ETH', 1], ['GAS_FLOAT:TON', 'TON', 1], ['GAS_FLOAT:TRON', 'TRX', 1]]);
    expect(floats.rows[0]?.units).toBe((3125n * ETH / 1000n).toString());
  });

  it('refuses a quote the desk could not fill, with its own code, and quotes what it can', async () => {
    // 0.05 BTC is 1.015625 ETH before the spread: more than the 0.5 above the limit.
    const refused = await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'ETH', sourceAmount: '0.05' });
    expect(refused).toMatchObject({ status: 503, body: { exceptionCode: 'SWAP_DESK_INVENTORY' } });
    const fine = await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'ETH', sourceAmount: '0.01' });
    expect(fine).toMatchObject({ status: 200, body: { destinationAmount: '0.20210937' } });
  });

  it('lets one of two racing confirmations take the last of the inventory and refuses the other; nothing goes below the limit', async () => {
    // Each is 0.40625 ETH of the desk's 0.5 spare: both quotes pass alone, only one confirmation can.
    const first = await order(alice, (await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'ETH', sourceAmount: '0.02' })).body);
    const second = await order(alice, (await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'ETH', sourceAmount: '0.02' })).body);
    expect([first.status, second.status]).toEqual([200, 200]);
    const before = await desk('ETH');
    const answers = await Promise.all([confirm(alice, first.body.id), confirm(alice, second.body.id)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 503]);
    expect(answers.find((a) => a.status === 503)?.body.exceptionCode).toBe('SWAP_DESK_INVENTORY');
    expect(await desk('ETH')).toBe(before - 406_250_000_000_000_000n);
    expect(await desk('ETH')).toBeGreaterThanOrEqual(312n * ETH);
    // The refused order still holds its BTC until it is given up: cancelled, the hold comes back.
    const refusedId = answers[0]?.status === 503 ? first.body.id : second.body.id;
    expect(await call(alice, 'POST', at(alice, `/exchange/cancel/${refusedId}`))).toMatchObject({ status: 200, body: { state: 'CANCELLED' } });
  });

  it('keeps the prices and sources each quote was made from', async () => {
    const q = await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.001' });
    const stored = await pool.query<{ prices: Record<string, { price: string; sources: { source: string; price: string }[] }> }>('SELECT prices FROM swap_quotes WHERE id = $1', [q.body.quoteId]);
    expect(stored.rows[0]?.prices).toMatchObject({
      BTC: { price: '65000', sources: [{ source: 'reference', price: '65000' }] },
      USDT: { price: '1', sources: [{ source: 'reference', price: '1' }] },
    });
  });

  it('quotes nothing in an asset without a current price (503 PRICE_UNAVAILABLE), and shows its last value with its time', async () => {
    const pending = await order(alice, (await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.001' })).body);
    expect(pending.status).toBe(200);
    await withhold(['BTC', 'EUR', 'RUB']);
    try {
      expect(await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'ETH', sourceAmount: '0.001' })).toMatchObject({ status: 503, body: { exceptionCode: 'PRICE_UNAVAILABLE' } });
      expect(await quote(alice, { sourceCurrency: 'ETH', destinationCurrency: 'BTC', destinationAmount: '0.001' })).toMatchObject({ status: 503, body: { exceptionCode: 'PRICE_UNAVAILABLE' } });
      // Confirming a pending order needs a price too: refused, and it keeps its hold.
      expect(await confirm(alice, pending.body.id)).toMatchObject({ status: 503, body: { exceptionCode: 'PRICE_UNAVAILABLE' } });
      expect((await call<SwapOrderView>(alice, 'GET', at(alice, `/exchange/${pending.body.id}`))).body.state).toBe('PENDING');
      // The pair stays listed: the quote says why it cannot be swapped now.
      const pairs = await call<{ sourceCurrency: string; destinationCurrency: string }[]>(alice, 'GET', at(alice, '/currency-pair'));
      expect(pairs.status).toBe(200);
      expect(pairs.body).toContainEqual({ sourceCurrency: 'BTC', destinationCurrency: 'ETH' });
      // Buying in EUR and selling for RUB have no rate: refused the same way.
      expect(await call(undefined, 'POST', '/api/b2c/rate', { currency: 'USDT_TRX', fiatCurrency: 'EUR' })).toMatchObject({ status: 503, body: { exceptionCode: 'PRICE_UNAVAILABLE' } });
      expect(await call(alice, 'POST', `/api/c2f/${alice.accountId}/rate/RUB/USDT_TRX`)).toMatchObject({ status: 503, body: { exceptionCode: 'PRICE_UNAVAILABLE' } });
      // Balances: the last known value of BTC with its time, ETH's current one without.
      const rates = await call<{ ratesMap: Record<string, Record<string, string>>; asOf: Record<string, string> }>(undefined, 'POST', '/api/rate', { currencies: ['BTC', 'ETH'], fiatCurrencies: ['USD', 'EUR'] });
      expect(rates.status).toBe(200);
      expect(rates.body.ratesMap.BTC).toEqual({ USD: '65000', EUR: '59800' });
      expect(rates.body.ratesMap.ETH).toEqual({ USD: '3200', EUR: '2944' });
      expect(Object.keys(rates.body.asOf).sort()).toEqual(['BTC', 'ETH']);
      expect(Number.isNaN(Date.parse(rates.body.asOf.BTC ?? ''))).toBe(false);
    } finally {
      await withhold([]);
    }
    expect(await confirm(alice, pending.body.id)).toMatchObject({ status: 200, body: { state: 'COMPLETED' } });
  });

  it('limits quotes per user: past 120 a minute they are refused (429) and write nothing', async () => {
    const bob = await signUpAndSignIn(server.url, { email: `market-bob-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
    const ask = () => quote(bob, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.001' });
    for (let i = 0; i < 120; i += 1) expect((await ask()).status).toBe(200);
    expect(await ask()).toMatchObject({ status: 429, body: { exceptionCode: 'TOO_MANY_REQUESTS' } });
    const rows = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM swap_quotes WHERE wallet_account_id = $1', [bob.accountId]);
    expect(rows.rows[0]?.n).toBe(120);
  });

  it('purges quotes an hour past their end, but never one an order took', async () => {
    const takenQuote = (await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.001' })).body;
    const taken = await order(alice, takenQuote);
    const untaken = (await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.001' })).body.quoteId;
    expect(await call(alice, 'POST', at(alice, `/exchange/cancel/${taken.body.id}`))).toMatchObject({ status: 200 });
    await pool.query(`UPDATE swap_quotes SET expires_at = now() - interval '2 hours' WHERE id = ANY($1::uuid[])`, [[untaken, takenQuote.quoteId]]);
    expect(await purgeExpiredQuotes(pool)).toBeGreaterThanOrEqual(1);
    const left = await pool.query<{ id: string }>('SELECT id FROM swap_quotes WHERE id = ANY($1::uuid[])', [[untaken, takenQuote.quoteId]]);
    expect(left.rows.map((r) => r.id)).toEqual([takenQuote.quoteId]);
  });
});
