import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import { pino } from 'pino';
import { mnemonicToSeedSync } from '@scure/bip39';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startInProcess, type InProcessServer, type LogLine } from '../../support/in-process.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';
import { auditFailures, TEST_MNEMONIC } from '../../support/custody.ts';
import { scriptedChain, type ScriptedChain } from '../../support/scripted-chain.ts';
import type { ChainTransfer } from '../../../src/server/adapters/chains/port.ts';
import { confirmDeposits, scanDeposits } from '../../../src/server/domain/deposits.ts';
import { deriveAddress } from '../../../src/server/domain/addresses.ts';
import type { AssetItem } from '../../../src/lib/wire/assets.ts';
import type { TransactionItem } from '../../../src/server/domain/history.ts';
import { unitsOf } from '../../../src/lib/money.ts';

/**
 * The deposit rules every chain adapter relies on, driven through the reading port by a scripted chain against the
 * real database and gateway: reorganisations before and after the credit, a credit taken back or an account frozen,
 * a dropped deposit mined again, MIN_DEPOSIT, and two workers at once. The ledger audit stays clean after each.
 */
const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');
const LTC = (units: number) => BigInt(Math.round(units * 1e8));

describe('deposits through reorganisations', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let pool: pg.Pool;
  const logs: LogLine[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (chunk.toString().split('\n').filter((l) => l.trim()).forEach((l) => logs.push(JSON.parse(l) as LogLine)), done()) }));
  const call = gatewayClient(() => server.url);
  let chain: ScriptedChain;
  let height = 1000;

  const at = (user: SignedInUser, path: string) => `/api/${user.accountId}${path}`;
  const newUser = () => signUpAndSignIn(server.url, { email: `reorg-${randomUUID()}@example.com`, password: 'a long enough passphrase 42', databaseUrl: database.url });
  const asset = async (user: SignedInUser) => (await call<AssetItem[]>(user, 'GET', at(user, '/asset'))).body.find((a) => a.currency === 'LTC');
  const addressOf = async (user: SignedInUser) => {
    await call(user, 'POST', at(user, '/account/currency'), { currency: 'LTC' });
    return (await asset(user))?.depositAddress ?? '';
  };
  const available = async (user: SignedInUser) => (await asset(user))?.totalAvailable ?? '0';
  const history = async (user: SignedInUser) =>
    (await call<{ result: TransactionItem[] }>(user, 'POST', at(user, '/asset/transactions'), { currency: 'LTC', sort: 'DESC', properties: ['createdDate'], pageSize: 100, pageNumber: 1 })).body.result;
  const depositRow = async (tx: string) =>
    (await pool.query<{ state: string; block_height: string | null; confirmations: number; in_doubt_since: Date | null }>('SELECT state, block_height, confirmations, in_doubt_since FROM chain_deposits WHERE tx_hash = $1', [tx])).rows;
  const entries = async (key: string) => (await pool.query('SELECT 1 FROM ledger_entries WHERE idempotency_key = $1', [key])).rowCount;
  const transferTo = (address: string, amount: bigint, blockHeight: number | null): ChainTransfer => ({
    network: 'LITECOIN',
    txHash: randomBytes(32).toString('hex'),
    outputIndex: 0,
    currency: 'LTC',
    fromAddress: null,
    toAddress: address,
    amount: unitsOf(amount),
    blockHeight,
  });
  const scan = (minDeposit: Record<string, bigint> = {}) => scanDeposits(pool, chain.port, 'LITECOIN', { minDeposit, log });
  const confirm = () => confirmDeposits(pool, chain.port, log);
  /** The transfer mined in a new block, buried under `confirmations`, scanned and confirmed: credited. */
  const creditedDeposit = async (address: string, amount: bigint) => {
    const transfer = transferTo(address, amount, ++height);
    chain.next([transfer]);
    chain.mine(transfer, transfer.blockHeight ?? 0);
    chain.setTip((height += 2));
    expect(await scan()).toBe(1);
    expect(await confirm()).toBe(1);
    return transfer;
  };
  /** A reorganisation from the transfer's block: the next scan says so and rereads from there. */
  const reorgAt = (transfer: ChainTransfer) => chain.next([], { orphaned: { height: transfer.blockHeight ?? 0, hash: 'orphaned' }, rescanFrom: transfer.blockHeight ?? 0 });

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    server = await startInProcess({ DATABASE_URL: database.url, WALLET_SEED: TEST_MNEMONIC, RATES_WALK_MS: '0', PUBLIC_RATE_LIMIT: '0', WORKERS: 'off' });
    pool = new pg.Pool({ connectionString: database.url });
  });
  afterEach(async () => {
    expect(await auditFailures(pool)).toEqual([]);
  });
  afterAll(async () => {
    await pool?.end();
    await server?.close();
    await database?.drop();
  });

  it('un-pends a deposit whose block was replaced and credits it once when it is mined again', async () => {
    chain = scriptedChain('LITECOIN', 3);
    const user = await newUser();
    const transfer = transferTo(await addressOf(user), LTC(1), ++height);
    chain.next([transfer]);
    chain.mine(transfer, height);
    chain.setTip(height);
    expect(await scan()).toBe(1);
    expect(await confirm()).toBe(0);
    expect(await depositRow(transfer.txHash)).toEqual([expect.objectContaining({ state: 'PENDING', block_height: String(height), confirmations: 1 })]);

    reorgAt(transfer);
    chain.toMempool(transfer);
    expect(await scan()).toBe(0);
    expect(await depositRow(transfer.txHash)).toEqual([expect.objectContaining({ state: 'PENDING', block_height: null, confirmations: 0 })]);
    chain.setTip((height += 5));
    expect(await confirm()).toBe(0);
    expect((await history(user))[0]).toMatchObject({ state: 'IN_PROGRESS', hash: transfer.txHash });

    // Mined again two blocks later: the scan sees it again (one row), the confirmations count from its new block.
    chain.next([{ ...transfer, blockHeight: height + 1 }]);
    chain.mine(transfer, height + 1);
    chain.setTip(height + 2);
    expect(await scan()).toBe(0);
    expect(await confirm()).toBe(0);
    chain.setTip((height += 3));
    expect(await confirm()).toBe(1);
    expect(await confirm()).toBe(0);
    expect(await available(user)).toBe('1');
    expect(await entries(`deposit:LITECOIN:${transfer.txHash}:0`)).toBe(1);
    expect(logs.some((line) => line.msg.startsWith('chain reorganisation'))).toBe(true);
  });

  it('takes back a credited deposit that left the chain when the balance allows, once, whichever worker does it', async () => {
    chain = scriptedChain('LITECOIN', 2);
    const user = await newUser();
    const address = await addressOf(user);
    const kept = await creditedDeposit(address, LTC(0.2));
    const gone = await creditedDeposit(address, LTC(0.5));
    expect(await available(user)).toBe('0.7');

    reorgAt(gone);
    chain.drop(gone);
    await scan();
    expect((await depositRow(gone.txHash))[0]?.in_doubt_since).toBeInstanceOf(Date);
    expect((await depositRow(kept.txHash))[0]?.in_doubt_since).toBeNull();
    await Promise.all([confirm(), confirm()]);
    await confirm();
    expect(await depositRow(gone.txHash)).toEqual([expect.objectContaining({ state: 'REVERSED', in_doubt_since: null })]);
    expect(await entries(`deposit-reversal:LITECOIN:${gone.txHash}:0`)).toBe(1);
    expect(await available(user)).toBe('0.2');
    const shown = (await history(user)).find((item) => item.hash === gone.txHash);
    expect(shown).toMatchObject({ state: 'FAILED', amount: '0.5', failureReason: expect.stringMatching(/^DEPOSIT_REVERSED/) });
    expect(logs.some((line) => line.msg === 'credited deposit left the chain: credit reversed')).toBe(true);
  });

  it('freezes withdrawals when the user already spent the deposit that left the chain, logs an error, and lifts it once the credit is taken back', async () => {
    chain = scriptedChain('LITECOIN', 2);
    const user = await newUser();
    const address = await addressOf(user);
    const gone = await creditedDeposit(address, LTC(0.3));
    const to = await deriveAddress(OUTSIDE_SEED, 'LITECOIN', 0, 'mainnet');
    const withdraw = (amount: string) => call(user, 'POST', at(user, '/withdrawal'), { currency: 'LTC', amount, depositAddress: to, idempotencyKey: randomUUID() });
    expect((await withdraw('0.25')).status).toBe(200);

    reorgAt(gone);
    chain.drop(gone);
    await scan();
    await confirm();
    await confirm();
    expect(await depositRow(gone.txHash)).toEqual([expect.objectContaining({ state: 'REVERSAL_DUE' })]);
    expect(await entries(`deposit-reversal:LITECOIN:${gone.txHash}:0`)).toBe(0);
    const errors = logs.filter((line) => line.level >= 50 && line.msg.includes('account frozen for withdrawals'));
    expect(errors).toEqual([expect.objectContaining({ account: user.accountId, tx: gone.txHash })]);
    const refused = await withdraw('0.01');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ exceptionCode: 'WITHDRAWALS_FROZEN' });
    expect((await history(user)).find((item) => item.hash === gone.txHash)).toMatchObject({ state: 'COMPLETED' });

    // A new deposit makes the balance cover it: the credit is taken back and withdrawals open again.
    await creditedDeposit(address, LTC(0.4));
    await confirm();
    expect(await depositRow(gone.txHash)).toEqual([expect.objectContaining({ state: 'REVERSED' })]);
    expect(await available(user)).toBe('0.15');
    expect((await withdraw('0.01')).status).toBe(200);
  });

  it('lifts the doubt and the freeze when the deposit that left the chain is mined again', async () => {
    chain = scriptedChain('LITECOIN', 2);
    const user = await newUser();
    const gone = await creditedDeposit(await addressOf(user), LTC(0.3));
    const to = await deriveAddress(OUTSIDE_SEED, 'LITECOIN', 1, 'mainnet');
    expect((await call(user, 'POST', at(user, '/withdrawal'), { currency: 'LTC', amount: '0.3', depositAddress: to, idempotencyKey: randomUUID() })).status).toBe(200);
    reorgAt(gone);
    chain.drop(gone);
    await scan();
    await confirm();
    expect(await depositRow(gone.txHash)).toEqual([expect.objectContaining({ state: 'REVERSAL_DUE' })]);
    chain.mine(gone, (height += 1));
    chain.setTip((height += 1));
    await confirm();
    expect(await depositRow(gone.txHash)).toEqual([expect.objectContaining({ state: 'CREDITED', in_doubt_since: null })]);
    expect((await pool.query('SELECT withdrawals_frozen_at FROM wallet_accounts WHERE id = $1', [user.accountId])).rows[0]).toEqual({ withdrawals_frozen_at: null });
    expect(await entries(`deposit:LITECOIN:${gone.txHash}:0`)).toBe(1);
  });

  it('puts a credited deposit that lost its confirmations on hold (Pending, not spendable) until it has them again, and reverses it from the hold if it leaves', async () => {
    chain = scriptedChain('LITECOIN', 2);
    const user = await newUser();
    const to = await deriveAddress(OUTSIDE_SEED, 'LITECOIN', 2, 'mainnet');
    const withdraw = (amount: string) => call(user, 'POST', at(user, '/withdrawal'), { currency: 'LTC', amount, depositAddress: to, idempotencyKey: randomUUID() });
    const deposit = await creditedDeposit(await addressOf(user), LTC(0.4));
    const balance = async () => ({ available: await available(user), onHold: (await asset(user))?.onHold ?? '0' });
    const held = (n: number) => entries(`deposit-hold:LITECOIN:${deposit.txHash}:0:${n}`);
    const released = (n: number) => entries(`deposit-release:LITECOIN:${deposit.txHash}:0:${n}`);

    // Its block is replaced and the transaction is back in the mempool, at 0 confirmations.
    reorgAt(deposit);
    chain.toMempool(deposit);
    await scan();
    await confirm();
    expect(await depositRow(deposit.txHash)).toEqual([expect.objectContaining({ state: 'HELD', confirmations: 0, block_height: null })]);
    expect(await balance()).toEqual({ available: '0', onHold: '0.4' });
    expect((await history(user)).find((item) => item.hash === deposit.txHash)).toMatchObject({ state: 'IN_PROGRESS' });
    const refused = await withdraw('0.1');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ exceptionCode: 'WITHDRAWAL_NOT_ENOUGH_FUNDS' });
    expect(logs.filter((line) => line.msg.startsWith('credited deposit lost its confirmations: its amount is on hold'))).toHaveLength(1);

    // Mined again: held while it has fewer than its confirmations, available once it has them, by one release.
    chain.mine(deposit, (height += 1));
    chain.setTip(height);
    await confirm();
    expect(await depositRow(deposit.txHash)).toEqual([expect.objectContaining({ state: 'HELD', confirmations: 1, block_height: String(height) })]);
    expect(await balance()).toEqual({ available: '0', onHold: '0.4' });
    chain.setTip((height += 1));
    await Promise.all([confirm(), confirm()]);
    await confirm();
    expect(await depositRow(deposit.txHash)).toEqual([expect.objectContaining({ state: 'CREDITED', confirmations: 2, in_doubt_since: null })]);
    expect(await balance()).toEqual({ available: '0.4', onHold: '0' });
    expect((await history(user)).find((item) => item.hash === deposit.txHash)).toMatchObject({ state: 'COMPLETED' });
    expect([await held(1), await released(1)]).toEqual([1, 1]);

    // Held a second time (its own entries), then gone for good: the hold is released and the credit reversed.
    reorgAt({ ...deposit, blockHeight: height - 1 });
    chain.toMempool(deposit);
    await scan();
    await confirm();
    expect(await balance()).toEqual({ available: '0', onHold: '0.4' });
    chain.drop(deposit);
    await confirm();
    expect(await depositRow(deposit.txHash)).toEqual([expect.objectContaining({ state: 'REVERSED' })]);
    expect(await balance()).toEqual({ available: '0', onHold: '0' });
    expect([await held(2), await released(2), await entries(`deposit-reversal:LITECOIN:${deposit.txHash}:0`)]).toEqual([1, 1, 1]);
  });

  it('freezes withdrawals once, with one error, when the deposit that lost its confirmations was already spent, and lifts it when it is confirmed again', async () => {
    chain = scriptedChain('LITECOIN', 2);
    const user = await newUser();
    const deposit = await creditedDeposit(await addressOf(user), LTC(0.3));
    const to = await deriveAddress(OUTSIDE_SEED, 'LITECOIN', 3, 'mainnet');
    const withdraw = (amount: string) => call(user, 'POST', at(user, '/withdrawal'), { currency: 'LTC', amount, depositAddress: to, idempotencyKey: randomUUID() });
    expect((await withdraw('0.25')).status).toBe(200);
    reorgAt(deposit);
    chain.toMempool(deposit);
    await scan();
    await confirm();
    await confirm();
    expect(await depositRow(deposit.txHash)).toEqual([expect.objectContaining({ state: 'CREDITED', in_doubt_since: expect.any(Date) })]);
    const errors = logs.filter((line) => line.level >= 50 && line.msg.includes('lost its confirmations and the balance cannot hold it'));
    expect(errors).toEqual([expect.objectContaining({ account: user.accountId, tx: deposit.txHash })]);
    const refused = await withdraw('0.01');
    expect(refused.body).toMatchObject({ exceptionCode: 'WITHDRAWALS_FROZEN' });

    chain.mine(deposit, (height += 1));
    chain.setTip((height += 1));
    await confirm();
    expect(await depositRow(deposit.txHash)).toEqual([expect.objectContaining({ state: 'CREDITED', in_doubt_since: null })]);
    expect((await pool.query('SELECT withdrawals_frozen_at FROM wallet_accounts WHERE id = $1', [user.accountId])).rows[0]).toEqual({ withdrawals_frozen_at: null });
    expect((await withdraw('0.01')).status).toBe(200);
  });

  it('credits exactly once a deposit that failed when it left the chain and was then mined again', async () => {
    chain = scriptedChain('LITECOIN', 2);
    const user = await newUser();
    const transfer = transferTo(await addressOf(user), LTC(0.05), ++height);
    chain.next([transfer]);
    chain.mine(transfer, height);
    chain.setTip(height);
    await scan();
    chain.drop(transfer);
    await confirm();
    expect(await depositRow(transfer.txHash)).toEqual([expect.objectContaining({ state: 'FAILED' })]);
    expect((await history(user))[0]).toMatchObject({ state: 'FAILED' });

    chain.next([{ ...transfer, blockHeight: (height += 4) }]);
    chain.mine(transfer, height);
    chain.setTip((height += 2));
    expect(await scan()).toBe(1);
    expect((await history(user))[0]).toMatchObject({ state: 'IN_PROGRESS', failureReason: null });
    chain.next([{ ...transfer, blockHeight: height - 2 }]);
    expect(await scan()).toBe(0);
    expect(await confirm()).toBe(1);
    expect(await confirm()).toBe(0);
    expect(await available(user)).toBe('0.05');
    expect((await history(user)).filter((item) => item.hash === transfer.txHash)).toEqual([expect.objectContaining({ state: 'COMPLETED' })]);
  });

  it('credits again, by an entry of its own, a reversed deposit that is mined again, and takes that credit back if it leaves once more', async () => {
    chain = scriptedChain('LITECOIN', 2);
    const user = await newUser();
    const gone = await creditedDeposit(await addressOf(user), LTC(0.5));
    const leave = async (transfer: ChainTransfer) => {
      reorgAt(transfer);
      chain.drop(transfer);
      await scan();
      await confirm();
      expect(await depositRow(transfer.txHash)).toEqual([expect.objectContaining({ state: 'REVERSED' })]);
      expect(await available(user)).toBe('0');
    };
    await leave(gone);

    // The sender's transaction comes back in a later block: the same row, pending again, the history item too.
    const again = { ...gone, blockHeight: (height += 3) };
    chain.next([again]);
    chain.mine(again, height);
    chain.setTip(height);
    expect(await scan()).toBe(1);
    expect(await depositRow(gone.txHash)).toEqual([expect.objectContaining({ state: 'PENDING', confirmations: 0 })]);
    expect((await history(user)).filter((item) => item.hash === gone.txHash)).toEqual([expect.objectContaining({ state: 'IN_PROGRESS', failureReason: null })]);
    chain.setTip((height += 2));
    await Promise.all([confirm(), confirm()]);
    expect(await confirm()).toBe(0);
    expect(await available(user)).toBe('0.5');
    expect(await entries(`deposit:LITECOIN:${gone.txHash}:0`)).toBe(1);
    expect(await entries(`deposit:LITECOIN:${gone.txHash}:0#1`)).toBe(1);
    expect((await history(user)).filter((item) => item.hash === gone.txHash)).toEqual([expect.objectContaining({ state: 'COMPLETED' })]);

    // And it can leave again: that credit is taken back by its own reversal, the first one untouched.
    await leave(again);
    expect(await entries(`deposit-reversal:LITECOIN:${gone.txHash}:0`)).toBe(1);
    expect(await entries(`deposit-reversal:LITECOIN:${gone.txHash}:0#1`)).toBe(1);

    // The audit holds every earlier credit to its entry and its reversal: a count of revivals the ledger lacks is named.
    await pool.query('UPDATE chain_deposits SET revivals = 3 WHERE tx_hash = $1', [gone.txHash]);
    const named = (await auditFailures(pool)).map((failure) => failure.name);
    await pool.query('UPDATE chain_deposits SET revivals = 1 WHERE tx_hash = $1', [gone.txHash]);
    expect(named).toContain('each earlier credit of a deposit mined again after its reversal has its entry and its reversal');
  });

  it('records a deposit below MIN_DEPOSIT with a reason the user sees, and never credits it', async () => {
    chain = scriptedChain('LITECOIN', 1);
    const user = await newUser();
    const address = await addressOf(user);
    const dust = transferTo(address, LTC(0.0005), ++height);
    const enough = transferTo(address, LTC(0.001), height);
    chain.next([dust, enough]);
    chain.mine(dust, height);
    chain.mine(enough, height);
    chain.setTip((height += 10));
    expect(await scan({ LTC: LTC(0.001) })).toBe(2);
    expect(await confirm()).toBe(1);
    expect(await confirm()).toBe(0);
    expect(await depositRow(dust.txHash)).toEqual([expect.objectContaining({ state: 'BELOW_MINIMUM' })]);
    expect(await entries(`deposit:LITECOIN:${dust.txHash}:0`)).toBe(0);
    expect(await available(user)).toBe('0.001');
    const shown = (await history(user)).find((item) => item.hash === dust.txHash);
    expect(shown).toMatchObject({ state: 'FAILED', amount: '0.0005', failureReason: expect.stringMatching(/^BELOW_MINIMUM_DEPOSIT: the minimum deposit is 0\.001 LTC/) });
  });

  it('records and credits once when two scanners and two confirmers run at the same time', async () => {
    chain = scriptedChain('LITECOIN', 1);
    const user = await newUser();
    const address = await addressOf(user);
    const transfers = [transferTo(address, LTC(0.01), ++height), transferTo(address, LTC(0.02), height)];
    for (const transfer of transfers) chain.mine(transfer, height);
    chain.always(transfers);
    chain.setTip(height);
    const recorded = await Promise.all([scan(), scan(), scan()]);
    expect(recorded.reduce((sum, n) => sum + n, 0)).toBe(2);
    const credited = await Promise.all([confirm(), confirm(), confirm()]);
    expect(credited.reduce((sum, n) => sum + n, 0) + (await confirm())).toBe(2);
    chain.always([]);
    expect(await available(user)).toBe('0.03');
    for (const transfer of transfers) expect(await entries(`deposit:LITECOIN:${transfer.txHash}:0`)).toBe(1);
    expect((await history(user)).filter((item) => item.transactionType === 'DEPOSIT')).toHaveLength(2);
  });
});
