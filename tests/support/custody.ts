import { chainsConfig } from '../../src/server/config-chains.ts';
import type pg from 'pg';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../../src/server/db/database.ts';
import { createLogger } from '../../src/server/log.ts';
import { openCustody, type Custody, type CustodyConfig } from '../../src/server/custody.ts';
import type { DevnetChain } from '../../src/server/adapters/chains/devnet.ts';
import { auditLedger, type AuditResult } from '../../src/server/domain/ledger-audit.ts';

export { waitFor } from './wait.ts';

/** BIP84's test mnemonic: tests derive known addresses from it. Never a real wallet's seed. */
export const TEST_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
/** A fixed SECRETS_KEY, so a test that opens the custody again on one database finds its secrets. Never a real key. */
export const TEST_SECRETS_KEY = '0000000000000000000000000000000000000000000000000000000000000001';
/** One SIGNER_TOKEN for every process of a test's database, as production shares one. Never a real token. */
export const TEST_SIGNER_TOKEN = 't'.repeat(64);

export const quietLog = createLogger('silent');

/** A custody on the devnet, its chain the devnet itself: tests send deposits and read broadcasts through it. */
export type TestCustody = Custody & { chain: DevnetChain; devnet: DevnetChain };

/** The custody core on a test database, without HTTP: fast blocks, few confirmations, fixed rates. */
export async function openTestCustody(databaseUrl: string, overrides: Partial<CustodyConfig> = {}): Promise<{ database: Database; custody: TestCustody }> {
  const database = await openDatabase({ databaseUrl, dataDir: await mkdtemp(join(tmpdir(), 'wallet-test-data-')) }, quietLog);
  const config: CustodyConfig = {
    production: false,
    publicUrl: 'http://wallet.test',
    dataDir: await mkdtemp(join(tmpdir(), 'wallet-test-data-')),
    walletSeed: TEST_MNEMONIC,
    secretsKey: TEST_SECRETS_KEY,
    chains: { ...chainsConfig({ DEVNET_BLOCK_MS: 100, CONFIRMATIONS: 'BITCOIN:2,ETHEREUM:3,TRON:2' }, 'devnet') },
    workerPollMs: 50,
    ratesWalkMs: 0,
    ...overrides,
  };
  const opened = await openCustody(config, quietLog, database.pool);
  if (!opened.devnet) throw new Error('the test custody runs on the devnet (chains.mode devnet)');
  const custody: TestCustody = { ...opened, chain: opened.devnet, devnet: opened.devnet };
  const close = database.close;
  // Closing the database also stops the custody's notification listener.
  database.close = async () => {
    await custody.close();
    await close();
  };
  return { database, custody };
}

/** A user with one wallet account, made directly in the database (the sign-in area owns the real flow). */
export async function createWalletAccount(pool: pg.Pool): Promise<{ userId: string; accountId: string }> {
  const user = await pool.query<{ id: string }>(`INSERT INTO users DEFAULT VALUES RETURNING id`);
  const userId = user.rows[0]?.id ?? '';
  const account = await pool.query<{ id: string }>(`INSERT INTO wallet_accounts (user_id) VALUES ($1) RETURNING id`, [userId]);
  return { userId, accountId: account.rows[0]?.id ?? '' };
}

/** Runs ledger:audit's checks; returns the failed ones (empty when the ledger is sound). */
export async function auditFailures(pool: pg.Pool): Promise<AuditResult[]> {
  const client = await pool.connect();
  try {
    return (await auditLedger(client)).filter((r) => !r.ok);
  } finally {
    client.release();
  }
}

