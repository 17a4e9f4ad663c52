import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEther, type Address, type Hex } from 'viem';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { anvilAccount, mintCall, startAnvil, tokenAbi, type Anvil } from '../../support/anvil.ts';
import { auditFailures, createWalletAccount, quietLog } from '../../support/custody.ts';
import { depositAddressOf, deployTestTokens, openEvmCustody, type EvmTokens } from '../../support/evm-custody.ts';
import type { Custody } from '../../../src/server/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { listAssets } from '../../../src/server/domain/assets.ts';
import { confirmDeposits, scanDeposits } from '../../../src/server/domain/deposits.ts';
import { createEvmAdapter } from '../../../src/server/adapters/chains/evm/adapter.ts';
import { chainAddressing } from '../../../src/server/domain/addresses.ts';
import { encodeFunctionData } from 'viem';

/**
 * Deposits of ETH, a USDT-like token (transfer returns nothing) and a USDC-like one, read from a live anvil node by the
 * EVM adapter through the domain's scanner: Pending from the first block, credited after the confirmations, once,
 * also across a reorganisation.
 */
describe('Ethereum deposits on anvil', () => {
  let anvil: Anvil;
  let tokens: EvmTokens;
  let testDatabase: TestDatabase;
  let database: Database;
  let custody: Custody;

  beforeAll(async () => {
    anvil = await startAnvil();
    tokens = await deployTestTokens(anvil);
    for (const token of Object.values(tokens)) await anvil.send({ to: token, data: mintCall(anvilAccount.address, 1_000_000_000n) });
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    ({ database, custody } = await openEvmCustody(testDatabase.url, anvil, tokens));
  });
  afterEach(async () => {
    expect(await auditFailures(database.pool)).toEqual([]);
  });
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
    anvil?.stop();
  });

  const tokenTransfer = (to: Address, amount: bigint) => encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [to, amount] });
  const scanAndConfirm = async () => {
    await scanDeposits(database.pool, custody.chain, 'ETHEREUM');
    return confirmDeposits(database.pool, custody.chain, quietLog);
  };
  const deposits = async (address: string) =>
    (
      await database.pool.query<{ tx_hash: string; output_index: number; currency: string; amount: string; state: string; from_address: string }>(
        'SELECT tx_hash, output_index, currency, amount::text, state, from_address FROM chain_deposits WHERE to_address = $1 ORDER BY currency',
        [address],
      )
    ).rows;
  const balances = async (accountId: string) =>
    Object.fromEntries((await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).filter((a) => ['ETH', 'USDT_ETH', 'USDC_ETH'].includes(a.currency)).map((a) => [a.currency, a.totalAvailable]));

  it('shows ETH, USDT and USDC deposits Pending from their block and credits each once after the confirmations', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    const address = await depositAddressOf(custody, database, accountId, 'ETH');
    await depositAddressOf(custody, database, accountId, 'USDT_ETH');
    await depositAddressOf(custody, database, accountId, 'USDC_ETH');
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(address).not.toBe(address.toLowerCase());

    // The three in one block, then two more blocks (anvil mines each transaction at once unless told otherwise).
    await anvil.testClient.setAutomine(false);
    const sent = [
      await anvil.wallet.sendTransaction({ to: address, value: parseEther('1.5') }),
      await anvil.wallet.sendTransaction({ to: tokens.USDT_ETH, data: tokenTransfer(address, 25_000_000n) }),
      await anvil.wallet.sendTransaction({ to: tokens.USDC_ETH, data: tokenTransfer(address, 7_250_000n) }),
    ];
    await anvil.mine(1);
    await anvil.testClient.setAutomine(true);
    const [eth, usdt, usdc] = await Promise.all(sent.map((hash) => anvil.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })));
    if (!eth || !usdt || !usdc) throw new Error('not mined');

    expect(await scanAndConfirm()).toBe(0);
    const from = anvilAccount.address;
    expect(await deposits(address)).toEqual([
      { tx_hash: eth.transactionHash, output_index: 0, currency: 'ETH', amount: '1500000000000000000', state: 'PENDING', from_address: from },
      { tx_hash: usdc.transactionHash, output_index: 1, currency: 'USDC_ETH', amount: '7250000', state: 'PENDING', from_address: from },
      { tx_hash: usdt.transactionHash, output_index: 1, currency: 'USDT_ETH', amount: '25000000', state: 'PENDING', from_address: from },
    ]);
    expect(await balances(accountId)).toEqual({ ETH: '0', USDT_ETH: '0', USDC_ETH: '0' });

    // Three confirmations: two more blocks.
    await anvil.mine(1);
    expect(await scanAndConfirm()).toBe(0);
    await anvil.mine(1);
    expect(await scanAndConfirm()).toBe(3);
    expect(await balances(accountId)).toEqual({ ETH: '1.5', USDT_ETH: '25', USDC_ETH: '7.25' });
    // Scanning and confirming again changes nothing.
    await anvil.mine(3);
    expect(await scanAndConfirm()).toBe(0);
    expect((await deposits(address)).map((d) => d.state)).toEqual(['CREDITED', 'CREDITED', 'CREDITED']);
  });

  it('notices a reorganisation by its cursor, reads the replaced blocks again and credits the deposit mined again once', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    const address = await depositAddressOf(custody, database, accountId, 'USDT_ETH');
    await scanAndConfirm();
    const snapshot = await anvil.testClient.snapshot();
    const request = await anvil.wallet.prepareTransactionRequest({ to: tokens.USDT_ETH, data: tokenTransfer(address, 3_000_000n), gas: 100_000n });
    const raw: Hex = await anvil.wallet.signTransaction(request);
    const hash = await anvil.publicClient.sendRawTransaction({ serializedTransaction: raw });
    await anvil.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    expect(await scanAndConfirm()).toBe(0);
    expect((await deposits(address)).map((d) => d.state)).toEqual(['PENDING']);
    const cursor = (await database.pool.query<{ position: string }>(`SELECT position FROM chain_cursors WHERE network = 'ETHEREUM'`)).rows[0]?.position ?? null;

    // The block with the deposit leaves the chain; a longer one without it replaces it, and the transfer is mined again later.
    await anvil.testClient.revert({ id: snapshot });
    await anvil.mine(3);
    const batch = await custody.chain.scan('ETHEREUM', cursor, 100);
    expect(batch.reorg?.orphaned.hash).toBe(cursor?.split(':')[1]);
    expect(batch.transfers.filter((t) => t.txHash === hash)).toEqual([]);
    await anvil.publicClient.sendRawTransaction({ serializedTransaction: raw });
    const again = await anvil.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    const seen = await custody.chain.scan('ETHEREUM', cursor, 100);
    expect(seen.transfers.filter((t) => t.txHash === hash)).toEqual([expect.objectContaining({ outputIndex: 1, amount: 3_000_000n, blockHeight: Number(again.blockNumber) })]);

    await scanDeposits(database.pool, custody.chain, 'ETHEREUM');
    await anvil.mine(2);
    expect(await scanAndConfirm()).toBe(1);
    await anvil.mine(2);
    expect(await scanAndConfirm()).toBe(0);
    expect(await deposits(address)).toEqual([expect.objectContaining({ tx_hash: hash, output_index: 1, state: 'CREDITED', amount: '3000000' })]);
    expect((await balances(accountId)).USDT_ETH).toBe('3');
  });

  it('un-pends a deposit whose block left the chain, fails it while it is gone, and credits it once when it is mined again', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    const address = await depositAddressOf(custody, database, accountId, 'USDC_ETH');
    await scanAndConfirm();
    const snapshot = await anvil.testClient.snapshot();
    const request = await anvil.wallet.prepareTransactionRequest({ to: tokens.USDC_ETH, data: tokenTransfer(address, 4_000_000n), gas: 100_000n });
    const raw: Hex = await anvil.wallet.signTransaction(request);
    const hash = await anvil.publicClient.sendRawTransaction({ serializedTransaction: raw });
    await anvil.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    await anvil.mine(1);
    expect(await scanAndConfirm()).toBe(0);
    expect(await deposits(address)).toEqual([expect.objectContaining({ state: 'PENDING' })]);

    // Gone: the scan notices the reorganisation, the status says DROPPED, the deposit is Failed (nothing credited).
    await anvil.testClient.revert({ id: snapshot });
    await anvil.mine(4);
    expect(await scanAndConfirm()).toBe(0);
    expect(await deposits(address)).toEqual([expect.objectContaining({ state: 'FAILED' })]);
    expect((await balances(accountId)).USDC_ETH).toBe('0');

    // Mined again on the new chain: Pending again, then credited once after its confirmations.
    await anvil.publicClient.sendRawTransaction({ serializedTransaction: raw });
    await anvil.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    expect(await scanAndConfirm()).toBe(0);
    expect(await deposits(address)).toEqual([expect.objectContaining({ state: 'PENDING' })]);
    await anvil.mine(2);
    expect(await scanAndConfirm()).toBe(1);
    await anvil.mine(3);
    expect(await scanAndConfirm()).toBe(0);
    expect(await deposits(address)).toEqual([expect.objectContaining({ tx_hash: hash, output_index: 1, state: 'CREDITED', amount: '4000000' })]);
    expect((await balances(accountId)).USDC_ETH).toBe('4');
  });

  it('reads the same transfers through a WebSocket URL (ETHEREUM_RPC_URL may be ws://)', async () => {
    const overWs = createEvmAdapter(database.pool, { rpcUrl: anvil.url.replace('http://', 'ws://'), env: 'regtest', tokens, keys: custody.keys, replaceAfterBlocks: 12, addresses: chainAddressing('regtest') });
    // From the start (32 blocks below the tip, or block 0): the earlier tests' deposits are there.
    const [viaWs, viaHttp] = [await overWs.scan('ETHEREUM', null, 100), await custody.chain.scan('ETHEREUM', null, 100)];
    expect(viaWs).toEqual(viaHttp);
    expect(viaWs.transfers.length).toBeGreaterThan(0);
  });

  it('refuses a node whose chain id is not the CHAIN_ENV one, saying which it is', async () => {
    const adapter = createEvmAdapter(database.pool, { rpcUrl: anvil.url, env: 'mainnet', tokens, keys: custody.keys, replaceAfterBlocks: 12, addresses: chainAddressing('regtest') });
    await expect(adapter.scan('ETHEREUM', null, 10)).rejects.toThrow(/chain id 31337 .*CHAIN_ENV is mainnet/);
  });
});
