import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Hono } from 'hono';
import { randomUUID } from 'node:crypto';
import { mnemonicToSeedSync } from '@scure/bip39';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { auditFailures, createWalletAccount, openTestCustody, quietLog, waitFor, type TestCustody } from '../../support/custody.ts';
import { fixedRates } from '../../support/prices.ts';
import type { Database } from '../../../src/server/db/database.ts';
import type { FeeEstimate, WithdrawalChainPort, HotWalletFees } from '../../../src/server/adapters/chains/port.ts';
import { DEFAULT_WITHDRAWAL_FEES } from '../../../src/server/config-withdrawals.ts';
import { deriveAddress } from '../../../src/server/domain/addresses.ts';
import { addAssets, listAssets } from '../../../src/server/domain/assets.ts';
import { confirmDeposits, scanDeposits } from '../../../src/server/domain/deposits.ts';
import { SYSTEM_ACCOUNTS, systemAccountId } from '../../../src/server/domain/ledger.ts';
import { purgeExpiredQuotes } from '../../../src/server/domain/market/quotes.ts';
import { createWithdrawalService } from '../../../src/server/domain/withdrawals/requests.ts';
import { processWithdrawals } from '../../../src/server/domain/withdrawals/worker.ts';
import { createAccountOwners } from '../../../src/server/http/account-owner.ts';
import { UnauthorizedError, type AccessTokenVerifier } from '../../../src/server/http/auth-middleware.ts';
import type { ApiEnv } from '../../../src/server/http/context.ts';
import { errorResponse } from '../../../src/server/http/errors.ts';
import { createWithdrawalApi } from '../../../src/server/http/withdrawal.ts';
import type { FeeView, WithdrawalView } from '../../../src/lib/wire/withdrawals.ts';
import { unitsOf } from '../../../src/lib/money.ts';

/**
 * Withdrawal fees that follow the network, through the send area's HTTP routes, the ledger and the devnet on
 * PostgreSQL: the network's estimate (here the devnet's, scaled at will to make it rise, or failing) priced in the
 * withdrawn token at fixed test prices, the preliminary fee's quote charged exactly, quotes that do not apply, and
 * the refusals (no price: 503 PRICE_UNAVAILABLE; no estimate: 503 WITHDRAWAL_FEE_UNAVAILABLE).
 *
 * Devnet TRON: a TRC-20 transfer costs 13 TRX. At TRX $0.12 and USDT $1 that is 1.56 USDT, 1.872 with 20 %: above
 * the 1 USDT floor. A TRX transfer costs 0.1 TRX: the 1 TRX floor stays.
 */
const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');
const outside = (index: number) => deriveAddress(OUTSIDE_SEED, 'TRON', index, 'mainnet');
const PRICES = { TRX: '0.12', USDT: '1', BTC: '65000', ETH: '3200' };

describe('withdrawal fees that follow the network', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let custody: TestCustody;
  const rates = fixedRates(PRICES);
  /** The network's estimate is the devnet's times this; `nodeDown` makes it fail. */
  let gasFactor = 1n;
  let nodeDown = false;
  let app: Hono<ApiEnv>;
  let alice: { userId: string; accountId: string };
  let bob: { userId: string; accountId: string };

  const chain = (): WithdrawalChainPort & Pick<HotWalletFees, 'estimateFee'> => {
    const devnet = custody.chain;
    return {
      networks: devnet.networks,
      requiredConfirmations: (network) => devnet.requiredConfirmations(network),
      scan: (network, cursor, limit) => devnet.scan(network, cursor, limit),
      status: (network, transfers) => devnet.status(network, transfers),
      explorerUrl: (network) => devnet.explorerUrl(network),
      hotWalletAddress: (network) => devnet.hotWalletAddress(network),
      signWithdrawal: (order) => devnet.signWithdrawal(order),
      broadcast: (network, rawTx) => devnet.broadcast(network, rawTx),
      estimateFee: async (query): Promise<FeeEstimate> => {
        if (nodeDown) throw new Error('connect ECONNREFUSED: the node is unreachable');
        const estimate = await devnet.estimateFee(query);
        return { ...estimate, amount: unitsOf(estimate.amount * gasFactor) };
      },
    };
  };

  const call = async <T>(user: { userId: string }, path: string, body: Record<string, unknown>) => {
    const response = await app.request(`/api${path}`, { method: 'POST', headers: { authorization: `Bearer ${user.userId}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as T & { exceptionCode?: string } };
  };
  const fee = (user: { userId: string; accountId: string }, body: Record<string, unknown>) => call<FeeView>(user, `/${user.accountId}/withdrawal/preliminary/fee`, { amount: '100', ...body });
  const withdraw = (user: { userId: string; accountId: string }, body: Record<string, unknown>) =>
    call<WithdrawalView>(user, `/${user.accountId}/withdrawal`, { amount: '10', idempotencyKey: randomUUID(), ...body });

  const depositAddress = async (accountId: string, currency: string) => {
    await addAssets(database.pool, accountId, [currency], custody.catalogue, custody);
    return (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === currency)?.depositAddress ?? '';
  };
  const available = async (accountId: string, currency: string) => (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === currency)?.totalAvailable ?? '0';
  const fund = async (accountId: string, currency: string, amount: string) => {
    const address = await depositAddress(accountId, currency);
    await custody.chain.send({ currency, toAddress: address, amount });
    await waitFor(`${amount} ${currency} credited`, async () => {
      await scanDeposits(database.pool, custody.chain, 'TRON');
      await confirmDeposits(database.pool, custody.chain, quietLog);
      return (await available(accountId, currency)) !== '0';
    });
  };
  const completed = (id: string) =>
    waitFor(`withdrawal ${id} completed`, async () => {
      await processWithdrawals(database.pool, chain(), quietLog);
      const row = await database.pool.query<{ state: string }>('SELECT state FROM withdrawals WHERE id = $1', [id]);
      return row.rows[0]?.state === 'COMPLETED';
    });
  /** What the settlement of a withdrawal posted, per ledger account and bucket (atomic units). */
  const settlement = async (id: string) =>
    (
      await database.pool.query<{ ledger_account_id: string; currency: string; bucket: string; amount: string }>(
        `SELECT p.ledger_account_id, p.currency, p.bucket, p.amount::text FROM ledger_postings p JOIN ledger_entries e ON e.id = p.entry_id WHERE e.idempotency_key = $1 ORDER BY p.amount`,
        [`withdrawal:settle:${id}`],
      )
    ).rows;

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    ({ database, custody } = await openTestCustody(testDatabase.url));
    const verifier: AccessTokenVerifier = {
      // The bearer token is the user's id: sign-in is not what these tests are about.
      verify: async (token) => {
        if (!/^[0-9a-f-]{36}$/.test(token)) throw new UnauthorizedError('The access token is not valid');
        return { userId: token, sub: token };
      },
      cached: () => undefined,
      forgetUser: () => {},
      revokeGrant: () => {},
    };
    const withdrawals = createWithdrawalService({
      pool: database.pool,
      chain: chain(),
      rates,
      addresses: custody.addresses,
      catalogue: custody.catalogue,
      settings: { fees: DEFAULT_WITHDRAWAL_FEES, blockedAddresses: [], feeMarginBps: 2000 },
      // Every request asks the (scaled) estimate anew: the tests make it rise between two requests.
      feeCacheMs: 0,
    });
    const api = new Hono<ApiEnv>().basePath('/api');
    api.onError((error, c) => errorResponse(error, c, quietLog));
    api.route('/', createWithdrawalApi({ pool: database.pool, withdrawals, addresses: custody.addresses, owners: createAccountOwners({ pool: database.pool, auth: verifier }) }));
    app = api;
    [alice, bob] = [await createWalletAccount(database.pool), await createWalletAccount(database.pool)];
    await fund(alice.accountId, 'USDT_TRX', '200');
    await fund(alice.accountId, 'TRX', '100');
  });
  afterAll(async () => {
    if (database) expect(await auditFailures(database.pool)).toEqual([]);
    await database?.close();
    await testDatabase?.drop();
  });

  it('quotes the fee of the network now, fixed for 300 s, and charges exactly that though the estimate rose meanwhile', async () => {
    gasFactor = 1n;
    const to = await outside(1);
    const quoted = await fee(alice, { currency: 'USDT_TRX', depositAddress: to });
    expect(quoted).toMatchObject({ status: 200, body: { fee: '1.872', feeCurrency: 'USDT_TRX', amount: '100', receiveAmount: '98.128', internal: false, feeQuoteId: expect.any(String) } });
    const lifetime = Date.parse(quoted.body.expiresAt ?? '') - Date.now();
    expect(lifetime).toBeGreaterThan(290_000);
    expect(lifetime).toBeLessThanOrEqual(301_000);

    // The network's fee triples: a request now pays 5.616, the quoted one still 1.872.
    gasFactor = 3n;
    expect((await fee(alice, { currency: 'USDT_TRX', depositAddress: to })).body.fee).toBe('5.616');
    const sent = await withdraw(alice, { currency: 'USDT_TRX', amount: '10', depositAddress: to, feeQuoteId: quoted.body.feeQuoteId });
    expect(sent).toMatchObject({ status: 200, body: { state: 'IN_PROGRESS', amount: '10', fee: '1.872', receiveAmount: '8.128' } });
    await completed(sent.body.id);
    // The ledger: the user paid the amount, the recipient's 8.128 left to the network, the 1.872 went to fee income.
    expect(await settlement(sent.body.id)).toEqual([
      { ledger_account_id: expect.any(String), currency: 'USDT_TRX', bucket: 'ON_HOLD', amount: '-10000000' },
      { ledger_account_id: systemAccountId(SYSTEM_ACCOUNTS.feeIncome()), currency: 'USDT_TRX', bucket: 'AVAILABLE', amount: '1872000' },
      { ledger_account_id: systemAccountId(SYSTEM_ACCOUNTS.world('TRON')), currency: 'USDT_TRX', bucket: 'AVAILABLE', amount: '8128000' },
    ]);
    expect(await available(alice.accountId, 'USDT_TRX')).toBe('190');
    // On the chain, the recipient got the amount less the quoted fee.
    const arrived = await database.pool.query<{ amount: string }>(`SELECT amount::text FROM devnet_transactions WHERE network = 'TRON' AND to_address = $1 AND currency = 'USDT_TRX'`, [to]);
    expect(arrived.rows).toEqual([{ amount: '8128000' }]);

    // A quote pays one withdrawal: a second naming it pays the fee of now.
    const again = await withdraw(alice, { currency: 'USDT_TRX', amount: '10', depositAddress: to, feeQuoteId: quoted.body.feeQuoteId });
    expect(again.body).toMatchObject({ fee: '5.616', receiveAmount: '4.384' });
    await completed(again.body.id);
  });

  it('charges the fee of now for a quote that is expired, used, purged, another account’s, or for another currency or address', async () => {
    gasFactor = 1n;
    const [to, elsewhere] = [await outside(2), await outside(3)];
    const quote = async () => (await fee(alice, { currency: 'USDT_TRX', depositAddress: to })).body.feeQuoteId ?? '';
    gasFactor = 2n;
    const now = '3.744';

    const expired = await quote();
    await database.pool.query(`UPDATE withdrawal_fee_quotes SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired]);
    expect((await withdraw(alice, { currency: 'USDT_TRX', depositAddress: to, feeQuoteId: expired })).body.fee).toBe(now);
    // Another address than the one quoted: the estimate depends on the recipient.
    expect((await withdraw(alice, { currency: 'USDT_TRX', depositAddress: elsewhere, feeQuoteId: await quote() })).body.fee).toBe(now);
    // Another currency: TRX pays its own fee (its floor, 1), never the token's quote.
    expect((await withdraw(alice, { currency: 'TRX', depositAddress: to, feeQuoteId: await quote() })).body.fee).toBe('1');
    // Someone else's quote, or one that never was (purged): the fee of now.
    await fund(bob.accountId, 'USDT_TRX', '50');
    expect((await withdraw(bob, { currency: 'USDT_TRX', depositAddress: to, feeQuoteId: await quote() })).body.fee).toBe(now);
    expect((await withdraw(alice, { currency: 'USDT_TRX', depositAddress: to, feeQuoteId: randomUUID() })).body.fee).toBe(now);
    // Not an id at all: refused as a bad request.
    expect(await withdraw(alice, { currency: 'USDT_TRX', depositAddress: to, feeQuoteId: 'cheap' })).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
  });

  it('keeps the idempotency of a withdrawal: the same key and quote replay it, another quote under the key is refused, no quote as before', async () => {
    gasFactor = 1n;
    const to = await outside(4);
    const quoted = (await fee(alice, { currency: 'USDT_TRX', depositAddress: to })).body.feeQuoteId;
    const body = { currency: 'USDT_TRX', amount: '5', depositAddress: to, idempotencyKey: randomUUID(), feeQuoteId: quoted };
    const first = await withdraw(alice, body);
    expect(first.body.fee).toBe('1.872');
    gasFactor = 5n;
    expect(await withdraw(alice, body)).toMatchObject({ status: 200, body: { id: first.body.id, fee: '1.872' } });
    expect(await withdraw(alice, { ...body, feeQuoteId: randomUUID() })).toMatchObject({ status: 422, body: { exceptionCode: 'IDEMPOTENCY_KEY_REUSED' } });
    expect(await withdraw(alice, { ...body, feeQuoteId: undefined })).toMatchObject({ status: 422, body: { exceptionCode: 'IDEMPOTENCY_KEY_REUSED' } });
    const plain = { currency: 'USDT_TRX', amount: '20', depositAddress: to, idempotencyKey: randomUUID() };
    const withoutQuote = await withdraw(alice, plain);
    expect(withoutQuote.body.fee).toBe('9.36');
    expect((await withdraw(alice, plain)).body.id).toBe(withoutQuote.body.id);
  });

  it('fixes nothing for another user of the wallet or before an address is typed', async () => {
    gasFactor = 1n;
    const bobs = await depositAddress(bob.accountId, 'USDT_TRX');
    expect((await fee(alice, { currency: 'USDT_TRX', depositAddress: bobs })).body).toMatchObject({ fee: '0', internal: true, feeQuoteId: null, expiresAt: null });
    // No address yet: the network's fee now, priced as a transfer to the hot wallet, and no quote.
    expect((await fee(alice, { currency: 'USDT_TRX' })).body).toMatchObject({ fee: '1.872', internal: false, feeQuoteId: null, expiresAt: null });
    expect((await fee(alice, { currency: 'TRX', depositAddress: await outside(5) })).body).toMatchObject({ fee: '1', feeQuoteId: expect.any(String) });
  });

  it('refuses a token withdrawal with 503 PRICE_UNAVAILABLE when the market has no price, and the network coin goes on', async () => {
    gasFactor = 1n;
    const to = await outside(6);
    try {
      rates.set({ USDT: '1' });
      expect(await fee(alice, { currency: 'USDT_TRX', depositAddress: to })).toMatchObject({ status: 503, body: { exceptionCode: 'PRICE_UNAVAILABLE' } });
      expect(await withdraw(alice, { currency: 'USDT_TRX', depositAddress: to })).toMatchObject({ status: 503, body: { exceptionCode: 'PRICE_UNAVAILABLE' } });
      rates.set({ TRX: '0.12' });
      expect(await withdraw(alice, { currency: 'USDT_TRX', depositAddress: to })).toMatchObject({ status: 503, body: { exceptionCode: 'PRICE_UNAVAILABLE' } });
      // TRX pays its fee in TRX: no price needed.
      rates.set({});
      expect(await withdraw(alice, { currency: 'TRX', amount: '2', depositAddress: to })).toMatchObject({ status: 200, body: { fee: '1' } });
    } finally {
      rates.set(PRICES);
    }
  });

  it('refuses with 503 WITHDRAWAL_FEE_UNAVAILABLE while the node cannot estimate, except under a live quote', async () => {
    gasFactor = 1n;
    const to = await outside(7);
    const quoted = (await fee(alice, { currency: 'USDT_TRX', depositAddress: to })).body.feeQuoteId;
    nodeDown = true;
    try {
      expect(await fee(alice, { currency: 'USDT_TRX', depositAddress: to })).toMatchObject({ status: 503, body: { exceptionCode: 'WITHDRAWAL_FEE_UNAVAILABLE' } });
      expect(await withdraw(alice, { currency: 'USDT_TRX', depositAddress: to })).toMatchObject({ status: 503, body: { exceptionCode: 'WITHDRAWAL_FEE_UNAVAILABLE' } });
      // The quote already fixed the fee: nothing to estimate.
      expect(await withdraw(alice, { currency: 'USDT_TRX', depositAddress: to, feeQuoteId: quoted })).toMatchObject({ status: 200, body: { fee: '1.872' } });
    } finally {
      nodeDown = false;
    }
  });

  it('purges the quotes an hour past their end that no withdrawal used, and keeps the live and the used ones', async () => {
    const live = (await fee(alice, { currency: 'USDT_TRX', depositAddress: await outside(8) })).body.feeQuoteId;
    const kept = async () => (await database.pool.query<{ id: string; used: boolean }>('SELECT id, withdrawal_id IS NOT NULL AS used FROM withdrawal_fee_quotes')).rows;
    const used = (await kept()).filter((q) => q.used).map((q) => q.id);
    expect(used.length).toBeGreaterThan(0);
    await database.pool.query(`UPDATE withdrawal_fee_quotes SET expires_at = now() - interval '61 minutes' WHERE id <> $1`, [live]);
    await purgeExpiredQuotes(database.pool);
    expect((await kept()).map((q) => q.id).sort()).toEqual([live, ...used].sort());
  });
});
