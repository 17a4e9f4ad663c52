/**
 * One adapter for Bitcoin, Litecoin and Dogecoin on Bitcoin Core–style nodes (README.md here): reading by walking
 * blocks into the custody's own output index, the hot wallet signing from the custody's outputs, holdings.
 */
import type pg from 'pg';
import type { WalletKeys } from '../../keys/port.ts';
import { keysOf } from '../../keys/wallet-keys.ts';
import type { Network } from '../../../../lib/currencies.ts';
import { scanBlocks } from '../block-scan.ts';
import { ChainUnsupportedError, type ChainAdapter, type ChainAddressing, type ChainEnv, type ChainTransfer } from '../port.ts';
import { bumpFee } from './bump.ts';
import { changePath, isUtxoNetwork, utxoProfile, type TestChain, type UtxoNetwork, type UtxoProfile } from './networks.ts';
import { heldByAddress, heldUnits, latestSigned } from './outputs.ts';
import { blockSource, transferStatus } from './reader.ts';
import { createRpc, RpcError, type Rpc } from './rpc.ts';
import { broadcastRaw, changeAddress, estimate, signConsolidation, signOrder, signPayments, spendableUnits, type WalletContext } from './wallet.ts';

export type UtxoOptions = {
  env: ChainEnv;
  /** The custody keys (public only outside the signer); `seed`: every key of a bare seed (tests). */
  keys?: WalletKeys | undefined;
  seed?: Uint8Array | undefined;
  addresses: ChainAddressing;
  nodes: Partial<Record<UtxoNetwork, string>>;
  confirmations: Partial<Record<Network, number>>;
  feeRateFallback: Partial<Record<UtxoNetwork, bigint>>;
  rbfAfterBlocks: number;
  /** MAX_FEE_RATE per network; unset ones keep the profile's default. */
  maxFeeRate?: Partial<Record<UtxoNetwork, bigint>>;
  /** CHAIN_ENV=testnet4 or signet: the chain Bitcoin's node runs under testnet's address formats (default `test`). */
  testChain?: TestChain;
  /** UTXO_BATCH_SECONDS (0 or absent: one transaction per withdrawal) and UTXO_BATCH_MAX_OUTPUTS. */
  batchSeconds?: number;
  batchMaxOutputs?: number;
  /** CHAIN_CALL_TIMEOUT_MS: each JSON-RPC call's timeout outside a request (default 30 s). */
  callTimeoutMs?: number | undefined;
  /** UTXO_CONSOLIDATE_BELOW per network (units per vB): withdrawals spend the hot wallet's own outputs first there. */
  consolidateBelow?: Partial<Record<UtxoNetwork, bigint>>;
};

/** Confirmations when CONFIRMATIONS does not say. */
const DEFAULT_CONFIRMATIONS: Record<UtxoNetwork, number> = { BITCOIN: 2, LITECOIN: 4, DOGECOIN: 6 };
/** Blocks read again after a reorganisation: deeper than any plausible one and than the confirmations. */
const REWIND_DEPTH = 24;
/** Blocks per scan call (each is one getblock). */
const BLOCKS_PER_SCAN = 50;

export function createUtxoAdapter(pool: pg.Pool, options: UtxoOptions): ChainAdapter {
  const networks = (Object.keys(options.nodes) as UtxoNetwork[]).filter((n) => isUtxoNetwork(n) && options.nodes[n]);
  const master = keysOf(options);
  const contexts = new Map<Network, WalletContext & { ready?: Promise<void>; mempool: Map<string, ChainTransfer[]> }>();
  for (const network of networks) {
    const url = options.nodes[network];
    if (!url) continue;
    const profile = utxoProfile(network, options.env, options.addresses.utxoParams(network), options.testChain);
    contexts.set(network, {
      pool,
      rpc: createRpc(url, options.callTimeoutMs === undefined ? {} : { timeoutMs: options.callTimeoutMs }),
      network,
      profile,
      path: (index) => options.addresses.path(network, index),
      master,
      fallbackRate: options.feeRateFallback[network] ?? profile.defaultFallbackRate,
      maxFeeRate: options.maxFeeRate?.[network] ?? profile.defaultMaxFeeRate,
      rbfAfterBlocks: options.rbfAfterBlocks,
      confirmations: options.confirmations[network] ?? DEFAULT_CONFIRMATIONS[network],
      consolidateBelow: options.consolidateBelow?.[network],
      mempool: new Map(),
    });
  }

  /** The network's context once its node has been checked (right chain, -txindex on); a failed check is tried again. */
  const ready = async (network: Network) => {
    const ctx = contexts.get(network);
    if (!ctx) throw new ChainUnsupportedError(`${network} is not on a UTXO node`);
    ctx.ready ??= checkNode(ctx.rpc, network, ctx.profile).catch((error: unknown) => {
      ctx.ready = undefined;
      throw error;
    });
    await ctx.ready;
    return ctx;
  };

  return {
    networks,
    requiredConfirmations: (network) => contexts.get(network)?.confirmations ?? 1,
    async scan(network, cursor, limit) {
      const ctx = await ready(network);
      // One scan of a network at a time: a second worker's would unwind what this one is recording.
      const client = await pool.connect();
      try {
        const locked = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtext('utxo-scan:' || $1)) AS ok`, [network]);
        if (!locked.rows[0]?.ok) return { transfers: [], cursor };
        try {
          const tip = await ctx.rpc.call<number>('getblockcount');
          return await scanBlocks(blockSource(pool, ctx.rpc, network, ctx.profile, ctx.mempool), cursor, {
            startHeight: Math.max(0, tip - REWIND_DEPTH),
            limit: Math.min(limit, BLOCKS_PER_SCAN),
            rewindDepth: REWIND_DEPTH,
          });
        } finally {
          await client.query(`SELECT pg_advisory_unlock(hashtext('utxo-scan:' || $1))`, [network]);
        }
      } finally {
        client.release();
      }
    },
    async status(network, transfers) {
      const ctx = await ready(network);
      return transferStatus(pool, ctx.rpc, network, transfers);
    },
    // The catalogue links each network's public explorer for CHAIN_ENV (none on regtest).
    explorerUrl: () => undefined,
    async hotWalletAddress(network) {
      return changeAddress(await ready(network), 0);
    },
    async signWithdrawal(order) {
      return signOrder(await ready(order.network), order);
    },
    async signedBefore(network, reference) {
      await ready(network);
      return (await latestSigned(pool, reference)) !== undefined;
    },
    batching: (network) => {
      const ctx = contexts.get(network);
      if (!ctx || (options.batchSeconds ?? 0) <= 0) return undefined;
      return { seconds: options.batchSeconds ?? 0, maxOutputs: options.batchMaxOutputs ?? 50, minOutput: ctx.profile.dust };
    },
    async signBatch(batch) {
      return signPayments(await ready(batch.network), batch.reference, batch.orders.map((o) => ({ address: o.toAddress, amount: o.amount })));
    },
    async hotWalletFunds(network) {
      return spendableUnits(await ready(network));
    },
    async consolidate(order) {
      return signConsolidation(await ready(order.network), order.reference, order.maxRate);
    },
    async broadcast(network, rawTx) {
      return broadcastRaw(await ready(network), rawTx);
    },
    async estimateFee(query) {
      return estimate(await ready(query.network), query.toAddress);
    },
    async replaceByFee(stuck, fee) {
      return bumpFee(await ready(stuck.order.network), stuck, fee);
    },
    replaceAfterBlocks: (network) => (contexts.has(network) ? options.rbfAfterBlocks : undefined),
    async tipHeight(network) {
      return (await ready(network)).rpc.call<number>('getblockcount');
    },
    async holdings(network) {
      const ctx = await ready(network);
      const tip = await ctx.rpc.call<number>('getblockcount');
      return { [ctx.profile.coin]: await heldUnits(pool, network, tip, ctx.confirmations) };
    },
    async addressHoldings(network) {
      const ctx = await ready(network);
      const tip = await ctx.rpc.call<number>('getblockcount');
      const held = await heldByAddress(pool, network, tip, ctx.confirmations);
      return held.map((h) => ({ address: h.address, path: h.keyChain === 0 ? ctx.path(h.keyIndex) : changePath(ctx.path(0), h.keyIndex), balances: { [ctx.profile.coin]: h.amount } }));
    },
    collection: {
      // The hot wallet spends deposit outputs where they are: nothing to sweep on a UTXO network.
      sweeps: () => false,
      sweep: async () => ({ state: 'NOT_NEEDED', reason: 'UTXO networks spend deposit outputs directly' }),
      topUpGas: async () => Promise.reject(new ChainUnsupportedError('UTXO networks have no gas')),
    },
  };
}

/**
 * The node must be on a chain CHAIN_ENV names (Bitcoin Core 27/28 report `testnet4` and `signet` too) and keep a
 * transaction index (status by hash of any transaction); `getblock` is asked in the node's dialect (a boolean for
 * Dogecoin Core 1.14, whose `getblock <hash> 1` is a type error).
 */
export async function checkNode(rpc: Rpc, network: Network, profile: Pick<UtxoProfile, 'nodeChains' | 'booleanGetblock'>): Promise<void> {
  const info = await rpc.call<{ chain: string; blocks: number }>('getblockchaininfo');
  if (!profile.nodeChains.includes(info.chain)) throw new Error(`the ${network} node is on chain "${info.chain}" but CHAIN_ENV wants "${profile.nodeChains.join('" or "')}"`);
  const best = await rpc.call<string>('getblockhash', info.blocks);
  const block = await rpc.call<{ tx: string[] }>('getblock', best, profile.booleanGetblock ? true : 1);
  const coinbase = block.tx[0];
  if (info.blocks === 0 || coinbase === undefined) return;
  try {
    await rpc.call('getrawtransaction', coinbase, true);
  } catch (error) {
    if (error instanceof RpcError) throw new Error(`the ${network} node needs -txindex=1 (the custody asks it for transactions by hash): ${error.message}`);
    throw error;
  }
}
