/**
 * Fee rates in atomic units per virtual byte: the node's `estimatesmartfee`, never below what it relays
 * (`relayfee`, `mempoolminfee`), FEE_RATE_FALLBACK when it estimates nothing (regtest, a fresh node, Dogecoin Core
 * before 1.14.7), and never above MAX_FEE_RATE.
 */
import { coinsToUnits, RpcError, type Rpc } from './rpc.ts';

/** Blocks within which the estimate aims to be mined. */
const TARGET_BLOCKS = 6;

/** Coins per 1000 vB as the node writes them to units per vB, rounded up. */
export function perVbyte(coinsPerKvB: string): bigint {
  const units = coinsToUnits(coinsPerKvB);
  return (units + 999n) / 1000n;
}

export type FeeRates = {
  /** What a new transaction pays: the estimate (or fallback) over the floor, at most `ceiling`. */
  rate: bigint;
  /** The estimate (or fallback) over the floor, before the ceiling. */
  wanted: bigint;
  floor: bigint;
  incremental: bigint;
  estimated: boolean;
  ceiling: bigint;
};

export type FeePolicy = {
  fallback: bigint;
  /** MAX_FEE_RATE. */
  ceiling: bigint;
  /** `getnetworkinfo().version` below which the node's estimates are ignored (UtxoProfile.estimatesFromVersion). */
  estimatesFromVersion?: number;
};

const max = (...values: bigint[]) => values.reduce((a, b) => (a > b ? a : b));

export async function feeRates(rpc: Rpc, policy: FeePolicy): Promise<FeeRates> {
  const [estimate, network, mempool] = await rpc.batch<Record<string, unknown>>([
    { method: 'estimatesmartfee', params: [TARGET_BLOCKS] },
    { method: 'getnetworkinfo' },
    { method: 'getmempoolinfo' },
  ]);
  if (network instanceof RpcError) throw network;
  const relay = perVbyte(String(network?.relayfee ?? '0'));
  const incremental = network?.incrementalfee !== undefined ? perVbyte(String(network.incrementalfee)) : relay;
  const mempoolMin = mempool instanceof RpcError || mempool?.mempoolminfee === undefined ? 0n : perVbyte(String(mempool.mempoolminfee));
  const floor = max(relay, mempoolMin, 1n);
  const trusted = typeof network?.version !== 'number' || network.version >= (policy.estimatesFromVersion ?? 0);
  // No estimate: an `errors` list (Bitcoin Core 0.17+), or a feerate of -1 (older nodes, Dogecoin Core 1.14).
  const estimateRate = trusted && !(estimate instanceof RpcError) && typeof estimate?.feerate === 'string' && !estimate.feerate.startsWith('-') ? perVbyte(estimate.feerate) : 0n;
  const estimated = estimateRate > 0n;
  const wanted = max(estimated ? estimateRate : policy.fallback, floor);
  return { rate: wanted > policy.ceiling ? policy.ceiling : wanted, wanted, floor, incremental: incremental > 0n ? incremental : 1n, estimated, ceiling: policy.ceiling };
}
