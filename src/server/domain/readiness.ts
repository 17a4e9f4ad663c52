/**
 * Readiness (`GET /api/ready`, README "Operating"): whether this gateway should get traffic now. Not ready while the
 * database does not answer, an enabled network's node does not answer or our deposit scan trails its tip by more
 * than the network's MAX_SCAN_LAG_BLOCKS, when prices come from real exchanges and an offered asset has no current
 * price, and from the moment a shutdown begins. Liveness stays `/api/health`.
 */
import type pg from 'pg';
import type { RatesPort } from '../adapters/rates/port.ts';
import type { Catalogue } from './catalogue.ts';
import { withTimeout, type ChainProgress, type ChainProgressReader } from './chain-progress.ts';

/** The base assets (BTC, USDT) of the coins on offer: each must have a current price for quotes to work. */
export function pricedAssets(catalogue: Catalogue): string[] {
  return [...new Set(catalogue.coins.filter((coin) => coin.active).map((coin) => coin.baseCurrency))];
}

/** What the prices look like to readiness: the assets that must have one and those that do, or why none could be read. */
export type PriceCheck = { required: readonly string[]; current: ReadonlySet<string> } | { error: string };

export type ReadyInput = {
  draining: boolean;
  database: 'up' | 'down';
  chains: readonly ChainProgress[];
  /** Absent where prices do not gate readiness (the development walk, or prices off). */
  prices?: PriceCheck | undefined;
};

/** Why the gateway is not ready, one line each; empty when it is. */
export function readyReasons(input: ReadyInput): string[] {
  const reasons: string[] = [];
  if (input.draining) reasons.push('shutting down');
  if (input.database === 'down') reasons.push('the database is unreachable');
  for (const chain of input.chains) {
    if (!chain.hasNode) continue;
    if (chain.tip === undefined) {
      reasons.push(`${chain.network}: the node is unreachable (${chain.error ?? 'no answer'})`);
      continue;
    }
    const lag = chain.scanned === undefined ? 0 : chain.tip - chain.scanned;
    if (lag > chain.maxLagBlocks) reasons.push(`${chain.network}: the deposit scan is ${lag} blocks behind the node's tip ${chain.tip} (at most ${chain.maxLagBlocks})`);
  }
  if (input.prices && 'error' in input.prices) reasons.push(`prices could not be read (${input.prices.error})`);
  else if (input.prices) {
    const current = input.prices.current;
    for (const asset of input.prices.required) if (!current.has(asset)) reasons.push(`no current price for ${asset}`);
  }
  return reasons;
}

export type Readiness = {
  /** The reasons it is not ready now; empty when it is. */
  check(): Promise<string[]>;
  /** From now on not ready: the shutdown has begun. */
  drain(): void;
};

const CHECK_TIMEOUT_MS = 2_000;

export function createReadiness(options: {
  pool: pg.Pool;
  progress: ChainProgressReader;
  /** Given where prices come from real exchanges: the rates and the base assets the catalogue offers. */
  prices?: { rates: RatesPort; assets: () => readonly string[] } | undefined;
}): Readiness {
  let draining = false;
  const database = async (): Promise<'up' | 'down'> => {
    try {
      await withTimeout(options.pool.query('SELECT 1'), CHECK_TIMEOUT_MS, 'the database did not answer');
      return 'up';
    } catch {
      return 'down';
    }
  };
  const prices = async (): Promise<PriceCheck | undefined> => {
    if (!options.prices) return undefined;
    try {
      const table = await withTimeout(options.prices.rates.prices(), CHECK_TIMEOUT_MS, 'no answer in time');
      return { required: options.prices.assets(), current: new Set(Object.keys(table.usd)) };
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  };
  return {
    async check() {
      // Going away: nothing else matters, and the database and nodes are not asked any more.
      if (draining) return readyReasons({ draining, database: 'up', chains: [] });
      const [db, chains, priced] = await Promise.all([database(), options.progress.read(), prices()]);
      return readyReasons({ draining, database: db, chains, prices: priced });
    },
    drain() {
      draining = true;
    },
  };
}
