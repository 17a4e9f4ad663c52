import { describe, expect, it } from 'vitest';
import { scanBlocks, type BlockSource } from '../../../../src/server/adapters/chains/block-scan.ts';
import { blockCursor, parseBlockCursor, type ChainTransfer } from '../../../../src/server/adapters/chains/port.ts';
import { unitsOf } from '../../../../src/lib/money.ts';

/** A chain as a list of block hashes from height 0; each block pays 1 unit to 'addr' in a transaction named after it. */
function chainOf(hashes: string[], mempool: ChainTransfer[] = []): BlockSource {
  const transfer = (height: number, hash: string): ChainTransfer => ({
    network: 'BITCOIN',
    txHash: `tx-${hash}`,
    outputIndex: 0,
    currency: 'BTC',
    fromAddress: null,
    toAddress: 'addr',
    amount: unitsOf(1n),
    blockHeight: height,
  });
  return {
    tipHeight: async () => hashes.length - 1,
    hashAt: async (height) => hashes[height],
    blockAt: async (height) => {
      const hash = hashes[height];
      if (hash === undefined) throw new Error(`no block ${height}`);
      return { block: { height, hash }, transfers: [transfer(height, hash)] };
    },
    mempool: async () => mempool,
  };
}

const options = { startHeight: 0, limit: 2, rewindDepth: 3 };

describe('the block cursor', () => {
  it('carries height and hash', () => {
    expect(parseBlockCursor(blockCursor({ height: 812_345, hash: '00ab' }))).toEqual({ height: 812_345, hash: '00ab' });
    expect(parseBlockCursor(null)).toBeNull();
    expect(() => parseBlockCursor('812345')).toThrow();
  });
});

describe('scanBlocks', () => {
  it('reads a limited number of blocks after the cursor, then the mempool once caught up', async () => {
    const pending: ChainTransfer = { network: 'BITCOIN', txHash: 'tx-pending', outputIndex: 0, currency: 'BTC', fromAddress: null, toAddress: 'addr', amount: unitsOf(1n), blockHeight: null };
    const chain = chainOf(['a', 'b', 'c'], [pending]);
    const first = await scanBlocks(chain, null, options);
    expect(first.transfers.map((t) => t.txHash)).toEqual(['tx-a', 'tx-b']);
    expect(first.cursor).toBe('1:b');
    expect(first.reorg).toBeUndefined();
    const second = await scanBlocks(chain, first.cursor, options);
    expect(second.transfers.map((t) => t.txHash)).toEqual(['tx-c', 'tx-pending']);
    expect(second.cursor).toBe('2:c');
    const idle = await scanBlocks(chain, second.cursor, options);
    expect(idle.transfers.map((t) => t.txHash)).toEqual(['tx-pending']);
    expect(idle.cursor).toBe('2:c');
  });

  it('notices that the cursor’s block left the chain, says so and reads again from below it', async () => {
    const before = chainOf(['a', 'b', 'c', 'd', 'e']);
    let cursor: string | null = null;
    for (let i = 0; i < 3; i++) cursor = (await scanBlocks(before, cursor, options)).cursor;
    expect(cursor).toBe('4:e');
    // Blocks 3 and 4 are replaced by d2, e2, f2.
    const after = chainOf(['a', 'b', 'c', 'd2', 'e2', 'f2']);
    const batch = await scanBlocks(after, cursor, options);
    expect(batch.reorg).toEqual({ orphaned: { height: 4, hash: 'e' }, rescanFrom: 2 });
    expect(batch.transfers.map((t) => t.txHash)).toEqual(['tx-c', 'tx-d2']);
    expect(batch.cursor).toBe('3:d2');
    const rest = await scanBlocks(after, batch.cursor, options);
    expect(rest.reorg).toBeUndefined();
    expect(rest.transfers.map((t) => t.txHash)).toEqual(['tx-e2', 'tx-f2']);
  });

  it('counts the rewind from the tip of a node that lost blocks below the cursor, says how many, and moves the cursor there', async () => {
    // The scan read up to 9:j; the node comes back with blocks 0 to 4 only (five lost).
    const shorter = chainOf(['a', 'b', 'c', 'd', 'e']);
    const batch = await scanBlocks(shorter, blockCursor({ height: 9, hash: 'j' }), { ...options, limit: 10 });
    expect(batch.reorg).toEqual({ orphaned: { height: 9, hash: 'j' }, rescanFrom: 2, lostBlocks: 5 });
    expect(batch.transfers.map((t) => t.txHash)).toEqual(['tx-c', 'tx-d', 'tx-e']);
    expect(batch.cursor).toBe('4:e');
    // Once the cursor is on the node's chain again, the next scan is an ordinary one.
    expect((await scanBlocks(shorter, batch.cursor, options)).reorg).toBeUndefined();
  });

  it('rewinds no further than its start', async () => {
    const batch = await scanBlocks(chainOf(['x', 'y']), blockCursor({ height: 1, hash: 'old' }), { ...options, rewindDepth: 10 });
    expect(batch.reorg).toEqual({ orphaned: { height: 1, hash: 'old' }, rescanFrom: 0 });
    expect(batch.transfers.map((t) => t.txHash)).toEqual(['tx-x', 'tx-y']);
  });
});
