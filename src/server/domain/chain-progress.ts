/**
 * How far each network's node and our deposit scan are: the node's tip height (asked with a timeout) and the block
 * the scan cursor names (chain_cursors). `/api/ready` and `/metrics` read it through one short cache, so neither a
 * load balancer's probes nor a scrape storm reaches the nodes or the database more than once every few seconds.
 */
import type pg from 'pg';
import type { Network } from '../../lib/currencies.ts';
import { ChainUnsupportedError, parseBlockCursor, type ChainPort, type HotWalletFees } from '../adapters/chains/port.ts';

/** Each network's usual time between blocks, in seconds (TON: its masterchain). */
export const BLOCK_SECONDS: Readonly<Record<Network, number>> = { BITCOIN: 600, LITECOIN: 150, DOGECOIN: 60, ETHEREUM: 12, TRON: 3, TON: 3 };

/**
 * Blocks the scan may trail the node's tip before the network counts as behind: half an hour of the chain's blocks
 * (BLOCK_SECONDS), far more than one scan pass reads, so only a stuck or starved scanner trips it, never a busy one.
 */
export const MAX_SCAN_LAG_BLOCKS: Readonly<Record<Network, number>> = { BITCOIN: 3, LITECOIN: 12, DOGECOIN: 30, ETHEREUM: 150, TRON: 600, TON: 600 };

/**
 * How long a withdrawal may stay open before it is late: half an hour for the worker, fee bumps and a busy mempool,
 * plus three times the blocks its confirmations take.
 */
export function expectedWithdrawalSeconds(network: Network, confirmations: number): number {
  return 1800 + 3 * confirmations * BLOCK_SECONDS[network];
}

export type ChainProgress = {
  network: Network;
  /** Whether the adapter tells its height at all (a node does; the devnet, in the process, does not). */
  hasNode: boolean;
  /** The node's tip; undefined when it did not answer in time (`error` says why) or there is no node. */
  tip: number | undefined;
  error: string | undefined;
  /** The last block the deposit scan read; undefined before its first scan or when the database did not answer. */
  scanned: number | undefined;
  maxLagBlocks: number;
};

export type ChainProgressReader = { read(): Promise<readonly ChainProgress[]> };

/** Rejects with `Error(message)` when `promise` has not settled within `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** Remembers a value for `ttlMs`; callers arriving while it is being read share that one read. */
export function cachedRead<T>(read: () => Promise<T>, ttlMs: number): () => Promise<T> {
  let value: { at: number; result: T } | undefined;
  let pending: Promise<T> | undefined;
  return () => {
    if (value && Date.now() - value.at < ttlMs) return Promise.resolve(value.result);
    pending ??= read()
      .then((result) => {
        value = { at: Date.now(), result };
        return result;
      })
      .finally(() => (pending = undefined));
    return pending;
  };
}

export function createChainProgress(options: {
  pool: pg.Pool;
  chain: Pick<ChainPort, 'networks'> & Pick<HotWalletFees, 'tipHeight'>;
  timeoutMs?: number;
  cacheMs?: number;
}): ChainProgressReader {
  const { pool, chain } = options;
  const timeoutMs = options.timeoutMs ?? 2_000;
  const tipOf = async (network: Network): Promise<Pick<ChainProgress, 'hasNode' | 'tip' | 'error'>> => {
    if (!chain.tipHeight) return { hasNode: false, tip: undefined, error: undefined };
    try {
      return { hasNode: true, tip: await withTimeout(chain.tipHeight(network), timeoutMs, `no answer within ${timeoutMs} ms`), error: undefined };
    } catch (error) {
      if (error instanceof ChainUnsupportedError) return { hasNode: false, tip: undefined, error: undefined };
      return { hasNode: true, tip: undefined, error: error instanceof Error ? error.message : String(error) };
    }
  };
  const cursors = async (): Promise<Map<string, number>> => {
    const heights = new Map<string, number>();
    try {
      const rows = await withTimeout(pool.query<{ network: string; position: string }>('SELECT network, position FROM chain_cursors WHERE network = ANY($1)', [[...chain.networks]]), timeoutMs, 'the database did not answer');
      for (const row of rows.rows) {
        try {
          const block = parseBlockCursor(row.position);
          if (block) heights.set(row.network, block.height);
        } catch {
          // The devnet's cursor is a sequence number, not a block: it has no height to compare.
        }
      }
    } catch {
      // The database is down: readiness says so on its own; the tips are still worth reporting.
    }
    return heights;
  };
  const read = async (): Promise<readonly ChainProgress[]> => {
    const [tips, scanned] = await Promise.all([Promise.all(chain.networks.map(tipOf)), cursors()]);
    return chain.networks.map((network, i) => ({ network, ...(tips[i] as Awaited<ReturnType<typeof tipOf>>), scanned: scanned.get(network), maxLagBlocks: MAX_SCAN_LAG_BLOCKS[network] }));
  };
  return { read: cachedRead(read, options.cacheMs ?? 2_000) };
}
