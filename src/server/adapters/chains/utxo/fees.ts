/**
 * Fee rates in atomic units per virtual byte: the node's `estimatesmartfee`, never below what it relays
 * (`relayfee`, `mempoolminfee`), and FEE_RATE_FALLBACK when it estimates nothing (regtest, a fresh node).
 */
import { coinsToUnits, RpcError, type Rpc } from './rpc.ts';

/** Blocks within which the estimate aims to be mined. */
const TARGET_BLOCKS = 6;

/** Coins per 1000 vB as the node writes them to units per vB, rounded up. */
export function perVbyte(coinsPerKvB: string): bigint {
  const units = coinsToUnits(coinsPerKvB);
  return (units + 999n) / 1000n;
}

export type FeeRates = { rate: bigint; floor: bigint; incremental: bigint; estimated: boolean };

export async function feeRates(rpc: Rpc, fallback: bigint): Promise<FeeRates> {
  const [estimate, network, mempool] = await rpc.batch<Record<string, unknown>>([
    { method: 'estimatesmartfee', params: [TARGET_BLOCKS] },
    { method: 'getnetworkinfo' },
    { method: 'getmempoolinfo' },
  ]);
  if (network instanceof RpcError) throw network;
  const relay = perVbyte(String(network?.relayfee ?? '0'));
  const incremental = network?.incrementalfee !== undefined ? perVbyte(String(network.incrementalfee)) : relay;
  const mempoolMin = mempool instanceof RpcError || mempool?.mempoolminfee === undefined ? 0n : perVbyte(String(mempool.mempoolminfee));
  const floor = [relay, mempoolMin, 1n].reduce((a, b) => (a > b ? a : b));
  // No estimate: an `errors` list (Bitcoin Core 0.17+), or a feerate of -1 (older nodes, Dogecoin Core 1.14).
  const estimateRate = !(estimate instanceof RpcError) && typeof estimate?.feerate === 'string' && !estimate.feerate.startsWith('-') ? perVbyte(estimate.feerate) : 0n;
  const estimated = estimateRate > 0n;
  const wanted = estimated ? estimateRate : fallback;
  return { rate: wanted > floor ? wanted : floor, floor, incremental: incremental > 0n ? incremental : 1n, estimated };
}
