import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import { quietLog } from '../../support/custody.ts';
import { custodyBalances } from '../../../src/server/domain/custody-balances.ts';
import { ChainUnsupportedError } from '../../../src/server/adapters/chains/port.ts';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unitsOf } from '../../../src/lib/money.ts';

/** Issue 30 item 7: one network's node failing (a token contract it does not know) is that network's rows, not a crash. */
describe('custody balances when a node fails', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let pool: pg.Pool;

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: await mkdtemp(join(tmpdir(), 'custody-balances-')) }, quietLog);
    pool = database.pool;
  });
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  it('reports the failing network with its error and the others as usual', async () => {
    const rows = await custodyBalances(pool, {
      networks: ['ETHEREUM', 'LITECOIN', 'BITCOIN'],
      holdings: async (network) => {
        if (network === 'ETHEREUM') throw new Error('the contract 0xdAC1… returned no data ("0x")\n  at readContract');
        if (network === 'BITCOIN') throw new ChainUnsupportedError('the devnet keeps no outputs');
        return { LTC: unitsOf(0n) };
      },
    });
    expect(rows.filter((r) => r.network === 'ETHEREUM').every((r) => r.holdingsError?.startsWith('the contract 0xdAC1') && r.matches === undefined)).toBe(true);
    expect(rows.find((r) => r.currency === 'LTC')).toMatchObject({ holdings: 0n, matches: true, holdingsError: undefined });
    expect(rows.find((r) => r.currency === 'BTC')).toMatchObject({ holdings: undefined, matches: undefined, holdingsError: undefined });
  });
});
