/**
 * The chain adapters' registry and router. Each network is either on one adapter or off. `CHAIN_ADAPTERS` lists
 * the adapters in order of preference: each network goes to the first entry that offers it with these options, so
 * a real node configured for a network (`utxo-node`, `ethereum-rpc`, `tron`, `toncenter`) wins over the devnet (all
 * networks at once, never in production). The port the custody gets routes each call to its network's adapter, lists
 * only the networks that are on, and turns a node that does not answer into `ChainUnavailableError`.
 */
import type pg from 'pg';
import { NETWORKS, type Network } from '../../../lib/currencies.ts';
import type { WalletKeys } from '../keys/port.ts';
import { createDevnet, isDevnet, type DevnetChain } from './devnet.ts';
import { createTronAdapter } from './tron/adapter.ts';
import { createTonAdapter } from './ton/adapter.ts';
import { createEvmAdapter } from './evm/adapter.ts';
import { createUtxoAdapter } from './utxo/adapter.ts';
import { UTXO_NETWORKS } from './utxo/networks.ts';
import { RpcUnavailableError } from './utxo/rpc.ts';
import { TonApiError } from './ton/api.ts';
import { TronApiError } from './tron/api.ts';
import { budgetLeftMs, budgetMs } from '../../net/call-budget.ts';
import { ChainOffError, ChainUnavailableError, ChainUnsupportedError, type ChainAdapter, type ChainAddressing, type ChainCallTrace, type ChainSettings, type SweepSource } from './port.ts';

/** What the chain adapters need: the chains' settings (config-chains.ts), the custody's seed and address rules. */
export type ChainsOptions = ChainSettings & {
  publicUrl: string;
  /** The custody keys: every key in the signer, public ones in the gateway and the worker. `seed`: a bare seed's (tests). */
  keys?: WalletKeys | undefined;
  seed?: Uint8Array | undefined;
  /** The custody's address rules (derivation paths, formats), owned by the domain. */
  addresses: ChainAddressing;
  /** A span around every call the router makes (tracing on), else the calls go straight through. */
  trace?: ChainCallTrace | undefined;
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
        callTimeoutMs: options.callTimeoutMs,
        keys: options.keys,
        seed: options.seed,
        addresses: options.addresses,
      }),
  },
  {
    // Bitcoin, Litecoin and Dogecoin on Bitcoin Core–style nodes: the networks whose *_RPC_URL is set.
    name: 'utxo-node',
    networks: (options) => UTXO_NETWORKS.filter((network) => options.utxo.nodes[network] !== undefined),
    open: (pool, options) =>
      createUtxoAdapter(pool, { env: options.env, keys: options.keys, seed: options.seed, addresses: options.addresses, confirmations: options.confirmations, callTimeoutMs: options.callTimeoutMs, ...options.utxo }),
  },
  {
    name: 'tron',
    networks: (options) => (options.tron.apiUrl ? ['TRON'] : []),
    open: (pool, options) =>
      createTronAdapter(pool, { ...options.tron, apiUrl: options.tron.apiUrl ?? '', callTimeoutMs: options.callTimeoutMs, confirmations: options.confirmations.TRON, env: options.env, keys: options.keys, seed: options.seed, addresses: options.addresses }),
  },
  {
    name: 'toncenter',
    networks: (options) => (options.ton.apiUrl ? ['TON'] : []),
    open: (pool, options) =>
      createTonAdapter(pool, { apiUrl: options.ton.apiUrl ?? '', apiKey: options.ton.apiKey, callTimeoutMs: options.callTimeoutMs, env: options.env, keys: options.keys, seed: options.seed, addresses: options.addresses, confirmations: options.confirmations.TON }),
  },
  {
    name: 'devnet',
    networks: (options) => (options.mode === 'devnet' ? NETWORKS : []),
    open: (pool, options) => createDevnet(pool, { blockMs: options.blockMs, confirmations: options.confirmations, publicUrl: options.publicUrl, keys: options.keys, seed: options.seed, addresses: options.addresses }),
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
  return { port: routeChains(byNetwork, options.trace), devnet, adapters: names };
}

/**
 * Whether a failure is the node's or the API's not answering (refused, timed out, HTTP 5xx or 429, not its protocol)
 * rather than an answer: the error itself or anything in its cause chain (viem wraps its transport errors).
 */
export function isUnanswered(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++, current = current.cause) {
    if (current instanceof ChainUnavailableError || current instanceof RpcUnavailableError || current instanceof TronApiError) return true;
    if (current instanceof TonApiError) return current.status >= 500 || current.status === 429;
    // fetch's own timeout and abort (DOMException), its connection failure, viem's transport errors.
    if (['TimeoutError', 'AbortError', 'HttpRequestError', 'WebSocketRequestError', 'SocketClosedError'].includes(current.name)) return true;
    if (current instanceof TypeError && current.message === 'fetch failed') return true;
  }
  return false;
}

/**
 * One call to a network's adapter: a node that does not answer becomes ChainUnavailableError naming the network,
 * and inside a request (net/call-budget.ts) the call gives up when the request's budget is spent, whatever the
 * adapter's own timeout.
 */
async function guarded<T>(network: Network, call: () => Promise<T>): Promise<T> {
  const left = budgetLeftMs();
  let timer: NodeJS.Timeout | undefined;
  try {
    if (left === undefined) return await call();
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ChainUnavailableError(network, `the node did not answer within ${budgetMs() ?? left} ms`)), left);
    });
    return await Promise.race([call(), expired]);
  } catch (error) {
    if (error instanceof ChainUnavailableError || !isUnanswered(error)) throw error;
    throw new ChainUnavailableError(network, error instanceof Error ? error.message : String(error), { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/** One port over several adapters; a network without one refuses every call with ChainOffError. */
export function routeChains(byNetwork: Partial<Record<Network, ChainAdapter>>, trace?: ChainCallTrace): ChainAdapter {
  const call = <T>(network: Network, operation: string, run: () => Promise<T>): Promise<T> => (trace ? trace(network, operation, () => guarded(network, run)) : guarded(network, run));
  const on = NETWORKS.filter((network) => byNetwork[network] !== undefined);
  const adapter = (network: Network): ChainAdapter => {
    const found = byNetwork[network];
    if (!found) throw new ChainOffError(`${network} is off: no chain adapter is configured for it`);
    return found;
  };
  return {
    networks: on,
    requiredConfirmations: (network) => adapter(network).requiredConfirmations(network),
    scan: (network, cursor, limit) => call(network, 'scan', () => adapter(network).scan(network, cursor, limit)),
    status: (network, transfers) => call(network, 'status', () => adapter(network).status(network, transfers)),
    explorerUrl: (network) => byNetwork[network]?.explorerUrl(network),
    hotWalletAddress: (network) => call(network, 'hotWalletAddress', () => adapter(network).hotWalletAddress(network)),
    signWithdrawal: (order) => call(order.network, 'signWithdrawal', () => adapter(order.network).signWithdrawal(order)),
    broadcast: (network, rawTx) => call(network, 'broadcast', () => adapter(network).broadcast(network, rawTx)),
    accountState: (network, address) => call(network, 'accountState', async () => (await adapter(network).accountState?.(network, address)) ?? 'UNKNOWN'),
    estimateFee: (query) => call(query.network, 'estimateFee', () => adapter(query.network).estimateFee(query)),
    replaceByFee: (stuck, fee) => call(stuck.order.network, 'replaceByFee', () => adapter(stuck.order.network).replaceByFee(stuck, fee)),
    batching: (network) => byNetwork[network]?.batching?.(network),
    signBatch: (batch) =>
      call(batch.network, 'signBatch', async () => {
        const found = adapter(batch.network);
        if (!found.signBatch) throw new ChainUnsupportedError(`${batch.network}'s adapter does not pay withdrawals in batches`);
        return found.signBatch(batch);
      }),
    hotWalletFunds: (network, currency) =>
      call(network, 'hotWalletFunds', async () => {
        const found = adapter(network);
        if (!found.hotWalletFunds) throw new ChainUnsupportedError(`${network}'s adapter does not tell what its hot wallet can pay`);
        return found.hotWalletFunds(network, currency);
      }),
    consolidate: (order) => call(order.network, 'consolidate', async () => (await adapter(order.network).consolidate?.(order)) ?? undefined),
    signedBefore: (network, reference) => call(network, 'signedBefore', async () => (await adapter(network).signedBefore?.(network, reference)) ?? false),
    replaceAfterBlocks: (network) => byNetwork[network]?.replaceAfterBlocks?.(network),
    tipHeight: (network) =>
      call(network, 'tipHeight', async () => {
        const found = adapter(network);
        if (!found.tipHeight) throw new ChainUnsupportedError(`${network}'s adapter does not tell its height`);
        return found.tipHeight(network);
      }),
    holdings: (network) => call(network, 'holdings', () => adapter(network).holdings(network)),
    addressHoldings: (network) =>
      call(network, 'addressHoldings', async () => {
        const found = adapter(network);
        if (!found.addressHoldings) throw new ChainUnsupportedError(`${network}'s adapter does not list its holdings by address`);
        return found.addressHoldings(network);
      }),
    collection: {
      // An off network sweeps nothing: there is nobody to ask.
      sweeps: (network) => byNetwork[network]?.collection.sweeps(network) ?? false,
      sweep: (source: SweepSource) => call(source.network, 'collection.sweep', () => adapter(source.network).collection.sweep(source)),
      topUpGas: (target) => call(target.network, 'collection.topUpGas', () => adapter(target.network).collection.topUpGas(target)),
    },
  };
}
