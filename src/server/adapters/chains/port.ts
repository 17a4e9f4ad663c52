/**
 * The port to blockchains: what the deposit scanner and (later) the withdrawal broadcaster need from a chain.
 * `devnet.ts` implements it inside the process; a real network's adapter implements the same shape.
 */
import type { Network } from '../../../lib/currencies.ts';

/** A transfer of one currency to one address, as one output of one transaction. */
export type ChainTransfer = {
  network: Network;
  txHash: string;
  outputIndex: number;
  currency: string;
  fromAddress: string | null;
  toAddress: string;
  /** Atomic units of `currency`. */
  amount: bigint;
  /** The block it is in; null while it waits in the mempool. */
  blockHeight: number | null;
};

export type TransferRef = { txHash: string; outputIndex: number };

/** Where a transfer stands now: confirmations (0 in the mempool), or dropped from the chain. */
export type TransferStatus = { state: 'SEEN'; blockHeight: number | null; confirmations: number } | { state: 'DROPPED' };

export type ChainPort = {
  readonly networks: readonly Network[];
  /** Confirmations after which a deposit on `network` is credited. */
  requiredConfirmations(network: Network): number;
  /**
   * Transfers seen after `cursor` (null: from the start), mempool ones included. Transfers near the head may be
   * returned again by the next scan: the scanner records each one once, by (network, hash, output).
   */
  scan(network: Network, cursor: string | null, limit: number): Promise<{ transfers: ChainTransfer[]; cursor: string | null }>;
  status(network: Network, transfers: readonly TransferRef[]): Promise<Map<string, TransferStatus>>;
  /** The explorer link of a transaction (`{tx}` placeholder), when this chain has its own explorer. */
  explorerUrl(network: Network): string | undefined;
};

export function transferKey(ref: TransferRef): string {
  return `${ref.txHash}:${ref.outputIndex}`;
}
