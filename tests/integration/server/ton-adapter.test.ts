import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mnemonicToSeedSync } from '@scure/bip39';
import { Address, toNano } from '@ton/core';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { randomBytes, randomUUID } from 'node:crypto';
import { auditFailures, createWalletAccount, quietLog, TEST_MNEMONIC, TEST_SECRETS_KEY, waitFor } from '../../support/custody.ts';
import { chainsConfig } from '../../../src/server/config-chains.ts';
import { openCustody, type Custody } from '../../../src/server/custody.ts';
import { addAssets, listAssets } from '../../../src/server/domain/assets.ts';
import { addAddress } from '../../../src/server/domain/address-book.ts';
import { confirmDeposits, scanDeposits } from '../../../src/server/domain/deposits.ts';
import { formatUnits } from '../../../src/lib/amount.ts';
import { custodyBalances } from '../../../src/server/domain/custody-balances.ts';
import { fundGasFromChain } from '../../../src/server/domain/gas-float.ts';
import { collectDeposits } from '../../../src/server/domain/sweeps.ts';
import { createWithdrawalService } from '../../../src/server/domain/withdrawals/requests.ts';
import { broadcastWithdrawals, confirmWithdrawals, signWithdrawals } from '../../../src/server/domain/withdrawals/worker.ts';
import { startTonStandIn, type TonStandIn } from '../../support/toncenter.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import { chainAddressing, deriveAddress } from '../../../src/server/domain/addresses.ts';
import { createTonAdapter, TON_SWEEP_THRESHOLD } from '../../../src/server/adapters/chains/ton/adapter.ts';
import { GRACE_SECONDS, VALID_SECONDS } from '../../../src/server/adapters/chains/ton/messages.ts';
import { HOT_WALLET_INDEX } from '../../../src/server/adapters/chains/ton/wallets.ts';
import { BroadcastRejectedError, ChainUnsupportedError, transferKey, type ChainAdapter, type TransferStatus } from '../../../src/server/adapters/chains/port.ts';
import { unitsOf } from '../../../src/lib/money.ts';

/**
 * The TON adapter against the TON emulator (@ton/sandbox: real wallet v4R2 contracts, signatures, seqno, StateInit,
 * fees) behind a toncenter stand-in that serves the emulator's real transactions in the API's shape.
 */
const SEED = mnemonicToSeedSync(TEST_MNEMONIC);
// A BIP39 test vector nobody in this wallet owns: outside recipients.
const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');
const addressing = chainAddressing('mainnet');

describe('the TON adapter on the emulator', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let standIn: TonStandIn;
  let ton: ChainAdapter;
  let hot: string;
  const deposit: string[] = [];

  const statusOf = async (txHash: string): Promise<TransferStatus | undefined> => (await ton.status('TON', [{ txHash, outputIndex: 0 }])).get(transferKey({ txHash, outputIndex: 0 }));

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: await mkdtemp(join(tmpdir(), 'wallet-test-data-')) }, quietLog);
    standIn = await startTonStandIn({ apiKey: 'test-key' });
    ton = createTonAdapter(database.pool, { apiUrl: standIn.url, apiKey: 'test-key', env: 'mainnet', seed: SEED, addresses: addressing });
    hot = await ton.hotWalletAddress('TON');
    // Three users' deposit wallets, as the custody stores them (non-bounceable UQ…).
    for (let i = 0; i < 3; i++) {
      const { accountId } = await createWalletAccount(database.pool);
      const index = 100 + i;
      const address = await deriveAddress(SEED, 'TON', index, 'mainnet');
      await database.pool.query(`INSERT INTO deposit_addresses (network, address, wallet_account_id, derivation_index) VALUES ('TON', $1, $2, $3)`, [address, accountId, index]);
      deposit.push(address);
    }
  });
  afterAll(async () => {
    await standIn?.close();
    await database?.close();
    await testDatabase?.drop();
  });

  it('sends the API key and refuses what TON cannot do', async () => {
    const keyless = createTonAdapter(database.pool, { apiUrl: standIn.url, env: 'mainnet', seed: SEED, addresses: addressing });
    await expect(keyless.scan('TON', null, 10)).rejects.toThrow(/API key required/);
    const order = { reference: 'never', network: 'TON' as const, currency: 'TON', toAddress: hot, amount: unitsOf(1n) };
    await expect(ton.replaceByFee({ order, signed: { rawTx: '', txHash: '', fromAddress: hot }, fee: await ton.estimateFee(order) }, await ton.estimateFee(order))).rejects.toThrow(ChainUnsupportedError);
    await expect(ton.collection.topUpGas({ network: 'TON', address: deposit[0] ?? '', amount: unitsOf(1n), reference: 'gas' })).rejects.toThrow(ChainUnsupportedError);
    expect(ton.collection.sweeps('TON')).toBe(true);
  });

  it('finds deposits by masterchain block, once each, and skips a bounced one', async () => {
    const start = await ton.scan('TON', null, 100);
    expect(start.transfers).toEqual([]);
    const [first = '', second = ''] = deposit;
    const credited = await standIn.fund(first, toNano('2'));
    // Bounceable to an undeployed wallet: the money goes back to the sender, nothing to credit.
    const bounced = await standIn.fund(second, toNano('1'), true);
    // Someone else's wallet: not ours, not reported.
    await standIn.fund(await deriveAddress(OUTSIDE_SEED, 'TON', 0, 'mainnet'), toNano('1'));
    const batch = await ton.scan('TON', start.cursor, 100);
    expect(batch.transfers).toHaveLength(1);
    const [transfer] = batch.transfers;
    expect(transfer).toMatchObject({ network: 'TON', outputIndex: 0, currency: 'TON', toAddress: first, amount: toNano('2'), blockHeight: credited });
    expect(transfer?.txHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await standIn.balance(second)).toBe(0n);
    expect(bounced).toBeGreaterThan(credited);
    const tip = standIn.emptyBlock();
    expect(await statusOf(transfer?.txHash ?? '')).toMatchObject({ state: 'SEEN', blockHeight: credited, confirmations: tip - credited + 1 });
    // Another process (which did not scan it) finds it by its hash on the API.
    const other = createTonAdapter(database.pool, { apiUrl: standIn.url, apiKey: 'test-key', env: 'mainnet', seed: SEED, addresses: addressing });
    const ref = { txHash: transfer?.txHash ?? '', outputIndex: 0 };
    expect((await other.status('TON', [ref])).get(transferKey(ref))).toEqual(await statusOf(ref.txHash));
    // The next scan from the cursor reads only new blocks: the deposit is not reported again.
    expect((await ton.scan('TON', batch.cursor, 100)).transfers).toEqual([]);
  });

  it('sends the exact amount from the hot wallet by a signed external message, deploying it, and reports the fee', async () => {
    await standIn.fund(hot, toNano('10'));
    const recipient = await deriveAddress(OUTSIDE_SEED, 'TON', 1, 'mainnet');
    const order = { reference: 'w-exact', network: 'TON' as const, currency: 'TON', toAddress: recipient, amount: unitsOf(1_234_567_891n) };
    const signed = await ton.signWithdrawal(order);
    // The hash is known before sending, and the same order gives the same message.
    expect(signed.txHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await ton.signWithdrawal(order)).toEqual(signed);
    // A process started after this one died (nothing in memory): the same message, from PostgreSQL.
    const restarted = createTonAdapter(database.pool, { apiUrl: standIn.url, apiKey: 'test-key', env: 'mainnet', seed: SEED, addresses: addressing });
    expect(await restarted.signWithdrawal(order)).toEqual(signed);
    expect(signed.fromAddress).toBe(hot);
    expect(await statusOf(signed.txHash)).toBeUndefined();
    const before = await standIn.balance(hot);
    expect(await ton.broadcast('TON', signed.rawTx)).toEqual({ txHash: signed.txHash });
    expect(await standIn.balance(recipient)).toBe(order.amount);
    const status = await statusOf(signed.txHash);
    expect(status?.state).toBe('SEEN');
    // What the hot wallet lost beyond the amount is exactly the fee the adapter reports.
    expect(status?.state === 'SEEN' && status.fee).toBe(before - (await standIn.balance(hot)) - order.amount);
  });

  it('a replayed message is refused by the contract (seqno): the recipient is paid once', async () => {
    const recipient = await deriveAddress(OUTSIDE_SEED, 'TON', 2, 'mainnet');
    const signed = await ton.signWithdrawal({ reference: 'w-replay', network: 'TON', currency: 'TON', toAddress: recipient, amount: unitsOf(toNano('1')) });
    await ton.broadcast('TON', signed.rawTx);
    const accepted = standIn.sent.length;
    // Sent again (a worker unsure it was sent): the wallet contract refuses it, the adapter sees it is on the chain.
    await ton.broadcast('TON', signed.rawTx);
    expect(standIn.sent.slice(accepted)).toEqual([{ boc: signed.rawTx, accepted: false }]);
    expect(await standIn.balance(recipient)).toBe(toNano('1'));
    expect((await database.pool.query(`SELECT 1 FROM ton_messages WHERE reference = 'withdrawal:w-replay'`)).rowCount).toBe(1);
  });

  it('two withdrawals in flight take consecutive seqnos; the later one waits for the earlier', async () => {
    const [a, b] = [await deriveAddress(OUTSIDE_SEED, 'TON', 3, 'mainnet'), await deriveAddress(OUTSIDE_SEED, 'TON', 4, 'mainnet')];
    // Signed at once by two processes: the wallet's advisory lock gives them two seqnos.
    const other = createTonAdapter(database.pool, { apiUrl: standIn.url, apiKey: 'test-key', env: 'mainnet', seed: SEED, addresses: addressing });
    const signed = await Promise.all([
      ton.signWithdrawal({ reference: 'w-a', network: 'TON', currency: 'TON', toAddress: a, amount: unitsOf(toNano('0.5')) }),
      other.signWithdrawal({ reference: 'w-b', network: 'TON', currency: 'TON', toAddress: b, amount: unitsOf(toNano('0.5')) }),
    ]);
    const seqnos = await database.pool.query<{ seqno: number; message_hash: string }>(`SELECT seqno, message_hash FROM ton_messages WHERE reference IN ('withdrawal:w-a', 'withdrawal:w-b') ORDER BY seqno`);
    expect(seqnos.rows.map((r) => r.seqno)[1]).toBe((seqnos.rows[0]?.seqno ?? 0) + 1);
    const [first, second] = seqnos.rows.map((r) => signed.find((s) => s.txHash === r.message_hash) ?? signed[0]);
    if (!first || !second) throw new Error('two messages expected');
    // Not accepted yet is not refused for good: the worker tries again later.
    const early = await ton.broadcast('TON', second.rawTx).catch((error: unknown) => error);
    expect(early).toBeInstanceOf(Error);
    expect(early).not.toBeInstanceOf(BroadcastRejectedError);
    await ton.broadcast('TON', first.rawTx);
    await ton.broadcast('TON', second.rawTx);
    expect([await standIn.balance(a), await standIn.balance(b)]).toEqual([toNano('0.5'), toNano('0.5')]);
  });

  it('a message past its valid_until is DROPPED only once the chain proves it, then rebuilt once for its reference', async () => {
    const recipient = await deriveAddress(OUTSIDE_SEED, 'TON', 5, 'mainnet');
    const order = { reference: 'w-late', network: 'TON' as const, currency: 'TON', toAddress: recipient, amount: unitsOf(toNano('0.25')) };
    const stale = await ton.signWithdrawal(order);
    standIn.advance(VALID_SECONDS + 1);
    standIn.emptyBlock();
    // Past valid_until but within the grace: it might still be in a block not yet seen, so no answer.
    expect(await statusOf(stale.txHash)).toBeUndefined();
    standIn.advance(GRACE_SECONDS + 1);
    standIn.emptyBlock();
    expect(await statusOf(stale.txHash)).toEqual({ state: 'DROPPED' });
    await expect(ton.broadcast('TON', stale.rawTx)).rejects.toThrow(BroadcastRejectedError);
    const fresh = await ton.signWithdrawal(order);
    expect(fresh.txHash).not.toBe(stale.txHash);
    expect(await ton.signWithdrawal(order)).toEqual(fresh);
    await ton.broadcast('TON', fresh.rawTx);
    expect(await standIn.balance(recipient)).toBe(toNano('0.25'));
    expect((await statusOf(fresh.txHash))?.state).toBe('SEEN');
  });

  it('a hot wallet short of the amount refuses to sign; one that runs short in flight skips the transfer: FAILED with the fee, its seqno spent', async () => {
    const recipient = await deriveAddress(OUTSIDE_SEED, 'TON', 6, 'mainnet');
    const balance = await standIn.balance(hot);
    await expect(ton.signWithdrawal({ reference: 'w-too-much', network: 'TON', currency: 'TON', toAddress: recipient, amount: unitsOf(balance) })).rejects.toThrow(/fund it/);
    // Two that each fit, not both: the second is skipped when it lands.
    const half = (balance * 6n) / 10n;
    const first = await ton.signWithdrawal({ reference: 'w-fits', network: 'TON', currency: 'TON', toAddress: recipient, amount: unitsOf(half) });
    const second = await ton.signWithdrawal({ reference: 'w-short', network: 'TON', currency: 'TON', toAddress: recipient, amount: unitsOf(half) });
    await ton.broadcast('TON', first.rawTx);
    const before = await standIn.balance(hot);
    await ton.broadcast('TON', second.rawTx);
    const status = await statusOf(second.txHash);
    expect(status).toMatchObject({ state: 'FAILED', reason: expect.stringMatching(/sent nothing/) });
    expect(status?.state === 'FAILED' && status.fee).toBe(before - (await standIn.balance(hot)));
    expect(await standIn.balance(recipient)).toBe(half);
    // Funded enough now, the same message is still refused: its seqno is used.
    await standIn.fund(hot, toNano('1000'));
    await ton.broadcast('TON', second.rawTx);
    expect(standIn.sent.at(-1)).toEqual({ boc: second.rawTx, accepted: false });
    expect(await standIn.balance(recipient)).toBe(half);
  });

  it('a transfer bounced by an undeployed recipient is FAILED, its fee what the hot wallet lost', async () => {
    const undeployed = Address.parse(await deriveAddress(OUTSIDE_SEED, 'TON', 10, 'mainnet')).toString({ bounceable: true });
    const signed = await ton.signWithdrawal({ reference: 'w-bounced', network: 'TON', currency: 'TON', toAddress: undeployed, amount: unitsOf(toNano('1')) });
    const before = await standIn.balance(hot);
    await ton.broadcast('TON', signed.rawTx);
    const lost = before - (await standIn.balance(hot));
    expect(await standIn.balance(undeployed)).toBe(0n);
    const status = await statusOf(signed.txHash);
    expect(status).toMatchObject({ state: 'FAILED', reason: expect.stringMatching(/bounced/) });
    const fee = status?.state === 'FAILED' ? (status.fee ?? 0n) : 0n;
    // All but the hot wallet's own small fee for taking the bounce back.
    expect(fee).toBeLessThanOrEqual(lost);
    expect(lost - fee).toBeLessThan(toNano('0.001'));
  });

  it('deploys a deposit wallet by its first sweep and sweeps it into the hot wallet; small balances wait', async () => {
    const address = deposit[0] ?? '';
    const index = Number((await database.pool.query<{ derivation_index: number }>('SELECT derivation_index FROM deposit_addresses WHERE address = $1', [address])).rows[0]?.derivation_index);
    const contract = async () => (await standIn.blockchain.getContract(Address.parse(address))).accountState?.type;
    expect(await contract()).toBe('uninit');
    const held = await standIn.balance(address);
    const hotBefore = await standIn.balance(hot);
    const source = { network: 'TON' as const, currency: 'TON', address, index, amount: unitsOf(held), reference: 'sweep-1' };
    const outcome = await ton.collection.sweep(source);
    expect(outcome.state).toBe('SENT');
    if (outcome.state !== 'SENT') return;
    expect(await contract()).toBe('active');
    expect(await standIn.balance(address)).toBe(0n);
    const status = await statusOf(outcome.signed.txHash);
    expect(status?.state).toBe('SEEN');
    const fee = status?.state === 'SEEN' ? (status.fee ?? 0n) : 0n;
    // The hot wallet got everything less the sweep's fee (and its own small fee for receiving).
    const gained = (await standIn.balance(hot)) - hotBefore;
    expect(gained).toBeLessThanOrEqual(held - fee);
    expect(gained).toBeGreaterThan(held - fee - toNano('0.001'));
    // The same reference again is the same message, not a second sweep.
    expect(await ton.collection.sweep(source)).toEqual(outcome);
    // Below the threshold: nothing to do yet. Above it again: a second sweep, the wallet already deployed.
    await standIn.fund(address, TON_SWEEP_THRESHOLD - 1n);
    expect((await ton.collection.sweep({ ...source, reference: 'sweep-2' })).state).toBe('NOT_NEEDED');
    await standIn.fund(address, toNano('1'));
    const again = await ton.collection.sweep({ ...source, reference: 'sweep-3' });
    expect(again.state).toBe('SENT');
    expect(await standIn.balance(address)).toBe(0n);
  });

  it('tells an undeployed recipient from a deployed one, and what the custody holds', async () => {
    expect(await ton.accountState?.('TON', await deriveAddress(OUTSIDE_SEED, 'TON', 99, 'mainnet'))).toBe('UNINITIALISED');
    expect(await ton.accountState?.('TON', Address.parse(hot).toString({ bounceable: true }))).toBe('ACTIVE');
    const holdings = await ton.holdings('TON');
    let expected = await standIn.balance(hot);
    for (const address of deposit) expected += await standIn.balance(address);
    expect(holdings).toEqual({ TON: expected });
    expect(hot).toBe(await deriveAddress(SEED, 'TON', HOT_WALLET_INDEX, 'mainnet'));
  });

  it('matches deposits against 100,000 addresses without asking about any of them', async () => {
    const start = await ton.scan('TON', null, 100);
    const { userId } = await createWalletAccount(database.pool);
    const accounts = await database.pool.query<{ id: string }>(`INSERT INTO wallet_accounts (user_id) SELECT $1 FROM generate_series(1, 100000) RETURNING id`, [userId]);
    // Filler rows spelled as stored (tag, workchain, hash; the checksum is not what is measured here), and one real one.
    const addresses = accounts.rows.map(() => Buffer.concat([Buffer.from([0x51, 0]), randomBytes(34)]).toString('base64url'));
    addresses[77_777] = new Address(0, randomBytes(32)).toString({ bounceable: false, urlSafe: true });
    await database.pool.query(
      `INSERT INTO deposit_addresses (network, address, wallet_account_id, derivation_index) SELECT 'TON', a, w, 1000 + i FROM unnest($1::text[], $2::uuid[]) WITH ORDINALITY AS t(a, w, i)`,
      [addresses, accounts.rows.map((r) => r.id)],
    );
    const target = addresses[77_777] ?? '';
    const block = await standIn.fund(target, toNano('3'));
    const started = performance.now();
    const batch = await ton.scan('TON', start.cursor, 100);
    expect(batch.transfers).toMatchObject([{ toAddress: target, amount: toNano('3'), blockHeight: block }]);
    // One scan: the new rows loaded once (under a second here), then one block's transactions matched in memory.
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

/** The custody's own flow on TON (deposit scanner, withdrawal worker, ledger) over the adapter, the emulator behind it. */
describe('the custody on TON', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let standIn: TonStandIn;
  let custody: Custody;

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    standIn = await startTonStandIn();
    database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: await mkdtemp(join(tmpdir(), 'wallet-test-data-')) }, quietLog);
    custody = await openCustody(
      {
        production: false,
        publicUrl: 'http://wallet.test',
        dataDir: await mkdtemp(join(tmpdir(), 'wallet-test-data-')),
        walletSeed: TEST_MNEMONIC,
        secretsKey: TEST_SECRETS_KEY,
        chains: chainsConfig({ DEVNET_BLOCK_MS: 100, TON_API_URL: standIn.url, CONFIRMATIONS: 'TON:2' }, 'devnet'),
        workerPollMs: 50,
        ratesWalkMs: 0,
      },
      quietLog,
      database.pool,
    );
  });
  afterAll(async () => {
    await custody?.close();
    await standIn?.close();
    await database?.close();
    await testDatabase?.drop();
  });

  it('credits a deposit after its confirmations and records one withdrawal, however often it is sent', async () => {
    expect(custody.chainAdapters.TON).toBe('toncenter');
    const { accountId } = await createWalletAccount(database.pool);
    await addAssets(database.pool, accountId, ['TON'], custody.catalogue, custody);
    const depositAddress = (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === 'TON')?.depositAddress ?? '';
    const available = async () => (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === 'TON')?.totalAvailable;
    await scanDeposits(database.pool, custody.chain, 'TON');
    await standIn.fund(depositAddress, toNano('5'));
    expect(await scanDeposits(database.pool, custody.chain, 'TON')).toBe(1);
    await confirmDeposits(database.pool, custody.chain, quietLog);
    expect(await available()).toBe('0');
    standIn.emptyBlock();
    await confirmDeposits(database.pool, custody.chain, quietLog);
    expect(await available()).toBe('5');
    // Seen again (a scan from an older cursor): still one deposit.
    await database.pool.query(`DELETE FROM chain_cursors WHERE network = 'TON'`);
    await scanDeposits(database.pool, custody.chain, 'TON');
    expect((await database.pool.query(`SELECT 1 FROM chain_deposits WHERE network = 'TON'`)).rowCount).toBe(1);

    await standIn.fund(await custody.chain.hotWalletAddress('TON'), toNano('10'));
    const service = createWithdrawalService({ pool: database.pool, chain: custody.chain, rates: custody.rates, addresses: addressing, catalogue: custody.catalogue, settings: { fees: { TON: '0.05' }, blockedAddresses: [], feeMarginBps: 2000 } });
    const recipient = await deriveAddress(OUTSIDE_SEED, 'TON', 7, 'mainnet');
    const withdrawal = await service.create(accountId, { currency: 'TON', amount: '2', depositAddress: recipient, idempotencyKey: randomUUID() });
    await signWithdrawals(database.pool, custody.chain, quietLog);
    const signed = (await database.pool.query<{ raw_tx: string; tx_hash: string }>('SELECT raw_tx, tx_hash FROM withdrawals WHERE id = $1', [withdrawal.id])).rows[0];
    expect(await broadcastWithdrawals(database.pool, custody.chain, quietLog)).toBe(1);
    // A second sender of the same signed message (a worker that died before marking it): the contract refuses it.
    await custody.chain.broadcast('TON', signed?.raw_tx ?? '');
    expect(standIn.sent.filter((s) => s.boc === signed?.raw_tx).map((s) => s.accepted)).toEqual([true, false]);
    standIn.emptyBlock();
    await confirmWithdrawals(database.pool, custody.chain, quietLog);
    const done = await database.pool.query<{ state: string; tx_hash: string }>(`SELECT state, tx_hash FROM withdrawals`);
    expect(done.rows).toEqual([{ state: 'COMPLETED', tx_hash: signed?.tx_hash }]);
    expect(await standIn.balance(recipient)).toBe(toNano('1.95'));
    expect(await available()).toBe('3');
    expect(await auditFailures(database.pool)).toEqual([]);
  });

  it('reconciles TON once the hot wallet\'s float is recorded, after the deposit is swept; unrecorded coins are a difference', async () => {
    const row = async () => (await custodyBalances(database.pool, custody.chain)).find((r) => r.currency === 'TON');
    // The 10 TON the operator sent before the withdrawal, unrecorded: exactly the difference.
    expect(await row()).toMatchObject({ difference: toNano('10'), matches: false, inFlight: 0 });
    expect(await fundGasFromChain(database.pool, custody.chain, { network: 'TON', amount: '10', key: 'ton-funding-1' })).toMatchObject({ units: toNano('10'), replayed: false });
    expect(await row()).toMatchObject({ gasFloat: toNano('10') - BigInt((await database.pool.query<{ fee: string }>(`SELECT sum(network_fee)::text AS fee FROM withdrawals`)).rows[0]?.fee ?? '0'), difference: 0n, matches: true });
    const sweeps = await waitFor('swept', async () => {
      await collectDeposits(database.pool, custody.chain, quietLog);
      standIn.emptyBlock();
      const all = (await database.pool.query<{ state: string; fee: string }>(`SELECT state, fee::text FROM sweeps`)).rows;
      return all.length === 1 && all.every((s) => s.state === 'CONFIRMED') && all;
    });
    expect(BigInt(sweeps[0]?.fee ?? '0')).toBeGreaterThan(0n);
    expect(await row()).toMatchObject({ difference: 0n, matches: true });
    // Another deposit to the wallet, deployed now: it pays for taking the message in.
    const again = (await database.pool.query<{ to_address: string }>(`SELECT to_address FROM chain_deposits WHERE network = 'TON' LIMIT 1`)).rows[0]?.to_address ?? '';
    await standIn.fund(again, toNano('1'));
    await scanDeposits(database.pool, custody.chain, 'TON');
    standIn.emptyBlock();
    standIn.emptyBlock();
    await confirmDeposits(database.pool, custody.chain, quietLog);
    expect(await row()).toMatchObject({ inFlight: 0, difference: 0n, matches: true });
    // What the operator sends arrives less the hot wallet's fee for taking it in: that is the difference to record.
    await standIn.fund(await custody.chain.hotWalletAddress('TON'), toNano('0.5'));
    const unrecorded = (await row())?.difference ?? 0n;
    expect(unrecorded).toBeLessThanOrEqual(toNano('0.5'));
    expect(unrecorded).toBeGreaterThan(toNano('0.499'));
    await expect(fundGasFromChain(database.pool, custody.chain, { network: 'TON', amount: '0.5', key: 'ton-funding-2' })).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    await fundGasFromChain(database.pool, custody.chain, { network: 'TON', amount: formatUnits(unrecorded, 9), key: 'ton-funding-2' });
    expect(await row()).toMatchObject({ difference: 0n, matches: true });
  });
});

describe('TON recipients in the address book and the address check', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let standIn: TonStandIn;
  let custody: Custody;

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    standIn = await startTonStandIn();
    database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: await mkdtemp(join(tmpdir(), 'wallet-test-data-')) }, quietLog);
    const dataDir = await mkdtemp(join(tmpdir(), 'wallet-test-data-'));
    const chains = chainsConfig({ DEVNET_BLOCK_MS: 100, TON_API_URL: standIn.url }, 'devnet');
    custody = await openCustody({ production: false, publicUrl: 'http://wallet.test', dataDir, walletSeed: TEST_MNEMONIC, secretsKey: TEST_SECRETS_KEY, chains, workerPollMs: 50, ratesWalkMs: 0 }, quietLog, database.pool);
  });
  afterAll(async () => {
    await custody?.close();
    await standIn?.close();
    await database?.close();
    await testDatabase?.drop();
  });

  it('keeps the bounce flag as entered and warns of a bounceable address of an undeployed wallet', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    const undeployed = Address.parse(await deriveAddress(OUTSIDE_SEED, 'TON', 8, 'mainnet'));
    const eq = undeployed.toString({ bounceable: true, urlSafe: true });
    const uq = undeployed.toString({ bounceable: false, urlSafe: true });
    expect((await addAddress(database.pool, accountId, { name: 'Bounceable', blockchain: 'TON', address: eq }, addressing)).address).toBe(eq);
    expect((await addAddress(database.pool, accountId, { name: 'Plain', blockchain: 'TON', address: uq }, addressing)).address).toBe(uq);
    expect((await addAddress(database.pool, accountId, { name: 'Raw', blockchain: 'TON', address: Address.parse(await deriveAddress(OUTSIDE_SEED, 'TON', 9, 'mainnet')).toRawString() }, addressing)).address).toMatch(/^EQ/);

    const service = createWithdrawalService({ pool: database.pool, chain: custody.chain, rates: custody.rates, addresses: addressing, catalogue: custody.catalogue, settings: { fees: {}, blockedAddresses: [], feeMarginBps: 2000 } });
    expect(await service.checkAddress(accountId, 'TON', eq)).toMatchObject({ checkResult: 'VALID', warning: 'BOUNCEABLE_UNINITIALISED', saved: true, recipientName: 'Bounceable' });
    expect(await service.checkAddress(accountId, 'TON', Address.parse(eq).toRawString())).toMatchObject({ warning: 'BOUNCEABLE_UNINITIALISED' });
    expect((await service.checkAddress(accountId, 'TON', uq)).warning).toBeUndefined();
    // Once the wallet is deployed, its bounceable address is the right one to use.
    const deployed = (await standIn.blockchain.treasury('toncenter-stand-in')).address.toString({ bounceable: true });
    expect(await service.checkAddress(accountId, 'TON', deployed)).toMatchObject({ checkResult: 'VALID' });
    expect((await service.checkAddress(accountId, 'TON', deployed)).warning).toBeUndefined();
    // The devnet cannot tell a wallet's state: it answers UNKNOWN, and nothing is warned.
    expect(await custody.chain.accountState?.('BITCOIN', 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu')).toBe('UNKNOWN');
    // The API down: the check still answers, without a warning.
    await standIn.close();
    expect((await service.checkAddress(accountId, 'TON', eq)).warning).toBeUndefined();
  });
});
