/**
 * The cursor protocol of `ChainPort.scan` for block-based adapters (UTXO, EVM, TRON, TON): read blocks after the
 * cursor's block, but first check that block is still on the best chain; if it is not, rewind and say so
 * (`ChainReorg`). An adapter supplies a `BlockSource` over its node and calls `scanBlocks`.
 */
import { blockCursor, parseBlockCursor, type BlockRef, type ChainReorg, type ChainTransfer, type ScanBatch } from './port.ts';

/** What `scanBlocks` needs of a node; heights are on its current best chain. */
export type BlockSource = {
  /** The height of the best chain's tip. */
  tipHeight(): Promise<number>;
  /** The hash of the block at `height`, undefined above the tip. */
  hashAt(height: number): Promise<string | undefined>;
  /** The block at `height` and its transfers to the custody's addresses (`blockHeight` set). */
  blockAt(height: number): Promise<{ block: BlockRef; transfers: ChainTransfer[] }>;
  /** Unconfirmed transfers to the custody's addresses (`blockHeight` null); they come again until mined. */
  mempool?(): Promise<ChainTransfer[]>;
};

export type BlockScanOptions = {
  /** Where a scan without a cursor starts (the custody's first block on this network). */
  startHeight: number;
  /** At most this many blocks per call. */
  limit: number;
  /**
   * How far to rewind when the cursor's block left the chain: the cursor keeps one hash, so the fork point is not
   * known; rewinding deeper than any plausible reorganisation (and than the required confirmations) reads every
   * replaced block again. Re-reading is harmless: the scanner records each output once.
   */
  rewindDepth: number;
};

export async function scanBlocks(source: BlockSource, cursor: string | null, options: BlockScanOptions): Promise<ScanBatch> {
  const last = parseBlockCursor(cursor);
  let next = last ? last.height + 1 : options.startHeight;
  let reorg: ChainReorg | undefined;
  const tip = await source.tipHeight();
  if (last && (await source.hashAt(last.height)) !== last.hash) {
    // A node that lost blocks (its tip below the cursor) forked at or below its tip: rewind from there.
    next = Math.max(options.startHeight, Math.min(last.height, tip) - options.rewindDepth + 1);
    reorg = { orphaned: last, rescanFrom: next, ...(tip < last.height ? { lostBlocks: last.height - tip } : {}) };
  }
  const transfers: ChainTransfer[] = [];
  let read: BlockRef | null = reorg ? null : last;
  for (let height = next; height <= tip && height < next + options.limit; height++) {
    const { block, transfers: found } = await source.blockAt(height);
    transfers.push(...found);
    read = block;
  }
  // Mempool transfers only once the scan has caught up with the tip: they are the newest.
  if ((read?.height ?? next - 1) >= tip && source.mempool) transfers.push(...(await source.mempool()));
  // After a reorganisation with nothing read yet, stay just below the rewind point so the next scan starts there.
  if (!read && reorg && next > options.startHeight) {
    const hash = await source.hashAt(next - 1);
    if (hash !== undefined) read = { height: next - 1, hash };
  }
  return { transfers, cursor: read ? blockCursor(read) : null, reorg };
}
