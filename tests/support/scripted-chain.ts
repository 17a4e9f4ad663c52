/**
 * A chain the test scripts, for driving the deposit rules (domain/deposits.ts, deposit-reversals.ts) through the
 * reading port: what the next scans answer (transfers, a reorganisation) and where each transfer stands (mined at a
 * height, back in the mempool, gone). It stands for no node: the real adapters are tested against theirs; this
 * drives the chain-independent rules every adapter relies on, against the real database.
 */
import type { ChainPort, ChainReorg, ChainTransfer, ScanBatch, TransferRef, TransferStatus } from '../../src/server/adapters/chains/port.ts';
import { transferKey } from '../../src/server/adapters/chains/port.ts';
import type { Network } from '../../src/lib/currencies.ts';

export type ScriptedChain = {
  port: ChainPort;
  /** The next scan answers these transfers (and the reorganisation, when given); later scans answer nothing new. */
  next: (transfers: readonly ChainTransfer[], reorg?: ChainReorg) => void;
  /** Every scan answers these transfers (two scanners reading the same head). */
  always: (transfers: readonly ChainTransfer[]) => void;
  mine: (ref: TransferRef, height: number) => void;
  toMempool: (ref: TransferRef) => void;
  drop: (ref: TransferRef) => void;
  setTip: (height: number) => void;
};

export function scriptedChain(network: Network, requiredConfirmations: number): ScriptedChain {
  let tip = 0;
  let sequence = 0;
  let sticky: readonly ChainTransfer[] = [];
  const batches: ScanBatch[] = [];
  const where = new Map<string, number | null>();
  const status = (ref: TransferRef): TransferStatus => {
    const key = transferKey(ref);
    if (!where.has(key)) return { state: 'DROPPED' };
    const height = where.get(key) ?? null;
    return height === null ? { state: 'SEEN', blockHeight: null, confirmations: 0 } : { state: 'SEEN', blockHeight: height, confirmations: Math.max(0, tip - height + 1) };
  };
  const port: ChainPort = {
    networks: [network],
    requiredConfirmations: () => requiredConfirmations,
    scan: async (_network, cursor) => batches.shift() ?? { transfers: [...sticky], cursor: cursor ?? `scripted:${sequence}` },
    status: async (_network, refs) => new Map(refs.map((ref) => [transferKey(ref), status(ref)])),
    explorerUrl: () => undefined,
  };
  return {
    port,
    next: (transfers, reorg) => void batches.push({ transfers: [...transfers], cursor: `scripted:${++sequence}`, reorg }),
    always: (transfers) => void (sticky = transfers),
    mine: (ref, height) => void where.set(transferKey(ref), height),
    toMempool: (ref) => void where.set(transferKey(ref), null),
    drop: (ref) => void where.delete(transferKey(ref)),
    setTip: (height) => void (tip = height),
  };
}
