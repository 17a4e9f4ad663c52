import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { quietLog } from '../../support/custody.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import { extendedKeyAddress } from '../../../src/server/domain/addresses.ts';
import { consolidationKey, movementId } from '../../../src/server/domain/custody-movements.ts';
import { coldSweepToSign, consolidationToSign, SigningRefusal, type HotColdRules } from '../../../src/server/domain/signing.ts';

/** BIP32 test vector 1's master extended public key: the operator's watch-only cold wallet here. */
const COLD_XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';

/**
 * The signer's rules for cold sweeps and consolidations (domain/signing.ts) on PostgreSQL, with COLD_WALLET an xpub:
 * its receiving addresses up to the network's cold sweeps so far, and nothing past the ceiling or of another coin.
 */
describe('what the signer signs of cold sweeps and consolidations', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  const rules: HotColdRules = { env: 'regtest', ceiling: { LITECOIN: 1_000n }, cold: { LITECOIN: { extendedKey: COLD_XPUB } }, consolidateBelow: { LITECOIN: 5n } };
  const coldAt = (index: number) => extendedKeyAddress(COLD_XPUB, 'LITECOIN', index, 'regtest');

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: await mkdtemp(join(tmpdir(), 'signer-rules-')) }, quietLog);
  });
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  /** A cold sweep as orderColdSweep records it before asking the signer. */
  const recorded = async (to: string, amount: bigint, currency = 'LTC') => {
    const id = randomUUID();
    await database.pool.query(
      `INSERT INTO custody_movements (id, idempotency_key, kind, network, currency, to_address, amount, state) VALUES ($1, $2, 'COLD', 'LITECOIN', $3, $4, $5, 'SIGNING')`,
      [id, `test:${id}`, currency, to, amount.toString()],
    );
    return id;
  };
  const refused = async (work: Promise<unknown>) => {
    const error = await work.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SigningRefusal);
    return (error as SigningRefusal).code;
  };

  it('signs a cold sweep to the xpub\'s receiving addresses only as far as the cold sweeps so far, leaving the ceiling held', async () => {
    const first = await recorded(coldAt(0), 500n);
    expect(await coldSweepToSign(database.pool, first, rules, async () => 1_500n)).toEqual({ reference: `cold:${first}`, network: 'LITECOIN', currency: 'LTC', toAddress: coldAt(0), amount: 500n });
    // One unit more than leaves the ceiling: refused.
    expect(await refused(coldSweepToSign(database.pool, first, rules, async () => 1_499n))).toBe('NOT_HELD');
    // Unless it was signed before (the signer or the worker died before the worker recorded it): the adapter hands
    // back those bytes, checked against the holdings of then; refusing now would leave its inputs taken for good.
    const signedBefore = async (network: string, reference: string) => network === 'LITECOIN' && reference === `cold:${first}`;
    expect((await coldSweepToSign(database.pool, first, rules, async () => 1_499n, signedBefore)).amount).toBe(500n);
    // The destination and the coin are still checked: signed before does not make a tampered row right.
    await database.pool.query('UPDATE custody_movements SET to_address = $2 WHERE id = $1', [first, coldAt(40)]);
    expect(await refused(coldSweepToSign(database.pool, first, rules, async () => 1_499n, signedBefore))).toBe('TAMPERED');
    await database.pool.query('UPDATE custody_movements SET to_address = $2 WHERE id = $1', [first, coldAt(0)]);
    // Two cold sweeps recorded: addresses 0…2 of the xpub are the cold wallet's, address 40 is not (a destination put in the database).
    const far = await recorded(coldAt(40), 100n);
    expect(await refused(coldSweepToSign(database.pool, far, rules, async () => 5_000n))).toBe('TAMPERED');
    await database.pool.query('UPDATE custody_movements SET to_address = $2 WHERE id = $1', [far, coldAt(2)]);
    expect((await coldSweepToSign(database.pool, far, rules, async () => 5_000n)).toAddress).toBe(coldAt(2));
    // Another coin, another state, a network without the signer's own COLD_WALLET, an unknown id: refused.
    const token = await recorded(coldAt(0), 100n, 'USDT_ETH');
    expect(await refused(coldSweepToSign(database.pool, token, rules, async () => 5_000n))).toBe('TAMPERED');
    await database.pool.query(`UPDATE custody_movements SET state = 'FAILED' WHERE id = $1`, [first]);
    expect(await refused(coldSweepToSign(database.pool, first, rules, async () => 5_000n))).toBe('NOT_APPROVED');
    expect(await refused(coldSweepToSign(database.pool, far, { ...rules, cold: {} }, async () => 5_000n))).toBe('NOT_APPROVED');
    expect(await refused(coldSweepToSign(database.pool, randomUUID(), rules, async () => 5_000n))).toBe('UNKNOWN_ORDER');
    expect(await refused(coldSweepToSign(database.pool, 'cold:1', rules, async () => 5_000n))).toBe('BAD_REQUEST');
  });

  it('signs only the network\'s next consolidation, at the signer\'s own rate', async () => {
    const next = movementId(consolidationKey('LITECOIN', 0));
    expect(await consolidationToSign(database.pool, `consolidation:${next}`, 'LITECOIN', rules)).toEqual({ reference: `consolidation:${next}`, network: 'LITECOIN', maxRate: 5n });
    expect(await refused(consolidationToSign(database.pool, `consolidation:${movementId(consolidationKey('LITECOIN', 1))}`, 'LITECOIN', rules))).toBe('NOT_APPROVED');
    expect(await refused(consolidationToSign(database.pool, `consolidation:${movementId(consolidationKey('DOGECOIN', 0))}`, 'DOGECOIN', rules))).toBe('NOT_APPROVED');
    expect(await refused(consolidationToSign(database.pool, `sweep:${next}`, 'LITECOIN', rules))).toBe('BAD_REQUEST');
    // Once it is recorded, the next one is another.
    await database.pool.query(
      `INSERT INTO custody_movements (id, idempotency_key, kind, network, currency, to_address, amount, state, tx_hash, raw_tx) VALUES ($1, $2, 'CONSOLIDATION', 'LITECOIN', 'LTC', $3, 1000, 'BROADCAST', 'aa', 'bb')`,
      [next, consolidationKey('LITECOIN', 0), coldAt(0)],
    );
    expect(await refused(consolidationToSign(database.pool, `consolidation:${next}`, 'LITECOIN', rules))).toBe('NOT_APPROVED');
    expect((await consolidationToSign(database.pool, `consolidation:${movementId(consolidationKey('LITECOIN', 1))}`, 'LITECOIN', rules)).maxRate).toBe(5n);
  });
});
