import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { auditFailures, createWalletAccount, openTestCustody, quietLog } from '../../support/custody.ts';
import { fixedRates } from '../../support/prices.ts';
import { startExchangeStandIn, type ExchangeStandIn } from '../../support/exchange-standin.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { createHedgeExchange } from '../../../src/server/adapters/rates/exchanges.ts';
import type { HedgePort } from '../../../src/server/adapters/rates/port.ts';
import { ensureUserLedgerAccount, SYSTEM_ACCOUNTS, systemAccountId } from '../../../src/server/domain/ledger.ts';
import { post } from '../../../src/server/domain/ledger-writes.ts';
import { DESK_ACCOUNT } from '../../../src/server/domain/market/desk.ts';
import { deskExposure } from '../../../src/server/domain/market/exposure.ts';
import { hedgeExposure } from '../../../src/server/domain/market/hedge.ts';
import { unitsOf } from '../../../src/lib/money.ts';

/**
 * Hedging the desk through a real ccxt client against the binance stand-in, which checks each order's HMAC signature
 * as Binance does. The desk is short ETH and long BTC by what two swaps moved; past the threshold each is hedged once,
 * recorded with the exchange's answer, and the exposure comes back to (about) zero. A refused order is FAILED and
 * retried next round; an order whose answer never came stays SENT and stops that asset's hedging.
 */
const KEYS = { apiKey: 'hedge-key', secret: 'hedge-secret' };
const world = (network: string) => systemAccountId(SYSTEM_ACCOUNTS.world(network));

describe('hedging the swap desk', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let standIn: ExchangeStandIn;
  const rates = fixedRates({ BTC: '65000', ETH: '3200', USDT: '1' });
  const settings = { exchange: 'binance', thresholdUsd: '5000' };
  const hedgeWith = (exchange: HedgePort) => hedgeExposure(database.pool, { rates, exchange, settings, log: quietLog });
  const hedges = async () =>
    (await database.pool.query<{ asset: string; side: string; amount: string; state: string; order_id: string | null; filled: string | null }>('SELECT asset, side, amount, state, order_id, filled FROM desk_hedges ORDER BY created_at, asset')).rows;

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    ({ database } = await openTestCustody(testDatabase.url));
    standIn = await startExchangeStandIn({ binance: KEYS });
    // What two swaps would leave: the desk sold 3 ETH to a user and bought 0.15 BTC from one.
    const { accountId } = await createWalletAccount(database.pool);
    await ensureUserLedgerAccount(database.pool, accountId);
    await post(database.pool, {
      key: 'test:desk-moves',
      kind: 'SWAP',
      postings: [
        { account: DESK_ACCOUNT, currency: 'ETH', bucket: 'AVAILABLE', amount: unitsOf(-3n * 10n ** 18n) },
        { account: accountId, currency: 'ETH', bucket: 'AVAILABLE', amount: unitsOf(3n * 10n ** 18n) },
        { account: DESK_ACCOUNT, currency: 'BTC', bucket: 'AVAILABLE', amount: unitsOf(15_000_000n) },
        { account: world('BITCOIN'), currency: 'BTC', bucket: 'AVAILABLE', amount: unitsOf(-15_000_000n) },
      ],
    });
  });

  afterAll(async () => {
    if (database) expect(await auditFailures(database.pool)).toEqual([]);
    await database?.close();
    await testDatabase?.drop();
    await standIn?.close();
  });

  it('leaves an exposure under the threshold alone', async () => {
    const exchange = createHedgeExchange({ exchange: 'binance', ...KEYS, url: standIn.urls.binance });
    try {
      expect(await hedgeExposure(database.pool, { rates, exchange, settings: { ...settings, thresholdUsd: '10000' }, log: quietLog })).toBe(0);
      expect(standIn.orders).toEqual([]);
    } finally {
      await exchange.close();
    }
  });

  it('records a FAILED hedge when the exchange refuses the signature, and tries again next round', async () => {
    const wrong = createHedgeExchange({ exchange: 'binance', apiKey: KEYS.apiKey, secret: 'not-the-secret', url: standIn.urls.binance });
    try {
      expect(await hedgeWith(wrong)).toBe(0);
    } finally {
      await wrong.close();
    }
    expect(standIn.orders).toEqual([]);
    expect(standIn.refused.map((r) => r.code)).toContain(-1022);
    expect((await hedges()).map((h) => h.state)).toEqual(['FAILED', 'FAILED']);
  });

  it('hedges each asset past the threshold once with a signed market order and brings its exposure back to zero', async () => {
    const exchange = createHedgeExchange({ exchange: 'binance', ...KEYS, url: standIn.urls.binance });
    try {
      // Two rounds at once (two processes, or a run whose lease another took over): the exposure is hedged once.
      const sent = await Promise.all([hedgeWith(exchange), hedgeWith(exchange)]);
      expect(sent.reduce((a, b) => a + b, 0)).toBe(2);
      // Hedged: nothing is left to send.
      expect(await hedgeWith(exchange)).toBe(0);
    } finally {
      await exchange.close();
    }
    expect(standIn.orders.map((o) => ({ symbol: o.symbol, side: o.side, type: o.type, quantity: o.quantity }))).toEqual([
      { symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: '0.15' },
      { symbol: 'ETHUSDT', side: 'BUY', type: 'MARKET', quantity: '3' },
    ]);
    const filled = (await hedges()).filter((h) => h.state === 'FILLED');
    expect(filled).toEqual([
      expect.objectContaining({ asset: 'BTC', side: 'sell', amount: '0.15', filled: '0.15' }),
      expect.objectContaining({ asset: 'ETH', side: 'buy', amount: '3', filled: '3' }),
    ]);
    expect(filled.every((h) => h.order_id !== null && h.order_id !== '')).toBe(true);
    const exposure = await deskExposure(database.pool, await rates.prices());
    expect(exposure.filter((e) => e.asset === 'BTC' || e.asset === 'ETH').map((e) => [e.asset, e.net])).toEqual([
      ['BTC', 0n],
      ['ETH', 0n],
    ]);
  });

  it('never hedges an asset twice while one of its hedges has no answer', async () => {
    await database.pool.query(`INSERT INTO desk_hedges (client_order_id, exchange, asset, side, amount, exposure_usd, state, swap_order_ids) VALUES ('lost-1', 'binance', 'ETH', 'buy', '1', '-3200', 'SENT', '[]')`);
    await post(database.pool, {
      key: 'test:desk-moves-2',
      kind: 'SWAP',
      postings: [
        { account: DESK_ACCOUNT, currency: 'ETH', bucket: 'AVAILABLE', amount: unitsOf(-2n * 10n ** 18n) },
        { account: world('ETHEREUM'), currency: 'ETH', bucket: 'AVAILABLE', amount: unitsOf(2n * 10n ** 18n) },
      ],
    });
    const before = standIn.orders.length;
    const exchange = createHedgeExchange({ exchange: 'binance', ...KEYS, url: standIn.urls.binance });
    try {
      expect(await hedgeWith(exchange)).toBe(0);
    } finally {
      await exchange.close();
    }
    expect(standIn.orders.length).toBe(before);
  });
});
