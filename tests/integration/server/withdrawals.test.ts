import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mnemonicToSeedSync } from '@scure/bip39';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { launchWorker, type LaunchedWorker } from '../../support/server.ts';
import { gatewayClient } from '../../support/http.ts';
import { auditFailures, TEST_MNEMONIC, waitFor } from '../../support/custody.ts';
import { deriveAddress } from '../../../src/server/domain/addresses.ts';
import type { AssetItem } from '../../../src/server/domain/assets.ts';
import type { TransactionItem } from '../../../src/server/domain/history.ts';
import type { WithdrawalView } from '../../../src/server/domain/withdrawals/view.ts';

/**
 * Withdrawals through the real server, worker, ledger and PostgreSQL on the devnet: transfers between users, outside
 * withdrawals to COMPLETED and FAILED, concurrency, idempotency, bad inputs, and a worker killed mid-way.
 */
const PASSWORD = 'a long enough passphrase 42';
// Another BIP39 test vector: addresses nobody in this wallet owns.
const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');
const outside = (index: number) => deriveAddress(OUTSIDE_SEED, 'BITCOIN', index, 'mainnet');
let blockedAddress = '';

function client(url: () => string) {
  const call = gatewayClient(url);
  const at = (user: SignedInUser, path: string) => `/api/${user.accountId}${path}`;
  const item = async (user: SignedInUser, currency: string) => (await call<AssetItem[]>(user, 'GET', at(user, '/asset'))).body.find((a) => a.currency === currency);
  const balance = async (user: SignedInUser, currency: string) => {
    const found = await item(user, currency);
    return { available: found?.totalAvailable ?? '0', onHold: found?.onHold ?? '0' };
  };
  const addressOf = async (user: SignedInUser, currency: string) => {
    await call(user, 'POST', at(user, '/account/currency'), { currency });
    return (await item(user, currency))?.depositAddress ?? '';
  };
  const deposit = async (user: SignedInUser, currency: string, amount: string) => {
    const before = (await balance(user, currency)).available;
    const address = await addressOf(user, currency);
    const sent = await fetch(`${url()}/sandbox/devnet/deposit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ currency, address, amount }) });
    expect(sent.status).toBe(201);
    await waitFor(`${amount} ${currency} credited`, async () => (await balance(user, currency)).available !== before);
  };
  const history = async (user: SignedInUser, currency: string) =>
    (await call<{ result: TransactionItem[] }>(user, 'POST', at(user, '/asset/transactions'), { currency, sort: 'DESC', properties: ['createdDate'], pageSize: 100, pageNumber: 1 })).body.result;
  const withdraw = (user: SignedInUser, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    call<WithdrawalView>(user, 'POST', at(user, '/withdrawal'), { currency: 'BTC', idempotencyKey: randomUUID(), ...body }, headers);
  const withdrawal = (user: SignedInUser, id: string) => call<WithdrawalView>(user, 'GET', at(user, `/withdrawal/${id}`));
  const settled = (user: SignedInUser, id: string, timeoutMs = 20_000) =>
    waitFor(`withdrawal ${id} to end`, async () => {
      const found = (await withdrawal(user, id)).body;
      return found.state !== 'IN_PROGRESS' ? found : undefined;
    }, timeoutMs);
  return { call, at, balance, addressOf, deposit, history, withdraw, withdrawal, settled };
}

describe('withdrawals', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let pool: pg.Pool;
  let alice: SignedInUser;
  let bob: SignedInUser;
  const api = client(() => server.url);
  const signUp = (name: string) => signUpAndSignIn(server.url, { email: `withdraw-${name}-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });

  beforeAll(async () => {
    blockedAddress = await outside(99);
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    server = await startInProcess({
      ...testServerEnv(database.url),
      WALLET_SEED: TEST_MNEMONIC,
      DEVNET_BLOCK_MS: '100',
      CONFIRMATIONS: 'BITCOIN:2',
      WORKER_POLL_MS: '100',
      RATES_WALK_MS: '0',
      WITHDRAWAL_FEES: JSON.stringify({ BTC: '0.0001' }),
      WITHDRAWAL_BLOCKED_ADDRESSES: blockedAddress,
    });
    pool = new pg.Pool({ connectionString: database.url, max: 3 });
    [alice, bob] = await Promise.all([signUp('alice'), signUp('bob')]);
    await api.deposit(alice, 'BTC', '0.05');
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

  it("checks addresses: format and checksum, the block list, the hot wallet, another user's, one's own, a business", async () => {
    const bobAddress = await api.addressOf(bob, 'BTC');
    const aliceAddress = await api.addressOf(alice, 'BTC');
    const check = (address: string, currency = 'BTC') => api.call(alice, 'POST', api.at(alice, '/withdrawal/check-address'), { account: alice.accountId, currency, address });
    expect((await check(bobAddress)).body).toMatchObject({ checkResult: 'VALID', belongsToSameUser: false, accountType: 'B2C', internal: true });
    // A bech32 address in upper case is the same address.
    expect((await check(bobAddress.toUpperCase())).body).toMatchObject({ checkResult: 'VALID', internal: true, address: bobAddress });
    expect((await check(aliceAddress)).body).toMatchObject({ checkResult: 'VALID', belongsToSameUser: true });
    expect((await check(await outside(1))).body).toMatchObject({ checkResult: 'VALID', belongsToSameUser: false, internal: false, accountType: 'B2C' });
    expect((await check(blockedAddress)).body).toMatchObject({ checkResult: 'BLOCKED' });
    // A bad checksum has the right shape for the browser but not for the server.
    const broken = `${bobAddress.slice(0, -1)}${bobAddress.endsWith('q') ? 'p' : 'q'}`;
    expect((await check(broken)).body).toMatchObject({ checkResult: 'INVALID' });
    expect((await check(bobAddress, 'ETH')).body).toMatchObject({ checkResult: 'INVALID' });

    const carol = await signUp('carol');
    const shop = await api.addressOf(carol, 'BTC');
    await pool.query(`INSERT INTO business_accounts (wallet_account_id, name) VALUES ($1, 'Coffee shop')`, [carol.accountId]);
    expect((await check(shop)).body).toMatchObject({ checkResult: 'VALID', accountType: 'B2B', internal: true, recipientName: 'Coffee shop' });

  });

  it("quotes the fee: the configured floor (or the network's fee above it) to an outside address, none to another user", async () => {
    const fee = (body: Record<string, unknown>) => api.call(alice, 'POST', api.at(alice, '/withdrawal/preliminary/fee'), { account: alice.accountId, currency: 'BTC', ...body });
    expect((await fee({ amount: 100 })).body).toMatchObject({ fee: '0.0001', feeCurrency: 'BTC', amount: '100', receiveAmount: '99.9999', internal: false });
    expect((await fee({ amount: '0.01', depositAddress: await outside(1) })).body).toMatchObject({ fee: '0.0001', receiveAmount: '0.0099', internal: false });
    expect((await fee({ amount: '0.01', depositAddress: await api.addressOf(bob, 'BTC') })).body).toMatchObject({ fee: '0', receiveAmount: '0.01', internal: true });
    // A token pays what the network asks where that is above its floor (1 USDT): the devnet's 13 TRX for a TRC-20
    // transfer at the reference $0.12, plus 20 % (WITHDRAWAL_FEE_MARGIN_BPS), is 1.872 USDT.
    expect((await fee({ currency: 'USDT_TRX', amount: '100' })).body).toMatchObject({ fee: '1.872', receiveAmount: '98.128' });
  });

  it("settles a transfer to another user's deposit address at once, without a fee, in both histories", async () => {
    const bobAddress = await api.addressOf(bob, 'BTC');
    const sent = await api.withdraw(alice, { amount: '0.01', depositAddress: bobAddress });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ state: 'COMPLETED', internal: true, amount: '0.01', fee: '0', receiveAmount: '0.01', depositAddress: bobAddress, hash: null, accountToType: 'B2C' });
    expect(await api.balance(alice, 'BTC')).toEqual({ available: '0.04', onHold: '0' });
    expect(await api.balance(bob, 'BTC')).toEqual({ available: '0.01', onHold: '0' });
    const mine = (await api.history(alice, 'BTC')).find((t) => t.id === sent.body.transactionId);
    expect(mine).toMatchObject({ transactionType: 'WITHDRAWAL', direction: 'WITHDRAWAL', state: 'COMPLETED', amount: '0.01', fee: '0', to: bobAddress, accountFromType: 'B2C', accountToType: 'B2C' });
    const theirs = (await api.history(bob, 'BTC')).find((t) => t.direction === 'DEPOSIT' && t.amount === '0.01');
    expect(theirs).toMatchObject({ transactionType: 'DEPOSIT', state: 'COMPLETED', to: bobAddress, from: await api.addressOf(alice, 'BTC'), accountFromType: 'B2C', accountToType: 'B2C' });
    // Bob sends it back; nothing touched a chain.
    expect((await api.withdraw(bob, { amount: '0.01', depositAddress: await api.addressOf(alice, 'BTC') })).body).toMatchObject({ state: 'COMPLETED', internal: true });
    expect(await api.balance(alice, 'BTC')).toEqual({ available: '0.05', onHold: '0' });
    expect((await pool.query(`SELECT 1 FROM devnet_broadcasts`)).rowCount).toBe(0);
  });

  it('sends to an outside address through the worker: held, broadcast once, completed with hash and explorer link, fee to fee income', async () => {
    const to = await outside(2);
    const sent = await api.withdraw(alice, { amount: '0.01', depositAddress: to });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ state: 'IN_PROGRESS', internal: false, amount: '0.01', fee: '0.0001', receiveAmount: '0.0099' });
    const pending = (await api.history(alice, 'BTC')).find((t) => t.id === sent.body.transactionId);
    expect(pending).toMatchObject({ state: 'IN_PROGRESS', transactionType: 'WITHDRAWAL', amount: '0.01', fee: '0.0001', to });

    const done = await api.settled(alice, sent.body.id);
    expect(done).toMatchObject({ state: 'COMPLETED', hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(done.explorerUrl).toBe(`${server.url.replace('127.0.0.1', 'localhost')}/sandbox/devnet/tx/${done.hash}`);
    expect(await api.balance(alice, 'BTC')).toEqual({ available: '0.04', onHold: '0' });
    const shown = (await api.history(alice, 'BTC')).find((t) => t.id === sent.body.transactionId);
    expect(shown).toMatchObject({ state: 'COMPLETED', hash: done.hash, explorerUrl: done.explorerUrl });
    const details = await api.call<TransactionItem & { confirmations: number; requiredConfirmations: number }>(alice, 'GET', api.at(alice, `/asset/transaction/${sent.body.transactionId}?type=WITHDRAWAL`));
    expect(details.body).toMatchObject({ hash: done.hash, requiredConfirmations: 2 });

    // On the chain: the recipient gets the amount less the fee, sent once, by the hot wallet.
    const onChain = await fetch(`${server.url}/sandbox/devnet/broadcasts/${done.hash}`).then((r) => r.json() as Promise<{ broadcasts: { outcome: string }[] }>);
    expect(onChain.broadcasts.map((b) => b.outcome)).toEqual(['ACCEPTED']);
    const tx = await pool.query<{ amount: string; to_address: string }>('SELECT amount::text, to_address FROM devnet_transactions WHERE tx_hash = $1', [done.hash]);
    expect(tx.rows).toEqual([{ amount: '990000', to_address: to }]);
    const legs = await pool.query<{ code: string; amount: string }>(
      `SELECT a.code, p.amount::text FROM ledger_entries e JOIN ledger_postings p ON p.entry_id = e.id JOIN ledger_accounts a ON a.id = p.ledger_account_id
        WHERE e.idempotency_key = $1 ORDER BY p.amount`,
      [`withdrawal:settle:${sent.body.id}`],
    );
    expect(legs.rows).toEqual([
      { code: `USER:${alice.accountId}`, amount: '-1000000' },
      { code: 'FEE_INCOME', amount: '10000' },
      { code: 'WORLD:BITCOIN', amount: '990000' },
    ]);
  });

  it('fails a withdrawal the devnet refuses, or accepts and drops, and returns the hold', async () => {
    for (const mode of ['REJECT', 'DROP'] as const) {
      const to = await outside(mode === 'REJECT' ? 3 : 4);
      const told = await fetch(`${server.url}/sandbox/devnet/fail`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ currency: 'BTC', address: to, mode }) });
      expect(told.status).toBe(201);
      const before = await api.balance(alice, 'BTC');
      const sent = await api.withdraw(alice, { amount: '0.005', depositAddress: to });
      expect(sent.body.state).toBe('IN_PROGRESS');
      const done = await api.settled(alice, sent.body.id);
      expect(done.state, mode).toBe('FAILED');
      expect(await api.balance(alice, 'BTC')).toEqual(before);
      const shown = (await api.history(alice, 'BTC')).find((t) => t.id === sent.body.transactionId);
      expect(shown?.state).toBe('FAILED');
      expect(shown?.failureReason).toBeTruthy();
    }
  });

  it('refuses what the browser refuses: wrong address, blocked, oneself, not enough funds, 8+8 digits, below the fee', async () => {
    const refused: [Record<string, unknown>, number, string][] = [
      [{ amount: '0.001', depositAddress: 'not-an-address' }, 400, 'WITHDRAWAL_WRONG_ADDRESS'],
      [{ amount: '0.001', depositAddress: '0x52908400098527886E0F7030069857D2E4169EE7' }, 400, 'WITHDRAWAL_WRONG_ADDRESS'],
      [{ amount: '0.001', depositAddress: blockedAddress }, 400, 'WITHDRAWAL_ADDRESS_NOT_USED'],
      [{ amount: '0.001', depositAddress: await api.addressOf(alice, 'BTC') }, 400, 'WITHDRAWAL_SAME_USER'],
      [{ amount: '5', depositAddress: await outside(5) }, 400, 'WITHDRAWAL_NOT_ENOUGH_FUNDS'],
      [{ amount: '5', depositAddress: await api.addressOf(bob, 'BTC') }, 400, 'WITHDRAWAL_NOT_ENOUGH_FUNDS'],
      [{ amount: '0.0001', depositAddress: await outside(5) }, 400, 'WITHDRAWAL_AMOUNT_TOO_SMALL'],
      [{ amount: '0', depositAddress: await outside(5) }, 400, 'WITHDRAWAL_AMOUNT_TOO_SMALL'],
      [{ amount: '123456789', depositAddress: await outside(5) }, 400, 'VALIDATION'],
      [{ amount: '0.123456789', depositAddress: await outside(5) }, 400, 'VALIDATION'],
      [{ amount: '-1', depositAddress: await outside(5) }, 400, 'VALIDATION'],
      [{ amount: '1e-3', depositAddress: await outside(5) }, 400, 'VALIDATION'],
    ];
    const before = await api.balance(alice, 'BTC');
    for (const [body, status, code] of refused) expect(await api.withdraw(alice, body), JSON.stringify(body)).toMatchObject({ status, body: { exceptionCode: code } });
    expect(await api.balance(alice, 'BTC')).toEqual(before);
    // The hot wallet is the custody's own address: not a recipient.
    const hot = await pool.query<{ from_address: string }>(`SELECT from_address FROM withdrawals WHERE from_address IS NOT NULL AND kind = 'EXTERNAL' LIMIT 1`);
    const hotAddress = hot.rows[0]?.from_address ?? '';
    expect((await api.call(alice, 'POST', api.at(alice, '/withdrawal/check-address'), { currency: 'BTC', address: hotAddress })).body).toMatchObject({ checkResult: 'NOT_USED' });
    expect(await api.withdraw(alice, { amount: '0.001', depositAddress: hotAddress })).toMatchObject({ status: 400, body: { exceptionCode: 'WITHDRAWAL_ADDRESS_NOT_USED' } });
  });

  it('accepts exactly one of 50 concurrent withdrawals of the whole balance', async () => {
    const dave = await signUp('dave');
    await api.deposit(dave, 'BTC', '0.02');
    const to = await outside(6);
    const requests = Array.from({ length: 50 }, () => ({ amount: '0.02', depositAddress: to, idempotencyKey: randomUUID() }));
    const burst = await Promise.all(requests.map((request) => api.withdraw(dave, request)));
    // On a loaded machine a request may still wait longer for a database connection than the pool allows and be
    // answered 503 ("try again shortly"), possibly after its withdrawal was made: the client retries with the same
    // idempotency key, after the burst, and gets the answer its first try should have had.
    const answers = await Promise.all(burst.map((a, i) => (a.status === 503 ? api.withdraw(dave, requests[i] ?? {}) : a)));
    const accepted = answers.filter((a) => a.status === 200);
    expect(accepted).toHaveLength(1);
    for (const answer of answers.filter((a) => a.status !== 200)) expect(answer).toMatchObject({ status: 400, body: { exceptionCode: 'WITHDRAWAL_NOT_ENOUGH_FUNDS' } });
    expect((await pool.query('SELECT 1 FROM withdrawals WHERE wallet_account_id = $1', [dave.accountId])).rowCount).toBe(1);
    expect(await api.balance(dave, 'BTC')).toMatchObject({ available: '0' });
    await api.settled(dave, accepted[0]?.body.id ?? '');
    expect(await api.balance(dave, 'BTC')).toEqual({ available: '0', onHold: '0' });
  });

  it('makes one withdrawal of 20 concurrent requests with one idempotency key', async () => {
    const erin = await signUp('erin');
    await api.deposit(erin, 'BTC', '0.03');
    const key = randomUUID();
    const body = { amount: '0.01', depositAddress: await outside(7), idempotencyKey: key };
    const answers = await Promise.all(Array.from({ length: 20 }, () => api.withdraw(erin, body)));
    const ok = answers.filter((a) => a.status === 200);
    // Each of the 20 is the one withdrawal (200) or a 409 for the key still running. Asserted over all answers: today
    // a concurrent request waits for the first and gets 200, so a loop over the non-200 answers never ran.
    expect(answers.filter((a) => a.status !== 200 && a.status !== 409)).toEqual([]);
    expect(ok.length).toBeGreaterThan(0);
    const stable = (v: WithdrawalView) => ({ id: v.id, amount: v.amount, fee: v.fee, depositAddress: v.depositAddress, transactionId: v.transactionId, createdDate: v.createdDate });
    for (const answer of ok) expect(stable(answer.body)).toEqual(stable(ok[0]?.body as WithdrawalView));
    expect((await pool.query('SELECT 1 FROM withdrawals WHERE wallet_account_id = $1', [erin.accountId])).rowCount).toBe(1);
    expect(await api.balance(erin, 'BTC')).toMatchObject({ available: '0.02' });
    // The same key later gives the same withdrawal; with another request it is refused.
    expect((await api.withdraw(erin, body)).body.id).toBe(ok[0]?.body.id);
    expect(await api.withdraw(erin, { ...body, amount: '0.02' })).toMatchObject({ status: 422, body: { exceptionCode: 'IDEMPOTENCY_KEY_REUSED' } });
    expect(await api.withdraw(erin, { ...body, depositAddress: await outside(8) })).toMatchObject({ status: 422, body: { exceptionCode: 'IDEMPOTENCY_KEY_REUSED' } });
    // The key may come as a header too.
    const { idempotencyKey: _key, ...withoutKey } = body;
    const byHeader = await api.call<WithdrawalView>(erin, 'POST', api.at(erin, '/withdrawal'), { currency: 'BTC', ...withoutKey }, { 'idempotency-key': key });
    expect(byHeader.body.id).toBe(ok[0]?.body.id);
    await api.settled(erin, ok[0]?.body.id ?? '');
  });

  it('keeps an address book: add (trimmed, checked, once), list, read, delete', async () => {
    const path = api.at(alice, '/address-book');
    const to = await outside(10);
    const added = await api.call<{ id: string; name: string; blockchain: string; address: string }>(alice, 'POST', path, { name: ' Savings ', blockchain: 'BITCOIN', address: `  ${to}  ` });
    expect(added).toMatchObject({ status: 201, body: { name: 'Savings', blockchain: 'BITCOIN', address: to } });
    expect(await api.call(alice, 'POST', path, { name: 'Again', blockchain: 'BITCOIN', address: to.toUpperCase() })).toMatchObject({ status: 409, body: { exceptionCode: 'ADDRESS_BOOK_DUPLICATE' } });
    const list = await api.call<{ result: { id: string }[]; total: number }>(alice, 'POST', `${path}/all`, { pageNumber: 1, pageSize: 1000 });
    expect(list.body.result.map((e) => e.id)).toContain(added.body.id);
    expect((await api.call(alice, 'GET', `${path}/${added.body.id}`)).body).toMatchObject({ name: 'Savings', address: to });
    // The check names a saved address.
    expect((await api.call(alice, 'POST', api.at(alice, '/withdrawal/check-address'), { currency: 'BTC', address: to })).body).toMatchObject({ saved: true, recipientName: 'Savings' });
    // Nobody else sees it.
    expect(await api.call(bob, 'GET', `/api/${bob.accountId}/address-book/${added.body.id}`)).toMatchObject({ status: 404, body: { exceptionCode: 'ADDRESS_BOOK_NOT_FOUND' } });
    expect(await api.call(bob, 'GET', `${path}/${added.body.id}`)).toMatchObject({ status: 403, body: { exceptionCode: 'FORBIDDEN' } });
    expect((await api.call(alice, 'DELETE', `${path}/${added.body.id}`)).status).toBe(200);
    expect(await api.call(alice, 'GET', `${path}/${added.body.id}`)).toMatchObject({ status: 404, body: { exceptionCode: 'ADDRESS_BOOK_NOT_FOUND' } });
    expect(await api.call(alice, 'DELETE', `${path}/${added.body.id}`)).toMatchObject({ status: 404, body: { exceptionCode: 'ADDRESS_BOOK_NOT_FOUND' } });
  });

  it('answers bad input to every endpoint with a 4xx and an exceptionCode', async () => {
    const a = (path: string) => api.at(alice, path);
    const cases: [SignedInUser | undefined, string, string, unknown, number, string][] = [
      [undefined, 'POST', a('/withdrawal'), { currency: 'BTC', amount: '1', depositAddress: 'x', idempotencyKey: randomUUID() }, 401, 'UNAUTHORIZED'],
      [bob, 'POST', a('/withdrawal'), { currency: 'BTC', amount: '1', depositAddress: 'x', idempotencyKey: randomUUID() }, 403, 'FORBIDDEN'],
      [alice, 'POST', a('/withdrawal'), '{not json', 400, 'VALIDATION'],
      [alice, 'POST', a('/withdrawal'), {}, 400, 'VALIDATION'],
      [alice, 'POST', a('/withdrawal'), { currency: 'BTC', amount: '0.001', depositAddress: await outside(5) }, 400, 'VALIDATION'],
      [alice, 'POST', a('/withdrawal'), { currency: 'BTC', amount: '0.001', depositAddress: await outside(5), idempotencyKey: 'short' }, 400, 'VALIDATION'],
      [alice, 'POST', a('/withdrawal'), { currency: 'NOPE', amount: '0.001', depositAddress: await outside(5), idempotencyKey: randomUUID() }, 400, 'UNKNOWN_CURRENCY'],
      [alice, 'POST', a('/withdrawal'), { currency: 'BTC', amount: 1, depositAddress: '   ', idempotencyKey: randomUUID() }, 400, 'VALIDATION'],
      [alice, 'POST', a('/withdrawal'), { account: bob.accountId, currency: 'BTC', amount: '0.001', depositAddress: await outside(5), idempotencyKey: randomUUID() }, 400, 'VALIDATION'],
      [alice, 'POST', a('/withdrawal'), { currency: 'TRX', amount: '0.1234567', depositAddress: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', idempotencyKey: randomUUID() }, 400, 'WITHDRAWAL_AMOUNT_PRECISION'],
      [alice, 'GET', a('/withdrawal/not-a-uuid'), undefined, 404, 'WITHDRAWAL_NOT_FOUND'],
      [alice, 'GET', a(`/withdrawal/${randomUUID()}`), undefined, 404, 'WITHDRAWAL_NOT_FOUND'],
      [alice, 'POST', a('/withdrawal/check-address'), {}, 400, 'VALIDATION'],
      [alice, 'POST', a('/withdrawal/check-address'), { currency: 'BTC', address: '' }, 400, 'VALIDATION'],
      [alice, 'POST', a('/withdrawal/check-address'), { currency: 'NOPE', address: 'x' }, 400, 'UNKNOWN_CURRENCY'],
      [alice, 'POST', a('/withdrawal/check-address'), { currency: 'BTC', address: 'x'.repeat(201) }, 400, 'VALIDATION'],
      [undefined, 'POST', a('/withdrawal/check-address'), { currency: 'BTC', address: 'x' }, 401, 'UNAUTHORIZED'],
      [alice, 'POST', a('/withdrawal/preliminary/fee'), { currency: 'BTC', amount: 'lots' }, 400, 'VALIDATION'],
      [alice, 'POST', a('/withdrawal/preliminary/fee'), { currency: 'NOPE' }, 400, 'UNKNOWN_CURRENCY'],
      [alice, 'POST', a('/withdrawal/preliminary/fee'), { currency: 'BTC', depositAddress: 'nope' }, 400, 'WITHDRAWAL_WRONG_ADDRESS'],
      [bob, 'POST', a('/withdrawal/preliminary/fee'), { currency: 'BTC' }, 403, 'FORBIDDEN'],
      [alice, 'POST', a('/address-book'), {}, 400, 'VALIDATION'],
      [alice, 'POST', a('/address-book'), { name: '', blockchain: 'BITCOIN', address: await outside(11) }, 400, 'VALIDATION'],
      [alice, 'POST', a('/address-book'), { name: 'x'.repeat(65), blockchain: 'BITCOIN', address: await outside(11) }, 400, 'VALIDATION'],
      [alice, 'POST', a('/address-book'), { name: 'Mars', blockchain: 'MARS', address: await outside(11) }, 400, 'ADDRESS_BOOK_UNKNOWN_NETWORK'],
      [alice, 'POST', a('/address-book'), { name: 'Wrong', blockchain: 'ETHEREUM', address: await outside(11) }, 400, 'ADDRESS_BOOK_WRONG_ADDRESS'],
      [bob, 'POST', a('/address-book'), { name: 'Bob', blockchain: 'BITCOIN', address: await outside(11) }, 403, 'FORBIDDEN'],
      [alice, 'POST', a('/address-book/all'), { pageSize: 1001 }, 400, 'VALIDATION'],
      [alice, 'POST', a('/address-book/all'), { pageNumber: 0 }, 400, 'VALIDATION'],
      [undefined, 'POST', a('/address-book/all'), {}, 401, 'UNAUTHORIZED'],
      [alice, 'GET', a('/address-book/not-a-uuid'), undefined, 404, 'ADDRESS_BOOK_NOT_FOUND'],
      [alice, 'DELETE', a('/address-book/not-a-uuid'), undefined, 404, 'ADDRESS_BOOK_NOT_FOUND'],
      [bob, 'DELETE', a(`/address-book/${randomUUID()}`), undefined, 403, 'FORBIDDEN'],
    ];
    for (const [user, method, path, body, status, code] of cases) {
      const answer = await api.call(user, method, path, body);
      expect(answer, `${method} ${path} ${JSON.stringify(body)}`).toMatchObject({ status, body: { exceptionCode: code } });
    }
    const sandbox = async (body: unknown) => {
      const response = await fetch(`${server.url}/sandbox/devnet/fail`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    expect(await sandbox({ currency: 'BTC', address: 'nope' })).toMatchObject({ status: 400, body: { exceptionCode: 'BAD_ADDRESS' } });
    expect(await sandbox({ currency: 'BTC', address: await outside(12), mode: 'EXPLODE' })).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
  });

  it('asks for the passcode when it is on', async () => {
    const frank = await signUp('frank');
    await api.deposit(frank, 'BTC', '0.01');
    expect((await api.call(frank, 'POST', '/api/user/pinCode/enable', { pinCode: '2468' })).status).toBe(200);
    const to = await outside(13);
    const body = { amount: '0.001', depositAddress: to, idempotencyKey: randomUUID() };
    expect(await api.withdraw(frank, body)).toMatchObject({ status: 403, body: { exceptionCode: 'B2C_USM0031' } });
    expect(await api.withdraw(frank, body, { pincode: '1111' })).toMatchObject({ status: 403, body: { exceptionCode: 'B2C_USM0031' } });
    expect(await api.balance(frank, 'BTC')).toEqual({ available: '0.01', onHold: '0' });
    const ok = await api.withdraw(frank, body, { pincode: '2468' });
    expect(ok.status).toBe(200);
    await api.settled(frank, ok.body.id);
  });
});

describe('a withdrawal worker killed between broadcast and completion', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let pool: pg.Pool;
  let worker: LaunchedWorker | undefined;
  /** The gateway's and the worker's: the signer's channel and token are there, so the worker signs what the gateway approved. */
  let dataDir = '';
  const api = client(() => server.url);
  const ENV = {
    WALLET_SEED: TEST_MNEMONIC,
    DEVNET_BLOCK_MS: '150',
    // Long enough between broadcast and completion to kill the worker in it.
    CONFIRMATIONS: 'BITCOIN:12',
    WORKER_POLL_MS: '100',
    RATES_WALK_MS: '0',
    WITHDRAWAL_FEES: JSON.stringify({ BTC: '0.0001' }),
  };

  const startWorker = async () => {
    // A process of its own, to be killed: on the gateway's environment (its secrets key and DATA_DIR too), the jobs in it.
    worker = launchWorker({ ...testServerEnv(database.url), DATA_DIR: dataDir, ...ENV, LOG_LEVEL: 'info' });
    await worker.started(30_000);
  };
  const killWorker = async () => worker?.stop('SIGKILL');
  const stateOf = async (id: string) => (await pool.query<{ state: string; tx_hash: string | null }>('SELECT state, tx_hash FROM withdrawals WHERE id = $1', [id])).rows[0];
  const broadcasts = async (hash: string) => (await pool.query<{ outcome: string }>('SELECT outcome FROM devnet_broadcasts WHERE tx_hash = $1 ORDER BY seq', [hash])).rows.map((r) => r.outcome);

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    dataDir = await mkdtemp(join(tmpdir(), 'withdrawal-worker-'));
    server = await startInProcess({ ...testServerEnv(database.url), DATA_DIR: dataDir, WORKERS: 'off', ...ENV });
    pool = new pg.Pool({ connectionString: database.url, max: 3 });
    await startWorker();
  });
  afterAll(async () => {
    await killWorker();
    await server?.close();
    await pool?.end();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('broadcasts once, completes after a restart, and the ledger audit is green', async () => {
    const user = await signUpAndSignIn(server.url, { email: `withdraw-crash-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
    await api.deposit(user, 'BTC', '0.02');

    // Killed after the broadcast was recorded, before the confirmations.
    const first = await api.withdraw(user, { amount: '0.005', depositAddress: await outside(20) });
    expect(first.status).toBe(200);
    const broadcast = await waitFor('the first broadcast', async () => {
      const row = await stateOf(first.body.id);
      return row?.state === 'BROADCAST' ? row : undefined;
    });
    await killWorker();
    expect((await stateOf(first.body.id))?.state).toBe('BROADCAST');

    // Killed after sending but before recording it: the row still says SIGNED, the chain has the transaction.
    const second = await api.withdraw(user, { amount: '0.005', depositAddress: await outside(21) });
    await startWorker();
    // A job the killed worker was running waits for its lease (LEASE_MS) to run out before this one takes it up.
    const sent = await waitFor('the second broadcast', async () => {
      const row = await stateOf(second.body.id);
      return row?.state === 'BROADCAST' ? row : undefined;
    }, 30_000);
    await killWorker();
    await pool.query(`UPDATE withdrawals SET state = 'SIGNED', broadcast_at = NULL WHERE id = $1`, [second.body.id]);

    await startWorker();
    for (const withdrawal of [first.body, second.body]) expect((await api.settled(user, withdrawal.id, 30_000)).state).toBe('COMPLETED');
    expect(await broadcasts(broadcast.tx_hash ?? '')).toEqual(['ACCEPTED']);
    expect(await broadcasts(sent.tx_hash ?? '')).toEqual(['ACCEPTED']);
    // The log is written in batches: wait for the line rather than read the output once.
    await waitFor('the reconciliation to be logged', async () => worker?.output().includes('reconciled by its hash'), 5_000);
    expect(await api.balance(user, 'BTC')).toEqual({ available: '0.01', onHold: '0' });
    expect(await auditFailures(pool)).toEqual([]);
  }, 120_000);
});
