import { describe, expect, it } from 'vitest';
import type pg from 'pg';
import { ChainUnsupportedError } from '../../../../src/server/adapters/chains/port.ts';
import type { PriceTable } from '../../../../src/server/adapters/rates/port.ts';
import { createChainProgress, MAX_SCAN_LAG_BLOCKS, type ChainProgress } from '../../../../src/server/domain/chain-progress.ts';
import { createReadiness, readyReasons } from '../../../../src/server/domain/readiness.ts';

const ltc = (over: Partial<ChainProgress> = {}): ChainProgress => ({ network: 'LITECOIN', hasNode: true, tip: 500, error: undefined, scanned: 500, maxLagBlocks: 12, ...over });
const up = { draining: false, database: 'up' as const };

describe('the reasons a gateway is not ready', () => {
  it('is ready with the database up, every node answering and the scan near the tip', () => {
    expect(readyReasons({ ...up, chains: [ltc(), ltc({ network: 'ETHEREUM', scanned: 400, tip: 550, maxLagBlocks: 150 })] })).toEqual([]);
  });

  it('names the database, a node that does not answer and a scan too far behind, each once', () => {
    expect(
      readyReasons({
        draining: false,
        database: 'down',
        chains: [ltc({ tip: undefined, error: 'connect ECONNREFUSED 127.0.0.1:19443' }), ltc({ network: 'BITCOIN', tip: 900, scanned: 896, maxLagBlocks: 3 })],
      }),
    ).toEqual([
      'the database is unreachable',
      'LITECOIN: the node is unreachable (connect ECONNREFUSED 127.0.0.1:19443)',
      "BITCOIN: the deposit scan is 4 blocks behind the node's tip 900 (at most 3)",
    ]);
  });

  it('allows exactly the network limit, and no scan yet or no node (the devnet) is no reason', () => {
    expect(readyReasons({ ...up, chains: [ltc({ tip: 512, scanned: 500 })] })).toEqual([]);
    expect(readyReasons({ ...up, chains: [ltc({ tip: 513, scanned: 500 })] })).toHaveLength(1);
    expect(readyReasons({ ...up, chains: [ltc({ scanned: undefined })] })).toEqual([]);
    expect(readyReasons({ ...up, chains: [ltc({ hasNode: false, tip: undefined, scanned: undefined })] })).toEqual([]);
  });

  it('wants a current price for every offered asset when prices are real, and says when none could be read', () => {
    expect(readyReasons({ ...up, chains: [], prices: { required: ['BTC', 'ETH', 'USDT'], current: new Set(['ETH']) } })).toEqual(['no current price for BTC', 'no current price for USDT']);
    expect(readyReasons({ ...up, chains: [], prices: { required: ['BTC'], current: new Set(['BTC']) } })).toEqual([]);
    expect(readyReasons({ ...up, chains: [], prices: { error: 'relation "market_prices" does not exist' } })).toEqual(['prices could not be read (relation "market_prices" does not exist)']);
  });

  it('is not ready from the start of a shutdown', () => {
    expect(readyReasons({ ...up, draining: true, chains: [] })).toEqual(['shutting down']);
  });

  it('has a lag limit of about half an hour of blocks for every network', () => {
    expect(MAX_SCAN_LAG_BLOCKS).toEqual({ BITCOIN: 3, LITECOIN: 12, DOGECOIN: 30, ETHEREUM: 150, TRON: 600, TON: 600 });
  });
});

/** A pool answering the cursor query with `cursors`, or failing every query with `fail`. */
function fakePool(cursors: Record<string, string>, fail?: Error) {
  let queries = 0;
  const pool = {
    query: async (text: string) => {
      queries++;
      if (fail) throw fail;
      if (text.startsWith('SELECT 1')) return { rows: [{}] };
      return { rows: Object.entries(cursors).map(([network, position]) => ({ network, position })) };
    },
  } as unknown as pg.Pool;
  return { pool, queries: () => queries };
}

const table = (usd: Record<string, bigint>): PriceTable => ({ usd, fiatPerUsd: {}, at: new Date(), basis: {}, lastKnown: { usd: {}, fiatPerUsd: {} } });

describe('reading the nodes and the scan cursors', () => {
  it('asks each node with a timeout, reads block cursors, skips the devnet and caches the answer', async () => {
    let asked = 0;
    const chain = {
      networks: ['LITECOIN', 'ETHEREUM', 'BITCOIN'] as const,
      tipHeight: async (network: string) => {
        asked++;
        if (network === 'BITCOIN') throw new ChainUnsupportedError('the devnet');
        if (network === 'ETHEREUM') return new Promise<number>(() => {});
        return 120;
      },
    };
    const { pool, queries } = fakePool({ LITECOIN: '118:abc', BITCOIN: '42' });
    const progress = createChainProgress({ pool, chain, timeoutMs: 50, cacheMs: 60_000 });
    const read = await progress.read();
    expect(read).toEqual([
      { network: 'LITECOIN', hasNode: true, tip: 120, error: undefined, scanned: 118, maxLagBlocks: 12 },
      { network: 'ETHEREUM', hasNode: true, tip: undefined, error: 'no answer within 50 ms', scanned: undefined, maxLagBlocks: 150 },
      { network: 'BITCOIN', hasNode: false, tip: undefined, error: undefined, scanned: undefined, maxLagBlocks: 3 },
    ]);
    await Promise.all([progress.read(), progress.read()]);
    expect(asked).toBe(3);
    expect(queries()).toBe(1);
  });

  it('readiness: the database down, prices missing where they come from exchanges, and the drain', async () => {
    const { pool } = fakePool({}, new Error('ECONNREFUSED'));
    const progress = { read: async () => [ltc({ tip: undefined, error: 'ECONNREFUSED' })] };
    const readiness = createReadiness({ pool, progress, prices: { rates: { prices: async () => table({ ETH: 1n }) }, assets: () => ['BTC', 'ETH'] } });
    expect(await readiness.check()).toEqual(['the database is unreachable', 'LITECOIN: the node is unreachable (ECONNREFUSED)', 'no current price for BTC']);
    readiness.drain();
    expect(await readiness.check()).toEqual(['shutting down']);
  });

  it('readiness on the development walk does not ask for prices', async () => {
    const { pool } = fakePool({});
    const readiness = createReadiness({ pool, progress: { read: async () => [ltc()] } });
    expect(await readiness.check()).toEqual([]);
  });
});
