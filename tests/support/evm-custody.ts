import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from 'viem';
import { chainsConfig } from '../../src/server/config-chains.ts';
import { openCustody, type Custody } from '../../src/server/custody.ts';
import { openDatabase, type Database } from '../../src/server/db/database.ts';
import { addAssets, listAssets } from '../../src/server/domain/assets.ts';
import type { Anvil } from './anvil.ts';
import { quietLog, TEST_MNEMONIC, TEST_SECRETS_KEY } from './custody.ts';

export type EvmTokens = { USDT_ETH: Address; USDC_ETH: Address };

/** The tests' two tokens on `anvil`: USDT_ETH behaves like mainnet USDT (no boolean from `transfer`), USDC_ETH like USDC. */
export async function deployTestTokens(anvil: Pick<Anvil, 'deploy'>): Promise<EvmTokens> {
  return { USDT_ETH: await anvil.deploy('TetherLike'), USDC_ETH: await anvil.deploy('StandardToken') };
}

/** The custody core on a test database with ETHEREUM on `anvil` (CHAIN_ENV=regtest) and the other networks on the devnet. */
export async function openEvmCustody(databaseUrl: string, anvil: Pick<Anvil, 'url'>, tokens: EvmTokens, confirmations = 3): Promise<{ database: Database; custody: Custody }> {
  const database = await openDatabase({ databaseUrl, dataDir: await mkdtemp(join(tmpdir(), 'wallet-test-data-')) }, quietLog);
  const chains = chainsConfig({ CHAIN_ENV: 'regtest', DEVNET_BLOCK_MS: 100, CONFIRMATIONS: `ETHEREUM:${confirmations}`, ETHEREUM_RPC_URL: anvil.url, ETHEREUM_TOKENS: tokens }, 'devnet');
  const custody = await openCustody(
    { production: false, publicUrl: 'http://wallet.test', dataDir: await mkdtemp(join(tmpdir(), 'wallet-test-data-')), walletSeed: TEST_MNEMONIC, secretsKey: TEST_SECRETS_KEY, chains, workerPollMs: 50, ratesWalkMs: 0 },
    quietLog,
    database.pool,
  );
  const close = database.close;
  database.close = async () => {
    await custody.close();
    await close();
  };
  return { database, custody };
}

/** The deposit address of `currency` for a wallet account (the asset is added if needed). */
export async function depositAddressOf(custody: Custody, database: Database, accountId: string, currency: string): Promise<Address> {
  await addAssets(database.pool, accountId, [currency], custody.catalogue, custody);
  const address = (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === currency)?.depositAddress;
  if (!address) throw new Error(`no ${currency} deposit address`);
  return address as Address;
}
