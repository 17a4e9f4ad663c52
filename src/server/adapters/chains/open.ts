/**
 * The chain adapters' registry and router. Each network is either on one adapter or off. `CHAIN_ADAPTERS` lists
 * the adapters in order of preference: each network goes to the first entry that offers it with these options, so
 * a real node configured for a network wins over the devnet. Today the only entry is the devnet (all networks at
 * once, never in production); the UTXO, EVM, TON and TRON adapters plug in by adding one entry each, e.g.
 *   { name: 'bitcoin-core', networks: (o) => o.nodes.BITCOIN ? ['BITCOIN'] : [], open: (pool, o) => createUtxoAdapter(...) }
 * The port the custody gets routes each call to its network's adapter and lists only the networks that are on.
 */
import type pg from 'pg';
import { NETWORKS, type Network } from '../../../lib/currencies.ts';
import { createDevnet, isDevnet, type DevnetChain } from './devnet.ts';
import { createTronAdapter } from './tron/adapter.ts';
import { createTonAdapter } from './ton/adapter.ts';
import { createEvmAdapter } from './evm/adapter.ts';
import { createUtxoAdapter } from './utxo/adapter.ts';
import { UTXO_NETWORKS } from './utxo/networks.ts';
import { ChainOffError, ChainUnsupportedError, type ChainAdapter, type ChainAddressing, type ChainSettings, type SweepSource } from './port.ts';

/** What the chain adapters need: the chains' settings (config-chains.ts), the custody's seed and address rules. */
export type ChainsOptions = ChainSettings & {
  publicUrl: string;
  seed: Uint8Array;
  /** The custody's address rules (derivation paths, formats), owned by the domain. */
  addresses: ChainAddressing;
};

/** One kind of adapter: which networks it runs with these options (none: not configured), and how to open it. */
export type ChainAdapterEntry = {
  name: string;
  networks(options: ChainsOptions): readonly Network[];
  open(pool: pg.Pool, options: ChainsOptions): ChainAdapter;
};

/** Adapters in order of preference: a network goes to the first that offers it. */
export const CHAIN_ADAPTERS: readonly ChainAdapterEntry[] = [
  {
    name: 'ethereum-rpc',
    networks: (options) => (options.evm.rpcUrl ? ['ETHEREUM'] : []),
    open: (pool, options) =>
      createEvmAdapter(pool, {
        rpcUrl: options.evm.rpcUrl ?? '',
        env: options.env,
        tokens: options.evm.tokens,
        confirmations: options.confirmations.ETHEREUM,
        replaceAfterBlocks: options.evm.replaceAfterBlocks,
        seed: options.seed,
        addresses: options.addresses,
      }),
  },
  {
    // Bitcoin, Litecoin and Dogecoin on Bitcoin Core–style nodes: the networks whose *_RPC_URL is set.
    name: 'utxo-node',
    networks: (options) => UTXO_NETWORKS.filter((network) => options.utxo.nodes[network] !== undefined),
    open: (pool, options) =>
      createUtxoAdapter(pool, { env: options.env, seed: options.seed, addresses: options.addresses, confirmations: options.confirmations, ...options.utxo }),
  },
  {
    name: 'tron',
    networks: (options) => (options.tron.apiUrl ? ['TRON'] : []),
    open: (pool, options) =>
      createTronAdapter(pool, { ...options.tron, apiUrl: options.tron.apiUrl ?? '', confirmations: options.confirmations.TRON, env: options.env, seed: options.seed, addresses: options.addresses }),
  },
  {
    name: 'toncenter',
    networks: (options) => (options.ton.apiUrl ? ['TON'] : []),
    open: (pool, options) =>
      createTonAdapter(pool, { apiUrl: options.ton.apiUrl ?? '', apiKey: options.ton.apiKey, env: options.env, seed: options.seed, addresses: options.addresses, confirmations: options.confirmations.TON }),
  },
  {
    name: 'devnet',
    networks: (options) => (options.mode === 'devnet' ? NETWORKS : []),
    open: (pool, options) => createDevnet(pool, { blockMs: options.blockMs, confirmations: options.confirmations, publicUrl: options.publicUrl, seed: options.seed, addresses: options.addresses }),
  },
];

export type Chains = {
  /** Every call goes to its network's adapter; `networks` are the networks that are on. */
  port: ChainAdapter;
  /** The devnet where it stands in for the chains (its faucet and explorer under /sandbox/devnet), else undefined. */
  devnet: DevnetChain | undefined;
  /** What runs each network: an adapter's name, or off. */
  adapters: Readonly<Record<Network, string>>;
};

export function openChains(pool: pg.Pool, options: ChainsOptions, registry: readonly ChainAdapterEntry[] = CHAIN_ADAPTERS): Chains {
  const byNetwork: Partial<Record<Network, ChainAdapter>> = {};
  const names: Record<Network, string> = Object.fromEntries(NETWORKS.map((network) => [network, 'off'])) as Record<Network, string>;
  let devnet: DevnetChain | undefined;
  for (const entry of registry) {
    const wanted = entry.networks(options).filter((network) => byNetwork[network] === undefined);
    if (wanted.length === 0) continue;
    const adapter = entry.open(pool, options);
    if (isDevnet(adapter)) devnet = adapter;
    for (const network of wanted) {
      byNetwork[network] = adapter;
      names[network] = entry.name;
    }
  }
  return { port: routeChains(byNetwork), devnet, adapters: names };
}

/** One port over several adapters; a network without one refuses every call with ChainOffError. */
export function routeChains(byNetwork: Partial<Record<Network, ChainAdapter>>): ChainAdapter {
  const on = NETWORKS.filter((network) => byNetwork[network] !== undefined);
  const adapter = (network: Network): ChainAdapter => {
    const found = byNetwork[network];
    if (!found) throw new ChainOffError(`${network} is off: no chain adapter is configured for it`);
    return found;
  };
  return {
    networks: on,
    requiredConfirmations: (network) => adapter(network).requiredConfirmations(network),
    scan: async (network, cursor, limit) => adapter(network).scan(network, cursor, limit),
    status: async (network, transfers) => adapter(network).status(network, transfers),
    explorerUrl: (network) => byNetwork[network]?.explorerUrl(network),
    hotWalletAddress: async (network) => adapter(network).hotWalletAddress(network),
    signWithdrawal: async (order) => adapter(order.network).signWithdrawal(order),
    broadcast: async (network, rawTx) => adapter(network).broadcast(network, rawTx),
    accountState: async (network, address) => (await adapter(network).accountState?.(network, address)) ?? 'UNKNOWN',
    estimateFee: async (query) => adapter(query.network).estimateFee(query),
    replaceByFee: async (stuck, fee) => adapter(stuck.order.network).replaceByFee(stuck, fee),
    replaceAfterBlocks: (network) => byNetwork[network]?.replaceAfterBlocks?.(network),
    tipHeight: async (network) => {
      const found = adapter(network);
      if (!found.tipHeight) throw new ChainUnsupportedError(`${network}'s adapter does not tell its height`);
      return found.tipHeight(network);
    },
    holdings: async (network) => adapter(network).holdings(network),
    collection: {
      // An off network sweeps nothing: there is nobody to ask.
      sweeps: (network) => byNetwork[network]?.collection.sweeps(network) ?? false,
      sweep: async (source: SweepSource) => adapter(source.network).collection.sweep(source),
      topUpGas: async (target) => adapter(target.network).collection.topUpGas(target),
    },
  };
}
