import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';
import { auditFailures, TEST_MNEMONIC, waitFor } from '../../support/custody.ts';
import type { AssetItem } from '../../../src/server/domain/assets.ts';
import type { TransactionItem } from '../../../src/server/domain/history.ts';
import type { SwapOrderView, QuoteView } from '../../../src/server/domain/swaps/view.ts';
import { parseDecimal } from '../../../src/lib/amount.ts';
import { hold } from '../../../src/server/domain/ledger-writes.ts';
import { recordHistory } from '../../../src/server/domain/orders/history.ts';
import { unitsOf } from '../../../src/lib/money.ts';

/**
 * Swaps through the real server, ledger and PostgreSQL. Rates are fixed (no random walk: BTC 65000, USDT 1) and the
 * spread is 50 bps, so every amount is known. Expiry is driven by moving the order's and quote's expires_at into
 * the past in the database (the only clock the gateway reads for them), never by waiting 300 s.
 */
const ENV = {
  WALLET_SEED: TEST_MNEMONIC,
  DEVNET_BLOCK_MS: '100',
  CONFIRMATIONS: 'BITCOIN:1',
  WORKER_POLL_MS: '100',
  RATES_WALK_MS: '0',
  SWAP_SPREAD_BPS: '50',
  SWAP_LIMITS: JSON.stringify({ 'ETH/BTC': { min: '0.01', max: '5' } }),
};
const PASSWORD = 'a long enough passphrase 42';

describe('swaps', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let pool: pg.Pool;
  let alice: SignedInUser;
  let bob: SignedInUser;

  const call = gatewayClient(() => server.url);
  const at = (user: SignedInUser, path: string) => `/api/${user.accountId}${path}`;
  const balance = async (user: SignedInUser, currency: string) => {
    const items = (await call<AssetItem[]>(user, 'GET', at(user, '/asset'))).body;
    const item = items.find((a) => a.currency === currency);
    return { available: item?.totalAvailable ?? '0', onHold: item?.onHold ?? '0' };
  };
  /** Exact and at once, from the ledger (the asset list is a cache that follows a commit a moment later). */
  const ledgerBalance = async (user: SignedInUser, currency: string) => {
    const row = await pool.query<{ available: string; on_hold: string }>('SELECT available::text, on_hold::text FROM ledger_balances WHERE ledger_account_id = $1 AND currency = $2', [
      user.accountId,
      currency,
    ]);
    return { available: BigInt(row.rows[0]?.available ?? '0'), onHold: BigInt(row.rows[0]?.on_hold ?? '0') };
  };
  const history = async (user: SignedInUser, currency: string) =>
    (await call<{ result: TransactionItem[] }>(user, 'POST', at(user, '/asset/transactions'), { currency, sort: 'DESC', properties: ['createdDate'], pageSize: 100, pageNumber: 1 })).body.result;
  const quote = async (user: SignedInUser, body: Record<string, string>) => call<QuoteView>(user, 'POST', at(user, '/exchange/pre-calculate'), body);
  const order = async (user: SignedInUser, q: QuoteView, key = randomUUID()) =>
    call<SwapOrderView>(user, 'POST', at(user, '/exchange'), { quoteId: q.quoteId, sourceAmount: q.sourceAmount, idempotencyKey: key });
  const confirm = (user: SignedInUser, id: string, headers: Record<string, string> = {}) => call<SwapOrderView>(user, 'POST', at(user, `/exchange/confirm/${id}`), undefined, headers);
  const btcToUsdt = async (user: SignedInUser, sourceAmount: string) => {
    const q = await quote(user, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount });
    expect(q.status).toBe(200);
    const o = await order(user, q.body);
    expect(o.status).toBe(200);
    return o.body;
  };
  const deposit = async (user: SignedInUser, currency: string, amount: string) => {
    await call(user, 'POST', at(user, '/account/currency'), { currency });
    const address = (await balanceItem(user, currency))?.depositAddress ?? '';
    const sent = await fetch(`${server.url}/sandbox/devnet/deposit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ currency, address, amount }) });
    expect(sent.status).toBe(201);
    await waitFor(`${amount} ${currency} credited`, async () => (await balance(user, currency)).available === amount);
  };
  const balanceItem = async (user: SignedInUser, currency: string) => (await call<AssetItem[]>(user, 'GET', at(user, '/asset'))).body.find((a) => a.currency === currency);
  const expireInDatabase = async (orderId: string) => {
    await pool.query(`UPDATE swap_orders SET expires_at = now() - interval '1 second' WHERE id = $1`, [orderId]);
    await pool.query(`UPDATE swap_quotes SET expires_at = now() - interval '1 second' WHERE id = (SELECT quote_id FROM swap_orders WHERE id = $1)`, [orderId]);
  };

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    server = await startInProcess({ ...testServerEnv(database.url), ...ENV });
    pool = new pg.Pool({ connectionString: database.url, max: 3 });
    alice = await signUpAndSignIn(server.url, { email: `swap-alice-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
    bob = await signUpAndSignIn(server.url, { email: `swap-bob-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
    await deposit(alice, 'BTC', '0.05');
  });
  afterAll(async () => {
    await server?.close();
    if (pool) {
      try {
        expect(await auditFailures(pool)).toEqual([]);
      } finally {
        await pool.end();
      }
    }
    await database?.drop();
  });

  it('lists the pairs and their limits from configuration', async () => {
    const pairs = await call<{ sourceCurrency: string; destinationCurrency: string }[]>(alice, 'GET', at(alice, '/currency-pair'));
    expect(pairs.status).toBe(200);
    expect(pairs.body).toContainEqual({ sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX' });
    expect(pairs.body).toContainEqual({ sourceCurrency: 'USDT_TRX', destinationCurrency: 'BTC' });
    expect(pairs.body).toContainEqual({ sourceCurrency: 'BTC_LNG', destinationCurrency: 'BTC' });
    expect(pairs.body.some((p) => p.destinationCurrency === 'BTC_LNG' || p.sourceCurrency === p.destinationCurrency)).toBe(false);

    expect((await call(alice, 'GET', at(alice, '/limit/BTC/USDT_TRX'))).body).toEqual({ minLimit: '0.0002', maxLimit: '1.5', currency: 'BTC' });
    expect((await call(alice, 'GET', at(alice, '/limit/USDT_TRX/BTC'))).body).toEqual({ minLimit: '10', maxLimit: '100000', currency: 'USDT_TRX' });
    // SWAP_LIMITS names this pair.
    expect((await call(alice, 'GET', at(alice, '/limit/ETH/BTC'))).body).toEqual({ minLimit: '0.01', maxLimit: '5', currency: 'ETH' });
    expect(await call(alice, 'GET', at(alice, '/limit/BTC/BTC_LNG'))).toMatchObject({ status: 400, body: { exceptionCode: 'SWAP_UNSUPPORTED_PAIR' } });
    expect(await call(alice, 'GET', at(alice, '/limit/BTC/NOPE'))).toMatchObject({ status: 400, body: { exceptionCode: 'SWAP_UNSUPPORTED_PAIR' } });
    expect(await call(alice, 'GET', at(alice, '/limit/btc/x'))).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
  });

  it('quotes by source or by destination at the rate less the spread, valid for 300 s', async () => {
    const bySource = await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.001' });
    expect(bySource.status).toBe(200);
    // 0.001 BTC × 65000 = 65 USDT, less 0.5%.
    expect(bySource.body).toMatchObject({ sourceAmount: '0.001', destinationAmount: '64.675', fee: '0.325', feeCurrency: 'USDT_TRX', rate: '64675' });
    expect(bySource.body.expiresInSeconds).toBeGreaterThanOrEqual(298);
    expect(bySource.body.expiresInSeconds).toBeLessThanOrEqual(300);
    const byDestination = await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', destinationAmount: '64,675' });
    expect(byDestination.body).toMatchObject({ sourceAmount: '0.001', destinationAmount: '64.675' });
    const reverse = await quote(alice, { sourceCurrency: 'USDT_TRX', destinationCurrency: 'BTC', sourceAmount: '100' });
    // 100 USDT / 65000, less 0.5%, rounded down to satoshi.
    expect(reverse.body).toMatchObject({ sourceAmount: '100', destinationAmount: '0.00153076', feeCurrency: 'BTC' });

    const refused: [Record<string, string>, string][] = [
      [{ sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '1', destinationAmount: '1' }, 'VALIDATION'],
      [{ sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX' }, 'VALIDATION'],
      [{ sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '-1' }, 'VALIDATION'],
      [{ sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '1.123456789' }, 'VALIDATION'],
      [{ sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0' }, 'SWAP_AMOUNT_TOO_SMALL'],
      [{ sourceCurrency: 'USDT_TRX', destinationCurrency: 'BTC', sourceAmount: '0.0000001' }, 'SWAP_AMOUNT_TOO_SMALL'],
      [{ sourceCurrency: 'BTC', destinationCurrency: 'BTC', sourceAmount: '1' }, 'SWAP_UNSUPPORTED_PAIR'],
      [{ sourceCurrency: 'BTC', destinationCurrency: 'BTC_LNG', sourceAmount: '1' }, 'SWAP_UNSUPPORTED_PAIR'],
    ];
    for (const [body, code] of refused) expect(await quote(alice, body), JSON.stringify(body)).toMatchObject({ status: 400, body: { exceptionCode: code } });
  });

  it('refuses amounts outside the limits and beyond the balance, holding nothing', async () => {
    const small = await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.0001' });
    expect(await order(alice, small.body)).toMatchObject({ status: 400, body: { exceptionCode: 'SWAP_MIN_LIMIT', message: 'Min amount limit is: 0.0002 BTC' } });
    const big = await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '2' });
    expect(await order(alice, big.body)).toMatchObject({ status: 400, body: { exceptionCode: 'SWAP_MAX_LIMIT', message: 'Max amount limit is: 1.5 BTC' } });
    // By destination: the computed source is what the limit applies to.
    const bigByDestination = await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', destinationAmount: '200000' });
    expect(await order(alice, bigByDestination.body)).toMatchObject({ status: 400, body: { exceptionCode: 'SWAP_MAX_LIMIT' } });
    const more = await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.5' });
    expect(await order(alice, more.body)).toMatchObject({ status: 400, body: { exceptionCode: 'SWAP_NOT_ENOUGH' } });
    await expect.poll(() => balance(alice, 'BTC')).toEqual({ available: '0.05', onHold: '0' });
    // The order must carry the quote's own amount, and only its owner may use it.
    const fine = await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.001' });
    expect(await call(alice, 'POST', at(alice, '/exchange'), { quoteId: fine.body.quoteId, sourceAmount: '0.002', idempotencyKey: randomUUID() })).toMatchObject({
      status: 400,
      body: { exceptionCode: 'SWAP_QUOTE_MISMATCH' },
    });
    expect(await call(bob, 'POST', at(bob, '/exchange'), { quoteId: fine.body.quoteId, sourceAmount: '0.001', idempotencyKey: randomUUID() })).toMatchObject({
      status: 404,
      body: { exceptionCode: 'SWAP_QUOTE_NOT_FOUND' },
    });
    expect(await call(alice, 'POST', at(alice, '/exchange'), { quoteId: fine.body.quoteId, sourceAmount: '0.001' })).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
  });

  it('an order under review holds nothing and shows nothing; confirming holds and settles both currencies and the spread at once', async () => {
    const before = await balance(alice, 'BTC');
    const q = await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.004' });
    const key = randomUUID();
    const created = await order(alice, q.body, key);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ state: 'PENDING', sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.004', destinationAmount: '258.7', fee: '1.3' });
    // The same key and request give the same order; another quote under that key is refused; the quote serves once.
    expect((await order(alice, q.body, key)).body.id).toBe(created.body.id);
    const other = await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.004' });
    expect(await order(alice, other.body, key)).toMatchObject({ status: 422, body: { exceptionCode: 'IDEMPOTENCY_KEY_REUSED' } });
    expect(await order(alice, q.body)).toMatchObject({ status: 409, body: { exceptionCode: 'SWAP_QUOTE_USED' } });

    // The review is no transaction: no hold, no ledger entry, no history item (issue 33 item 1).
    expect(before).toEqual({ available: '0.05', onHold: '0' });
    expect(await ledgerBalance(alice, 'BTC')).toEqual({ available: 5_000_000n, onHold: 0n });
    expect(created.body.transactionId).toBeNull();
    expect((await history(alice, 'BTC')).some((t) => t.transactionType === 'EXCHANGE')).toBe(false);
    expect((await pool.query('SELECT 1 FROM ledger_entries WHERE reference = $1', [`swap:${created.body.id}`])).rowCount).toBe(0);

    const confirmed = await confirm(alice, created.body.id);
    expect(confirmed).toMatchObject({ status: 200, body: { id: created.body.id, state: 'COMPLETED', transactionId: expect.any(String) } });
    const swapping = (await history(alice, 'BTC')).find((t) => t.transactionType === 'EXCHANGE');
    expect(swapping).toMatchObject({ id: confirmed.body.transactionId, state: 'COMPLETED', fromCurrency: 'BTC', toCurrency: 'USDT_TRX', fromAmount: '0.004', toAmount: '258.7' });
    const kinds = await pool.query<{ kind: string }>('SELECT kind FROM ledger_entries WHERE reference = $1 ORDER BY id', [`swap:${created.body.id}`]);
    expect(kinds.rows.map((r) => r.kind)).toEqual(['SWAP_HOLD', 'SWAP']);
    // The history comes with the currency's balance from the same snapshot (issue 33 item 1: one refresh for both).
    const page = await call<{ result: TransactionItem[]; balance: unknown }>(alice, 'POST', at(alice, '/asset/transactions'), { currency: 'USDT_TRX', sort: 'DESC', properties: ['createdDate'], pageSize: 100, pageNumber: 1 });
    expect(page.body.balance).toEqual({ currency: 'USDT_TRX', totalAvailable: '258.7', onHold: '0' });
    expect(page.body.result.map((t) => t.id)).toContain(confirmed.body.transactionId);
    await expect.poll(() => balance(alice, 'BTC')).toEqual({ available: '0.046', onHold: '0' });
    await expect.poll(() => balance(alice, 'USDT_TRX')).toEqual({ available: '258.7', onHold: '0' });
    const swapped = (await history(alice, 'USDT_TRX')).find((t) => t.id === swapping?.id);
    expect(swapped).toMatchObject({ state: 'COMPLETED', transactionType: 'EXCHANGE', fee: '1.3', feeCurrency: 'USDT_TRX', exchangeRate: '64675' });
    // One entry: user hold −0.004 BTC, liquidity +0.004 BTC, liquidity −260 USDT, user +258.7, fee income +1.3.
    const postings = await pool.query<{ code: string | null; currency: string; bucket: string; amount: string }>(
      `SELECT a.code, p.currency, p.bucket, p.amount::text FROM ledger_entries e JOIN ledger_postings p ON p.entry_id = e.id
         JOIN ledger_accounts a ON a.id = p.ledger_account_id WHERE e.idempotency_key = $1 ORDER BY p.currency, p.amount`,
      [`swap:confirm:${created.body.id}`],
    );
    expect(postings.rows).toEqual([
      { code: `USER:${alice.accountId}`, currency: 'BTC', bucket: 'ON_HOLD', amount: '-400000' },
      { code: 'SWAP_LIQUIDITY', currency: 'BTC', bucket: 'AVAILABLE', amount: '400000' },
      { code: 'SWAP_LIQUIDITY', currency: 'USDT_TRX', bucket: 'AVAILABLE', amount: '-260000000' },
      { code: 'FEE_INCOME', currency: 'USDT_TRX', bucket: 'AVAILABLE', amount: '1300000' },
      { code: `USER:${alice.accountId}`, currency: 'USDT_TRX', bucket: 'AVAILABLE', amount: '258700000' },
    ]);
    // Confirming again answers the same and moves nothing.
    expect(await confirm(alice, created.body.id)).toMatchObject({ status: 200, body: { state: 'COMPLETED' } });
    await expect.poll(() => balance(alice, 'USDT_TRX')).toEqual({ available: '258.7', onHold: '0' });
    expect(await call(alice, 'POST', at(alice, `/exchange/cancel/${created.body.id}`))).toMatchObject({ status: 409, body: { exceptionCode: 'SWAP_ORDER_CLOSED' } });
  });

  it('exchanges once when two confirmations arrive at once', async () => {
    const created = await btcToUsdt(alice, '0.001');
    const usdt = await ledgerBalance(alice, 'USDT_TRX');
    const answers = await Promise.all([confirm(alice, created.id), confirm(alice, created.id), confirm(alice, created.id)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.map((a) => a.body.state)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    const entries = await pool.query(`SELECT 1 FROM ledger_entries WHERE reference = $1 AND kind = 'SWAP'`, [`swap:${created.id}`]);
    expect(entries.rowCount).toBe(1);
    const after = await ledgerBalance(alice, 'USDT_TRX');
    expect(after.available - usdt.available).toBe(64_675_000n);
  });

  it('two reviews the balance pays only one of: the confirmations race, one swaps, the other is refused and holds nothing', async () => {
    await deposit(bob, 'BTC', '0.01');
    const first = await btcToUsdt(bob, '0.006');
    const second = await btcToUsdt(bob, '0.006');
    const answers = await Promise.all([confirm(bob, first.id), confirm(bob, second.id)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    expect(answers.find((a) => a.status === 400)?.body).toMatchObject({ exceptionCode: 'SWAP_NOT_ENOUGH' });
    expect(await ledgerBalance(bob, 'BTC')).toEqual({ available: 400_000n, onHold: 0n });
    expect((await history(bob, 'BTC')).filter((t) => t.transactionType === 'EXCHANGE').map((t) => t.state)).toEqual(['COMPLETED']);
  });

  it('refuses a confirmation after expiry, leaving no trace; refuses an expired quote', async () => {
    const before = await ledgerBalance(alice, 'BTC');
    const items = (await history(alice, 'BTC')).length;
    const created = await btcToUsdt(alice, '0.002');
    expect(await ledgerBalance(alice, 'BTC')).toEqual(before);
    await expireInDatabase(created.id);
    expect(await confirm(alice, created.id)).toMatchObject({ status: 410, body: { exceptionCode: 'SWAP_ORDER_EXPIRED' } });
    expect(await confirm(alice, created.id)).toMatchObject({ status: 410, body: { exceptionCode: 'SWAP_ORDER_EXPIRED' } });
    expect(await ledgerBalance(alice, 'BTC')).toEqual(before);
    expect((await history(alice, 'BTC')).length).toBe(items);
    expect((await pool.query('SELECT 1 FROM ledger_entries WHERE reference = $1', [`swap:${created.id}`])).rowCount).toBe(0);

    const q = await quote(alice, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.001' });
    await pool.query(`UPDATE swap_quotes SET expires_at = now() - interval '1 second' WHERE id = $1`, [q.body.quoteId]);
    expect(await order(alice, q.body)).toMatchObject({ status: 410, body: { exceptionCode: 'SWAP_QUOTE_EXPIRED' } });
  });

  it('the worker expires abandoned orders; one held at creation (before confirm-time holds) gets its hold back and fails', async () => {
    const items = (await history(alice, 'BTC')).length;
    const created = await btcToUsdt(alice, '0.003');
    await expireInDatabase(created.id);
    await waitFor('the worker to expire the order', async () => (await call<SwapOrderView>(alice, 'GET', at(alice, `/exchange/${created.id}`))).body.state === 'EXPIRED');
    expect((await history(alice, 'BTC')).length).toBe(items);
    expect((await ledgerBalance(alice, 'BTC')).onHold).toBe(0n);

    // An order as the previous release left it: held and shown as Swapping from its creation.
    const legacy = await btcToUsdt(alice, '0.001');
    await hold(pool, { key: `swap:hold:${legacy.id}`, kind: 'SWAP_HOLD', reference: `swap:${legacy.id}`, account: alice.accountId, currency: 'BTC', amount: unitsOf(100_000n) });
    const shown = await recordHistory(pool, { walletAccountId: alice.accountId, transactionType: 'EXCHANGE', direction: 'WITHDRAWAL', state: 'IN_PROGRESS', currency: 'BTC', amount: '100000', reference: `swap:${legacy.id}` });
    await pool.query('UPDATE swap_orders SET wallet_transaction_id = $2 WHERE id = $1', [legacy.id, shown]);
    expect((await ledgerBalance(alice, 'BTC')).onHold).toBe(100_000n);
    await expireInDatabase(legacy.id);
    await waitFor('the worker to expire the held order', async () => (await call<SwapOrderView>(alice, 'GET', at(alice, `/exchange/${legacy.id}`))).body.state === 'EXPIRED');
    expect((await ledgerBalance(alice, 'BTC')).onHold).toBe(0n);
    expect((await history(alice, 'BTC')).find((t) => t.id === shown)).toMatchObject({ state: 'FAILED' });
  });

  it('cancels a pending order (a fresh rate replaces it): the hold comes back and no history item stays', async () => {
    const created = await btcToUsdt(alice, '0.001');
    expect(await call(alice, 'POST', at(alice, `/exchange/cancel/${created.id}`))).toMatchObject({ status: 200, body: { state: 'CANCELLED' } });
    expect(await call(alice, 'POST', at(alice, `/exchange/cancel/${created.id}`))).toMatchObject({ status: 200, body: { state: 'CANCELLED' } });
    await expect.poll(async () => (await balance(alice, 'BTC')).onHold).toBe('0');
    expect((await history(alice, 'BTC')).some((t) => t.id === created.transactionId)).toBe(false);
    expect(await confirm(alice, created.id)).toMatchObject({ status: 409, body: { exceptionCode: 'SWAP_ORDER_CANCELLED' } });
  });

  it('a confirm and a cancel at once (leaving the review as it is confirmed): the order ends once, the hold never stays', async () => {
    for (let round = 0; round < 3; round += 1) {
      const created = await btcToUsdt(alice, '0.001');
      const [confirmed, cancelled] = await Promise.all([confirm(alice, created.id), call(alice, 'POST', at(alice, `/exchange/cancel/${created.id}`))]);
      const final = (await call<SwapOrderView>(alice, 'GET', at(alice, `/exchange/${created.id}`))).body.state;
      expect(['COMPLETED', 'CANCELLED']).toContain(final);
      if (final === 'COMPLETED') expect([confirmed.status, cancelled.status]).toEqual([200, 409]);
      else expect([confirmed.status, cancelled.status]).toEqual([409, 200]);
      await expect.poll(async () => (await balance(alice, 'BTC')).onHold).toBe('0');
    }
  });

  it('asks for the passcode when it is on', async () => {
    expect((await call(alice, 'POST', '/api/user/pinCode/enable', { pinCode: '2580' })).status).toBe(200);
    const created = await btcToUsdt(alice, '0.001');
    expect(await confirm(alice, created.id)).toMatchObject({ status: 403, body: { exceptionCode: 'B2C_USM0031' } });
    expect(await confirm(alice, created.id, { pincode: '1111' })).toMatchObject({ status: 403, body: { exceptionCode: 'B2C_USM0031' } });
    expect((await call<SwapOrderView>(alice, 'GET', at(alice, `/exchange/${created.id}`))).body.state).toBe('PENDING');
    expect(await confirm(alice, created.id, { pincode: '2580' })).toMatchObject({ status: 200, body: { state: 'COMPLETED' } });
  });

  it("refuses another user's account and unknown orders", async () => {
    for (const [method, path] of [
      ['GET', '/currency-pair'],
      ['GET', '/limit/BTC/USDT_TRX'],
      ['POST', '/exchange/pre-calculate'],
      ['POST', '/exchange'],
      ['POST', `/exchange/confirm/${randomUUID()}`],
    ] as const) {
      expect((await call(bob, method, at(alice, path), method === 'POST' ? {} : undefined)).status, path).toBe(403);
      expect((await call(undefined, method, at(alice, path))).status, path).toBe(401);
    }
    expect(await confirm(bob, randomUUID())).toMatchObject({ status: 404, body: { exceptionCode: 'SWAP_ORDER_NOT_FOUND' } });
    expect(await confirm(bob, 'nope')).toMatchObject({ status: 404, body: { exceptionCode: 'SWAP_ORDER_NOT_FOUND' } });
  });

  /**
   * Issue 14 item 11, replayed: quotes collected at one price and taken after BTC fell gave a riskless profit. The
   * reference price is moved in the database (the walk's own row; the server reads it at most once a second) and the
   * slippage is the default 50 bps. Carol swaps only through the attack, so her balances are exact.
   */
  describe('a quote is no free option', () => {
    let carol: SignedInUser;
    const setBtcUsd = async (usd: string) => {
      await pool.query(
        `INSERT INTO app_setting (key, value) VALUES ('rates.walk', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now()`,
        [{ prices: { BTC: parseDecimal(usd, 8).toString() } }],
      );
      await new Promise((resolve) => setTimeout(resolve, 1_100));
    };
    const btcUsdt = (user: SignedInUser, sourceAmount: string) => quote(user, { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount });
    const usdtBtc = (user: SignedInUser, sourceAmount: string) => quote(user, { sourceCurrency: 'USDT_TRX', destinationCurrency: 'BTC', sourceAmount });
    /** Orders and confirms a quote; the first refusal is the answer. */
    const take = async (user: SignedInUser, q: QuoteView) => {
      const created = await order(user, q);
      return created.status === 200 ? confirm(user, created.body.id) : created;
    };
    const wallet = async () => ({ btc: await ledgerBalance(carol, 'BTC'), usdt: await ledgerBalance(carol, 'USDT_TRX') });

    beforeAll(async () => {
      carol = await signUpAndSignIn(server.url, { email: `swap-carol-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
      await setBtcUsd('65000');
      await deposit(carol, 'BTC', '0.05');
    });
    afterAll(async () => {
      await pool.query(`DELETE FROM app_setting WHERE key = 'rates.walk'`);
    });

    it('refuses a stale quote and a stale order once BTC fell beyond the slippage: nothing moves', async () => {
      await setBtcUsd('65000');
      const stale = await btcUsdt(carol, '0.01');
      expect(stale.body).toMatchObject({ destinationAmount: '646.75' });
      const held = await order(carol, (await btcUsdt(carol, '0.01')).body);
      expect(held.status).toBe(200);
      const start = await wallet();
      expect(start.btc).toEqual({ available: 5_000_000n, onHold: 0n });

      await setBtcUsd('64000');
      expect(await order(carol, stale.body)).toMatchObject({ status: 410, body: { exceptionCode: 'SWAP_QUOTE_EXPIRED' } });
      expect(await confirm(carol, held.body.id)).toMatchObject({ status: 410, body: { exceptionCode: 'SWAP_ORDER_EXPIRED' } });
      // Asked again, the same refusal; nothing was held, nothing moved and no USDT arrived.
      expect(await confirm(carol, held.body.id)).toMatchObject({ status: 410, body: { exceptionCode: 'SWAP_ORDER_EXPIRED' } });
      expect(await wallet()).toEqual({ btc: { available: 5_000_000n, onHold: 0n }, usdt: { available: 0n, onHold: 0n } });
      const entries = await pool.query<{ kind: string }>(`SELECT kind FROM ledger_entries WHERE reference = $1 ORDER BY id`, [`swap:${held.body.id}`]);
      expect(entries.rows.map((r) => r.kind)).toEqual([]);
      expect((await call<SwapOrderView>(carol, 'GET', at(carol, `/exchange/${held.body.id}`))).body.state).toBe('EXPIRED');
      expect((await history(carol, 'BTC')).some((t) => t.transactionType === 'EXCHANGE')).toBe(false);
      // A fresh quote at the new price is what the user gets ('Update rate').
      expect((await btcUsdt(carol, '0.01')).body).toMatchObject({ destinationAmount: '636.8' });
    });

    it('a round trip on quotes collected earlier yields no profit: beyond the slippage refused, within it the spreads eat the move', async () => {
      // Quotes collected while BTC was at 65 000 (sell BTC) and, earlier, at 64 350 (buy BTC back cheaply).
      await setBtcUsd('65000');
      const first = await take(carol, (await btcUsdt(carol, '0.01')).body);
      expect(first).toMatchObject({ status: 200, body: { state: 'COMPLETED', destinationAmount: '646.75' } });
      await setBtcUsd('64350');
      const cheapBuyBack = await usdtBtc(carol, '646.75');
      // More BTC than the 0.01 sold for it: taken together at a later moment, the two quotes would be a riskless profit.
      expect(cheapBuyBack.body.destinationAmount).toBe('0.01000024');
      await setBtcUsd('65000');
      const richSell = await btcUsdt(carol, '0.01');
      const start = await wallet();

      // BTC down 1.5 %: the rich sell is refused, so there is nothing to buy back.
      await setBtcUsd('64000');
      expect(await take(carol, richSell.body)).toMatchObject({ status: 410, body: { exceptionCode: 'SWAP_QUOTE_EXPIRED' } });
      expect(await wallet()).toEqual(start);

      // BTC down 0.5 %, the edge of the slippage: the sell is honoured, the cheap buy-back (BTC up 0.5 % since) is
      // not, and buying back at the current rate returns less BTC than was sold.
      await setBtcUsd('64675');
      expect(await take(carol, cheapBuyBack.body)).toMatchObject({ status: 410, body: { exceptionCode: 'SWAP_QUOTE_EXPIRED' } });
      const sold = await take(carol, richSell.body);
      expect(sold).toMatchObject({ status: 200, body: { state: 'COMPLETED', destinationAmount: '646.75' } });
      const back = await take(carol, (await usdtBtc(carol, '646.75')).body);
      expect(back).toMatchObject({ status: 200, body: { state: 'COMPLETED', destinationAmount: '0.00995' } });
      const end = await wallet();
      expect(end.usdt).toEqual(start.usdt);
      expect(end.btc.onHold).toBe(0n);
      expect(end.btc.available - start.btc.available).toBe(-5_000n);
    });

    it('honours a quote the market moved in the user\'s disfavour, at its own amounts', async () => {
      await setBtcUsd('65000');
      const q = await btcUsdt(carol, '0.001');
      await setBtcUsd('70000');
      const before = await wallet();
      expect(await take(carol, q.body)).toMatchObject({ status: 200, body: { state: 'COMPLETED', destinationAmount: '64.675' } });
      const after = await wallet();
      expect(after.usdt.available - before.usdt.available).toBe(64_675_000n);
      expect(after.btc.available - before.btc.available).toBe(-100_000n);
    });
  });
});
