/**
 * Picks an adapter per network. Each network is either on an adapter or off: today the only adapter is the devnet
 * (all networks at once, never in production); a real node's adapter for one network is added to the map here.
 * The port the custody gets routes each call to its network's adapter and lists only the networks that are on.
 */
import type pg from 'pg';
import { NETWORKS, type Network } from '../../../lib/currencies.ts';
import { createDevnet, type DevnetChain } from './devnet.ts';
import { ChainOffError, type WithdrawalChainPort } from './port.ts';

export type ChainsOptions = {
  mode: 'devnet' | 'off';
  blockMs: number;
  confirmations: Partial<Record<Network, number>>;
  publicUrl: string;
  seed: Uint8Array;
};

export type Chains = {
  /** Every call goes to its network's adapter; `networks` are the networks that are on. */
  port: WithdrawalChainPort;
  /** The devnet where it stands in for the chains (its faucet and explorer under /sandbox/devnet), else undefined. */
  devnet: DevnetChain | undefined;
  /** What runs each network: an adapter's name, or off. */
  adapters: Readonly<Record<Network, string>>;
};

export function openChains(pool: pg.Pool, options: ChainsOptions): Chains {
  const devnet = options.mode === 'devnet' ? createDevnet(pool, { blockMs: options.blockMs, confirmations: options.confirmations, publicUrl: options.publicUrl, seed: options.seed }) : undefined;
  const byNetwork: Partial<Record<Network, WithdrawalChainPort>> = {};
  if (devnet) for (const network of devnet.networks) byNetwork[network] = devnet;
  const adapters = Object.fromEntries(NETWORKS.map((network) => [network, byNetwork[network] === undefined ? 'off' : 'devnet'])) as Record<Network, string>;
  return { port: routeChains(byNetwork), devnet, adapters };
}

/** One port over several adapters; a network without one refuses every call with ChainOffError. */
export function routeChains(byNetwork: Partial<Record<Network, WithdrawalChainPort>>): WithdrawalChainPort {
  const on = NETWORKS.filter((network) => byNetwork[network] !== undefined);
  const adapter = (network: Network): WithdrawalChainPort => {
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
  };
}
