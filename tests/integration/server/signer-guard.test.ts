import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createWalletAccount, openTestCustody, quietLog, TEST_MNEMONIC, TEST_SECRETS_KEY, type TestCustody } from '../../support/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { openCustody, type Custody, type CustodyConfig } from '../../../src/server/custody.ts';
import { startSigner, type RunningSigner, type SignerConfig } from '../../../src/server/signer/service.ts';
import { PublicKeysUnverifiedError } from '../../../src/server/signer/keys.ts';
import { chainsConfig } from '../../../src/server/config-chains.ts';
import { addAssets, listAssets } from '../../../src/server/domain/assets.ts';
import { openWithdrawal } from '../../../src/server/domain/withdrawals/open.ts';
import { approvalSealer, TOP_UP_FEE_MARGIN } from '../../../src/server/domain/signing.ts';
import { ensureUserLedgerAccount, SYSTEM_ACCOUNTS, systemAccountId } from '../../../src/server/domain/ledger.ts';
import { transfer } from '../../../src/server/domain/ledger-writes.ts';
import { findCoin } from '../../../src/lib/currencies.ts';
import { parseDecimal } from '../../../src/lib/amount.ts';
import { signerClient, SignerCallError } from '../../../src/server/adapters/signer/channel.ts';
import type { SignedWithdrawal } from '../../../src/server/adapters/chains/port.ts';
import { accountXpubs } from '../../../src/server/adapters/keys/wallet-keys.ts';
import { seedFromMnemonic } from '../../../src/server/adapters/keys/seed.ts';
import { unitsOf } from '../../../src/lib/money.ts';

/**
 * The review of the signer (issue 31): what it records is authenticated, what it signs is capped, and it refuses what
 * the sealed order does not show. The signer runs in this process on the devnet, the keyless custody (the gateway's
 * and the worker's) beside it on its channel, as `npm start` composes them.
 */
describe('the signer guards', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let database: Database;
  let local: TestCustody;
  let signer: RunningSigner;
  let signerConfig: SignerConfig;
  let keylessConfig: CustodyConfig;
  const token = randomBytes(32).toString('hex');
  const keyless: Custody[] = [];

  /** A user's PENDING outside BTC withdrawal of `amount` (fee 0.001 BTC), held and sealed as the gateway makes it. */
  const withdrawal = async (amount: string, to?: string) => {
    const { accountId } = await createWalletAccount(database.pool);
    const coin = findCoin('BTC')!;
    const units = unitsOf(parseDecimal(amount, 8));
    await ensureUserLedgerAccount(database.pool, accountId);
    await transfer(database.pool, { key: `fund:${accountId}`, kind: 'DEPOSIT', from: systemAccountId(SYSTEM_ACCOUNTS.world('BITCOIN')), to: accountId, currency: 'BTC', amount: units });
    const address = to ?? (await local.addresses.derive(local.keys, 'BITCOIN', 1_000 + Math.floor(Math.random() * 1_000_000)));
    const check = { checkResult: 'VALID', belongsToSameUser: false, accountType: 'B2C', internal: false, address, network: 'BITCOIN', recipientName: null, saved: false, recipientAccountId: null, senderType: 'B2C', senderName: null } as const;
    return openWithdrawal(database.pool, { account: accountId, coin, units, fee: unitsOf(100_000n), check, idempotencyKey: randomBytes(8).toString('hex'), requestHash: 'x', seal: approvalSealer(token) });
  };
  const ask = (request: Parameters<ReturnType<typeof signerClient>['call']>[0]) => signerClient({ path: signerConfig.signer.socket!, token }).call(request);
  const refusal = async (request: Parameters<typeof ask>[0]) => {
    const error = await ask(request).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(SignerCallError);
    return error as SignerCallError;
  };

  const openKeyless = async () => {
    const custody = await openCustody(keylessConfig, quietLog, database.pool, { owner: false, signing: 'signer' });
    keyless.push(custody);
    return custody;
  };

  beforeAll(async () => {
    db = await createTestDatabase(inject('adminDatabaseUrl'), 'wallet_signer_guard');
    ({ database, custody: local } = await openTestCustody(db.url));
    const dataDir = await mkdtemp(join(tmpdir(), 'signer-guard-'));
    const chains = chainsConfig({ DEVNET_BLOCK_MS: 100, CONFIRMATIONS: 'BITCOIN:2,ETHEREUM:3,TRON:2' }, 'devnet');
    // At most 1 BTC a day signed out (SIGNER_DAILY_MAX=BITCOIN:1).
    const signerSettings = { mode: 'external' as const, socket: join(dataDir, 'signer.sock'), token, dailyMax: { BTC: 100_000_000n } };
    signerConfig = { production: false, publicUrl: 'http://wallet.test', dataDir, walletSeed: TEST_MNEMONIC, chains, signer: signerSettings };
    signer = await startSigner(signerConfig, quietLog, database.pool);
    keylessConfig = { production: false, publicUrl: 'http://wallet.test', dataDir, walletSeed: undefined, secretsKey: TEST_SECRETS_KEY, chains, signer: signerSettings, workerPollMs: 50, ratesWalkMs: 0 };
  });
  afterAll(async () => {
    for (const custody of keyless) await custody.close();
    await signer?.close();
    await database?.close();
    await db?.drop();
  });

  describe('the public keys the signer records', () => {
    it('are verified by the keyless processes: swapped xpubs stop them from starting, until the signer records them again', async () => {
      const remote = await openKeyless();
      const { accountId } = await createWalletAccount(database.pool);
      await addAssets(database.pool, accountId, ['BTC'], remote.catalogue, remote);
      const address = (await listAssets(database.pool, accountId, remote.catalogue, remote.addressGuard)).find((a) => a.currency === 'BTC')?.depositAddress;
      expect(address).toBe(await local.addresses.derive(local.keys, 'BITCOIN', 0));
      // Whoever writes the database puts the xpubs of another seed (its own) in place of the custody's.
      const stored = (await database.pool.query<{ value: { xpubs: Record<string, string> } }>(`SELECT value FROM app_setting WHERE key = 'wallet.xpubs'`)).rows[0]!.value;
      const other = accountXpubs(seedFromMnemonic('legal winner thank year wave sausage worth useful legal winner thank yellow', 'env').bytes, Object.keys(stored.xpubs));
      expect(other).not.toEqual(stored.xpubs);
      await database.pool.query(`UPDATE app_setting SET value = jsonb_set(value, '{xpubs}', $1::jsonb) WHERE key = 'wallet.xpubs'`, [JSON.stringify(other)]);
      await expect(openKeyless()).rejects.toThrow(PublicKeysUnverifiedError);
      await expect(openKeyless()).rejects.toThrow(/wallet\.xpubs\) do not verify/);
      // A MAC copied along does not help: it covers the keys.
      await database.pool.query(`UPDATE app_setting SET value = value - 'mac' WHERE key = 'wallet.xpubs'`);
      await expect(openKeyless()).rejects.toThrow(PublicKeysUnverifiedError);
      // The signer's next start records them again from the seed: the gateway starts and derives the same address.
      await signer.close();
      signer = await startSigner(signerConfig, quietLog, database.pool);
      const again = await openKeyless();
      expect(await again.addresses.derive(again.keys, 'BITCOIN', 0)).toBe(address);
    });

    it('hands out no TON address from a key swapped in the database: the signer records it again from the seed', async () => {
      const remote = await openKeyless();
      const index = 7;
      const right = await local.addresses.derive(local.keys, 'TON', index);
      const attacker = randomBytes(32).toString('hex');
      await database.pool.query(`UPDATE custody_public_keys SET public_key = $2 WHERE network = 'TON' AND derivation_index = $1`, [index, attacker]);
      // Read through the keyless custody: the row does not verify, the signer is asked, and it puts the seed's key back.
      expect(await remote.addresses.derive(remote.keys, 'TON', index)).toBe(right);
      const row = (await database.pool.query<{ public_key: string }>(`SELECT public_key FROM custody_public_keys WHERE network = 'TON' AND derivation_index = $1`, [index])).rows[0];
      expect(row?.public_key).not.toBe(attacker);
      // With the signer down, a swapped key gives no address at all.
      await database.pool.query(`UPDATE custody_public_keys SET public_key = $2 WHERE network = 'TON' AND derivation_index = $1`, [index + 1, attacker]);
      await signer.close();
      try {
        await expect(remote.addresses.derive(remote.keys, 'TON', index + 1)).rejects.toThrow();
        // Even a row with the attacker's own MAC (made without SIGNER_TOKEN) does not verify.
        await database.pool.query(`UPDATE custody_public_keys SET mac = $2 WHERE network = 'TON' AND derivation_index = $1`, [index + 1, 'ab'.repeat(32)]);
        await expect(remote.addresses.derive(remote.keys, 'TON', index + 1)).rejects.toThrow();
      } finally {
        signer = await startSigner(signerConfig, quietLog, database.pool);
      }
      // The signer's start checked every row: the swapped one is the seed's again.
      expect(await remote.addresses.derive(remote.keys, 'TON', index + 1)).toBe(await local.addresses.derive(local.keys, 'TON', index + 1));
    });
  });

  describe('the daily cap (SIGNER_DAILY_MAX)', () => {
    it('refuses, whatever the seals, the withdrawal that would take a day over the cap, and counts an order asked again once', async () => {
      const first = await withdrawal('0.6');
      const signed = (await ask({ op: 'withdrawal', id: first })) as SignedWithdrawal;
      expect(signed.rawTx).toBeTruthy();
      // 0.599 out; another 0.499 would make 1.098 BTC in 24 hours.
      const second = await withdrawal('0.5');
      const refused = await refusal({ op: 'withdrawal', id: second });
      expect(refused.code).toBe('OVER_DAILY_CAP');
      expect(refused.message).toMatch(/would take what the signer signed out in 24 hours to 1\.098 BTC, over SIGNER_DAILY_MAX 1 BTC/);
      // The first asked again: the same bytes, not counted twice; 0.399 more fits (0.998).
      expect(await ask({ op: 'withdrawal', id: first })).toEqual(signed);
      const third = await withdrawal('0.4');
      expect(((await ask({ op: 'withdrawal', id: third })) as SignedWithdrawal).rawTx).toBeTruthy();
      expect((await refusal({ op: 'withdrawal', id: second })).code).toBe('OVER_DAILY_CAP');
      // Whoever deletes the signer's record from the database does not lift the running signer's cap.
      await database.pool.query('DELETE FROM signer_signed_payments');
      expect((await refusal({ op: 'withdrawal', id: second })).code).toBe('OVER_DAILY_CAP');
      // The refused one waits PENDING with its hold: nothing was signed for it.
      expect((await database.pool.query<{ state: string }>('SELECT state FROM withdrawals WHERE id = $1', [second])).rows[0]?.state).toBe('PENDING');
    });
  });

  describe('gas top-ups', () => {
    it('are refused above what moving the sweep\'s token costs (the fee estimate × TOP_UP_FEE_MARGIN)', async () => {
      const index = 42;
      const address = await local.addresses.derive(local.keys, 'ETHEREUM', index);
      const sweep = (
        await database.pool.query<{ id: string }>(
          `INSERT INTO sweeps (network, currency, address, derivation_index, amount) VALUES ('ETHEREUM', 'USDT_ETH', $1, $2, 1000000) RETURNING id`,
          [address, index],
        )
      ).rows[0]!.id;
      const fee = await local.chain.estimateFee({ network: 'ETHEREUM', currency: 'USDT_ETH', toAddress: address, amount: unitsOf(1n) });
      const ceiling = fee.amount * TOP_UP_FEE_MARGIN;
      const refused = await refusal({ op: 'top-up', reference: `sweep:${sweep}:top-up:1`, amount: (ceiling + 1n).toString() });
      expect(refused.code).toBe('OVER_FEE_CEILING');
      expect((await refusal({ op: 'top-up', reference: `sweep:${sweep}:top-up:1`, amount: (10n ** 20n).toString() })).code).toBe('OVER_FEE_CEILING');
      // What the sweep needs is signed.
      expect(((await ask({ op: 'top-up', reference: `sweep:${sweep}:top-up:1`, amount: fee.amount.toString() })) as SignedWithdrawal).txHash).toBeTruthy();
    });
  });
});
