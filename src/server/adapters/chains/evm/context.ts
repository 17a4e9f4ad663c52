/** What every part of the EVM adapter shares: the node, the database, the keys and tokens, the checked chain id. */
import type pg from 'pg';
import { getAddress, type Address, type PublicClient } from 'viem';
import type { EvmKeys } from './keys.ts';
import { createAddressSet, entryBuffers, readDepositAddresses } from '../address-set.ts';

export type EvmContext = {
  pool: pg.Pool;
  client: PublicClient;
  /** The node's chain id, checked against CHAIN_ENV (rpc.ts); awaited before any other call. */
  chainId: () => Promise<number>;
  keys: EvmKeys;
  /** Currency per token contract (lower-case address), and back. */
  tokenCurrency: ReadonlyMap<string, string>;
  tokenContract: ReadonlyMap<string, Address>;
  confirmations: number;
};

/**
 * The custody's deposit addresses on Ethereum for the block scan, in memory (address-set.ts: a million in about
 * 20 MB), loaded once, then only the rows added since (address-set.ts readDepositAddresses). `find` takes a
 * lower-case address and gives its EIP-55 form.
 */
export function createEvmAddressSet(pool: pg.Pool) {
  const set = createAddressSet(20, 0);
  let since: Date | null = null;
  return {
    async refresh(): Promise<void> {
      const found = entryBuffers(20, 0);
      since = await readDepositAddresses(pool, 'ETHEREUM', since, (address) => found.push(Buffer.from(address.slice(2), 'hex'), ''));
      found.addTo(set);
    },
    find: (lower: string): Address | undefined => (lower.length === 42 && set.get(Buffer.from(lower.slice(2), 'hex')) !== undefined ? getAddress(lower) : undefined),
    get size() {
      return set.size;
    },
  };
}

/** The custody's addresses on Ethereum: every deposit address and the hot wallet, by lower-case address (EIP-55 values). */
export async function custodyAddresses(context: EvmContext): Promise<Map<string, Address>> {
  const rows = await context.pool.query<{ address: string }>(`SELECT address FROM deposit_addresses WHERE network = 'ETHEREUM'`);
  const map = new Map<string, Address>();
  for (const { address } of rows.rows) map.set(address.toLowerCase(), getAddress(address));
  const hot = context.keys.hotAddress();
  map.set(hot.toLowerCase(), hot);
  return map;
}

/** A token's contract, or an error naming the currency (ETHEREUM_TOKENS lacks it). */
export function contractOf(context: EvmContext, currency: string): Address {
  const contract = context.tokenContract.get(currency);
  if (!contract) throw new Error(`${currency} has no contract in ETHEREUM_TOKENS`);
  return contract;
}
