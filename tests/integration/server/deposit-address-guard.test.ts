import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createWalletAccount, openTestCustody, TEST_SECRETS_KEY, type TestCustody } from '../../support/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { addAssets, listAssets } from '../../../src/server/domain/assets.ts';
import { createDepositAddressGuard, rekeyDepositAddresses } from '../../../src/server/domain/deposit-address-guard.ts';
import { parseSecretsKey, secretsKeyFrom } from '../../../src/server/adapters/keys/secrets-key.ts';
import { createLogger } from '../../../src/server/log.ts';

/**
 * The stored deposit addresses are shown only when they are the custody's (domain/deposit-address-guard.ts): a MAC
 * under SECRETS_KEY set as each is derived; a swapped address, a row moved to another account or a forged MAC is
 * withheld; a row made before the MAC is checked against the keys and sealed; a rotation's re-seal moves the MACs.
 */
describe('the deposit address guard', () => {
  let testDb: TestDatabase;
  let database: Database;
  let custody: TestCustody;
  // An address that is not the custody's: BIP84's test vector for another account.
  const ATTACKER = 'bcrt1qnjg0jd8228aq7egyzacy8cys3knf9xvrn9d67m';

  beforeAll(async () => {
    testDb = await createTestDatabase(inject('adminDatabaseUrl'));
    ({ database, custody } = await openTestCustody(testDb.url));
  });
  afterAll(async () => {
    await database?.close();
    await testDb?.drop();
  });

  const newAccount = async () => {
    const { accountId } = await createWalletAccount(database.pool);
    await addAssets(database.pool, accountId, ['BTC', 'ETH'], custody.catalogue, custody);
    return accountId;
  };
  const shown = async (accountId: string, currency: string) => (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === currency)?.depositAddress;
  const stored = async (accountId: string, network: string) =>
    (await database.pool.query<{ address: string; mac: string | null }>('SELECT address, mac FROM deposit_addresses WHERE wallet_account_id = $1 AND network = $2', [accountId, network])).rows[0];

  it('seals each address as it is derived and shows it', async () => {
    const account = await newAccount();
    const row = await stored(account, 'BITCOIN');
    expect(row?.mac).toMatch(/\S{20,}/);
    expect(await shown(account, 'BTC')).toBe(row?.address);
  });

  it('withholds an address swapped in the database', async () => {
    const account = await newAccount();
    await database.pool.query(`UPDATE deposit_addresses SET address = $2 WHERE wallet_account_id = $1 AND network = 'BITCOIN'`, [account, ATTACKER]);
    expect(await shown(account, 'BTC')).toBeNull();
    // Clearing the MAC as well does not help: the address is checked against the keys.
    await database.pool.query(`UPDATE deposit_addresses SET mac = NULL WHERE wallet_account_id = $1 AND network = 'BITCOIN'`, [account]);
    expect(await shown(account, 'BTC')).toBeNull();
    // The other network's address is untouched and still shown.
    expect(await shown(account, 'ETH')).toBe((await stored(account, 'ETHEREUM'))?.address);
  });

  it("withholds an address moved to another account with its MAC, and a forged MAC", async () => {
    const victim = await newAccount();
    const { accountId: thief } = await createWalletAccount(database.pool);
    await addAssets(database.pool, thief, ['TON'], custody.catalogue, custody);
    await database.pool.query(`UPDATE deposit_addresses SET wallet_account_id = $2 WHERE wallet_account_id = $1 AND network = 'ETHEREUM'`, [victim, thief]);
    await database.pool.query(`INSERT INTO account_assets (wallet_account_id, currency) VALUES ($1, 'ETH')`, [thief]);
    expect(await shown(thief, 'ETH')).toBeNull();
    await database.pool.query(`UPDATE deposit_addresses SET mac = 'kh1:forged' WHERE wallet_account_id = $1 AND network = 'BITCOIN'`, [victim]);
    expect(await shown(victim, 'BTC')).toBeNull();
  });

  it('withholds a row from before the MAC moved to another account: its index is not the one that account was given', async () => {
    const victim = await newAccount();
    const thief = await newAccount();
    await database.pool.query(`UPDATE deposit_addresses SET mac = NULL WHERE wallet_account_id = $1`, [victim]);
    await database.pool.query(`DELETE FROM deposit_addresses WHERE wallet_account_id = $1 AND network = 'ETHEREUM'`, [thief]);
    await database.pool.query(`UPDATE deposit_addresses SET wallet_account_id = $2 WHERE wallet_account_id = $1 AND network = 'ETHEREUM'`, [victim, thief]);
    expect(await shown(thief, 'ETH')).toBeNull();
    expect((await stored(thief, 'ETHEREUM'))?.mac).toBeNull();
    // The victim's own unsealed row still checks out and is sealed.
    expect(await shown(victim, 'BTC')).toBe((await stored(victim, 'BITCOIN'))?.address);
  });

  it('checks a row made before the MAC against the keys, then seals it', async () => {
    const account = await newAccount();
    const before = await stored(account, 'BITCOIN');
    await database.pool.query(`UPDATE deposit_addresses SET mac = NULL WHERE wallet_account_id = $1`, [account]);
    expect(await shown(account, 'BTC')).toBe(before?.address);
    expect((await stored(account, 'BITCOIN'))?.mac).toBe(before?.mac);
  });

  it('withholds a row from before the MAC whose keys cannot be read now, or throws for a caller that must try again', async () => {
    const account = await newAccount();
    await database.pool.query(`UPDATE deposit_addresses SET mac = NULL WHERE wallet_account_id = $1`, [account]);
    const row = (await database.pool.query<{ network: string; address: string; walletAccountId: string; derivationIndex: number; mac: string | null }>(`SELECT network, address, wallet_account_id AS "walletAccountId", derivation_index AS "derivationIndex", mac FROM deposit_addresses WHERE wallet_account_id = $1 AND network = 'BITCOIN'`, [account])).rows[0];
    if (!row) throw new Error('no stored BTC address');
    const unreadable = createDepositAddressGuard({ secrets: secretsKeyFrom(parseSecretsKey(TEST_SECRETS_KEY) ?? Buffer.alloc(0), 'env'), keys: custody.keys, addresses: { derive: () => Promise.reject(new Error('keys away')) }, log: createLogger('silent') });
    expect(await unreadable.check(database.pool, row)).toBeUndefined();
    await expect(unreadable.check(database.pool, row, { uncheckable: 'throw' })).rejects.toThrow('could not be checked against the keys');
    // Nothing was sealed: the next check with the keys back decides.
    expect((await stored(account, 'BITCOIN'))?.mac).toBeNull();
    expect(await custody.addressGuard.check(database.pool, row, { uncheckable: 'throw' })).toBe(row.address);
  });

  it("keeps the addresses through a SECRETS_KEY rotation: valid under the previous key, moved by the re-seal", async () => {
    const account = await newAccount();
    const address = (await stored(account, 'BITCOIN'))?.address;
    const NEW_KEY = '00000000000000000000000000000000000000000000000000000000000000ff';
    const rotating = secretsKeyFrom(parseSecretsKey(NEW_KEY) ?? Buffer.alloc(0), 'env', [parseSecretsKey(TEST_SECRETS_KEY) ?? Buffer.alloc(0)]);
    const guard = createDepositAddressGuard({ secrets: rotating, keys: custody.keys, addresses: custody.addresses, log: createLogger('silent') });
    expect(await listAssets(database.pool, account, custody.catalogue, guard)).toContainEqual(expect.objectContaining({ currency: 'BTC', depositAddress: address }));
    expect(await rekeyDepositAddresses(database.pool, rotating)).toBeGreaterThanOrEqual(2);
    expect(await rekeyDepositAddresses(database.pool, rotating)).toBe(0);
    const onlyNew = secretsKeyFrom(parseSecretsKey(NEW_KEY) ?? Buffer.alloc(0), 'env');
    const after = createDepositAddressGuard({ secrets: onlyNew, keys: custody.keys, addresses: custody.addresses, log: createLogger('silent') });
    expect(await listAssets(database.pool, account, custody.catalogue, after)).toContainEqual(expect.objectContaining({ currency: 'BTC', depositAddress: address }));
    // The old key alone no longer opens them: the MACs were moved, not copied.
    expect(await shown(account, 'BTC')).toBeNull();
  });
});
