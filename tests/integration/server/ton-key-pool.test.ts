import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mnemonicToSeedSync } from '@scure/bip39';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createWalletAccount, quietLog, TEST_MNEMONIC } from '../../support/custody.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import { seedKeys } from '../../../src/server/adapters/keys/wallet-keys.ts';
import { publicKeyMac, TON_POOL_AHEAD, topUpTonKeys } from '../../../src/server/signer/keys.ts';

/**
 * The signer's TON key pool at a wallet's size (issue 35): a database whose newest account has index 1,000,000 gets
 * a window of keys up to it and beyond, not a million derivations at the signer's start; an older account's key is
 * derived when it is asked for.
 */
describe("the signer's TON key pool", () => {
  let testDb: TestDatabase;
  let database: Database;
  const keys = seedKeys(mnemonicToSeedSync(TEST_MNEMONIC), 'pool-test');
  const mac = publicKeyMac('t'.repeat(64));

  beforeAll(async () => {
    testDb = await createTestDatabase(inject('adminDatabaseUrl'));
    database = await openDatabase({ databaseUrl: testDb.url, dataDir: await mkdtemp(join(tmpdir(), 'wallet-pool-')) }, quietLog);
  });
  afterAll(async () => {
    await database?.close();
    await testDb?.drop();
  });

  const pooled = async () => (await database.pool.query<{ index: number }>(`SELECT derivation_index AS index FROM custody_public_keys WHERE network = 'TON' ORDER BY 1`)).rows.map((r) => r.index);

  it('derives a window up to the newest account, and an older one on demand', async () => {
    const { accountId } = await createWalletAccount(database.pool);
    await database.pool.query(`INSERT INTO wallet_account_keys (wallet_account_id, derivation_index, seed_fingerprint) OVERRIDING SYSTEM VALUE VALUES ($1, 1000000, 'pool-test')`, [accountId]);
    const started = performance.now();
    const added = await topUpTonKeys(database.pool, keys, mac, { repairAll: true });
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(added).toBe(2 * TON_POOL_AHEAD + 2);
    const indexes = await pooled();
    expect(indexes[0]).toBe(1_000_000 + TON_POOL_AHEAD - 2 * TON_POOL_AHEAD);
    expect(indexes).toContain(1_000_000);
    expect(indexes).toContain(1_000_000 + TON_POOL_AHEAD);
    // An account made long ago adds TON: its key is derived when the gateway asks for it.
    expect(await topUpTonKeys(database.pool, keys, mac, { through: 42 })).toBe(1);
    expect(await pooled()).toContain(42);
    // A second start derives nothing.
    expect(await topUpTonKeys(database.pool, keys, mac, { repairAll: true })).toBe(0);
  });
});
