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

/** One outgoing transfer of the custody, to be built and signed by the chain's adapter. */
export type WithdrawalOrder = {
  /** The withdrawal's id: the same order always yields the same signed transaction. */
  reference: string;
  network: Network;
  currency: string;
  toAddress: string;
  /** Atomic units the recipient receives. */
  amount: bigint;
};

/** A transaction signed by the custody's hot wallet, ready to broadcast; its hash is known before it is sent. */
export type SignedWithdrawal = { rawTx: string; txHash: string; fromAddress: string };

/** The network refused a transaction for good (bad signature, spent inputs, a devnet told to refuse it). */
export class BroadcastRejectedError extends Error {}

/**
 * What withdrawals need from a chain besides reading it. `broadcast` is idempotent: the same raw transaction sent
 * again has the same hash and changes nothing, so a worker that is unsure whether it was sent may send it again;
 * the withdrawal job still asks `status` by hash first and only sends what the chain does not know.
 */
export type WithdrawalChainPort = ChainPort & {
  hotWalletAddress(network: Network): Promise<string>;
  signWithdrawal(order: WithdrawalOrder): Promise<SignedWithdrawal>;
  broadcast(network: Network, rawTx: string): Promise<{ txHash: string }>;
};

export function transferKey(ref: TransferRef): string {
  return `${ref.txHash}:${ref.outputIndex}`;
}

/** A call for a network that has no adapter in this environment (it is off): nothing was done. */
export class ChainOffError extends Error {}
