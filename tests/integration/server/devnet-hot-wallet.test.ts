import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { openTestCustody, type TestCustody } from '../../support/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { ChainUnsupportedError } from '../../../src/server/adapters/chains/port.ts';
import { unitsOf } from '../../../src/lib/money.ts';

/** The devnet's side of the chain port beyond withdrawals: fees, collection and gas top-ups. */
describe('the devnet hot wallet', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let custody: TestCustody;

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    ({ database, custody } = await openTestCustody(testDatabase.url));
  });
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  it('estimates fees in the network’s own coin, a token transfer dearer than a coin transfer', async () => {
    const eth = await custody.chain.estimateFee({ network: 'ETHEREUM', currency: 'ETH', toAddress: '0x0', amount: unitsOf(1n) });
    const usdt = await custody.chain.estimateFee({ network: 'ETHEREUM', currency: 'USDT_ETH', toAddress: '0x0', amount: unitsOf(1n) });
    expect(eth).toMatchObject({ network: 'ETHEREUM', currency: 'ETH' });
    expect(usdt.currency).toBe('ETH');
    expect(usdt.amount).toBeGreaterThan(eth.amount);
    expect((await custody.chain.estimateFee({ network: 'TRON', currency: 'USDT_TRX', toAddress: 'T', amount: unitsOf(1n) })).currency).toBe('TRX');
  });

  it('sweeps nothing, replaces nothing, and tops up gas with a real hot-wallet transfer', async () => {
    expect(custody.chain.collection.sweeps('ETHEREUM')).toBe(false);
    const outcome = await custody.chain.collection.sweep({ network: 'ETHEREUM', currency: 'USDT_ETH', address: '0xabc', index: 1, amount: unitsOf(5n), reference: 'sweep-1' });
    expect(outcome.state).toBe('NOT_NEEDED');
    const order = { reference: 'w-1', network: 'ETHEREUM' as const, currency: 'ETH', toAddress: '0x000000000000000000000000000000000000dEaD', amount: unitsOf(1n) };
    const signed = await custody.chain.signWithdrawal(order);
    const fee = await custody.chain.estimateFee(order);
    await expect(custody.chain.replaceByFee({ order, signed, fee }, fee)).rejects.toThrow(ChainUnsupportedError);
    const topUp = await custody.chain.collection.topUpGas({ network: 'ETHEREUM', address: '0x000000000000000000000000000000000000dEaD', amount: unitsOf(10n ** 15n), reference: 'gas-1' });
    expect((await custody.chain.findTransaction(topUp.txHash))?.currency).toBe('ETH');
    // The same top-up again is the same transaction: the node answers it as known.
    expect((await custody.chain.collection.topUpGas({ network: 'ETHEREUM', address: '0x000000000000000000000000000000000000dEaD', amount: unitsOf(10n ** 15n), reference: 'gas-1' })).txHash).toBe(topUp.txHash);
    expect((await custody.chain.broadcasts(topUp.txHash)).map((b) => b.outcome)).toEqual(['ACCEPTED', 'DUPLICATE']);
  });
});
