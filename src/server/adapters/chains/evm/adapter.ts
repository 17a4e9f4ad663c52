/**
 * The Ethereum adapter (ETH and the ERC-20 tokens of ETHEREUM_TOKENS) over any Ethereum JSON-RPC node: see README.md.
 */
import type pg from 'pg';
import { getAddress, type Address } from 'viem';
import { findCoin } from '../../../../lib/currencies.ts';
import type { ChainAdapter, ChainAddressing, ChainEnv } from '../port.ts';
import { createEvmCollection, createEvmHoldings } from './collection.ts';
import type { EvmContext } from './context.ts';
import { evmKeys } from './keys.ts';
import type { WalletKeys } from '../../keys/port.ts';
import { keysOf } from '../../keys/wallet-keys.ts';
import { createEvmReader } from './reader.ts';
import { chainIdGuard, openClient } from './rpc.ts';
import { createEvmSender } from './sender.ts';

/** Confirmations a deposit waits for unless CONFIRMATIONS says otherwise. */
export const ETHEREUM_DEFAULT_CONFIRMATIONS = 12;

export type EvmOptions = {
  rpcUrl: string;
  env: ChainEnv;
  /** Currency → ERC-20 contract (ETHEREUM_TOKENS); currencies this wallet does not list on ETHEREUM are ignored. */
  tokens: Readonly<Record<string, string>>;
  confirmations?: number | undefined;
  /** REPLACE_AFTER_BLOCKS: blocks a withdrawal may wait unmined before the worker replaces it by fee. */
  replaceAfterBlocks: number;
  /** The custody keys (public only outside the signer); `seed`: every key of a bare seed (tests). */
  keys?: WalletKeys | undefined;
  seed?: Uint8Array | undefined;
  addresses: ChainAddressing;
  /** CHAIN_CALL_TIMEOUT_MS: each call's timeout outside a request; default the client's own. */
  callTimeoutMs?: number | undefined;
};

export function createEvmAdapter(pool: pg.Pool, options: EvmOptions): ChainAdapter {
  const client = openClient(options.rpcUrl, options.callTimeoutMs);
  const tokens = Object.entries(options.tokens).filter(([currency]) => findCoin(currency)?.network === 'ETHEREUM' && findCoin(currency)?.token === true);
  const tokenContract = new Map<string, Address>(tokens.map(([currency, contract]) => [currency, getAddress(contract)]));
  const contracts = [...tokenContract.values()];
  const shared = contracts.find((contract, i) => contracts.indexOf(contract) !== i);
  if (shared) throw new Error(`ETHEREUM_TOKENS gives two currencies the same contract ${shared}: a transfer could not say which it is`);
  const context: EvmContext = {
    pool,
    client,
    chainId: chainIdGuard(client, options.env),
    keys: evmKeys(keysOf(options), options.addresses),
    tokenContract,
    tokenCurrency: new Map([...tokenContract].map(([currency, contract]) => [contract.toLowerCase(), currency])),
    confirmations: options.confirmations ?? ETHEREUM_DEFAULT_CONFIRMATIONS,
  };
  return {
    networks: ['ETHEREUM'],
    requiredConfirmations: () => context.confirmations,
    // The catalogue links the network's public explorer for CHAIN_ENV (none on regtest).
    explorerUrl: () => undefined,
    replaceAfterBlocks: () => options.replaceAfterBlocks,
    tipHeight: async () => {
      await context.chainId();
      return Number(await client.getBlockNumber());
    },
    ...createEvmReader(context),
    ...createEvmSender(context),
    ...createEvmHoldings(context, (index) => options.addresses.path('ETHEREUM', index)),
    collection: createEvmCollection(context),
  };
}
