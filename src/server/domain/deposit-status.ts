/**
 * The chain's word on deposits the domain is still watching (deposits.ts confirms pending ones, deposit-reversals.ts
 * re-checks doubtful ones): each row with its transfer's status, asked once per network.
 */
import { transferKey, type ChainPort, type TransferRef, type TransferStatus } from '../adapters/chains/port.ts';
import type { Network } from '../../lib/currencies.ts';

/** Each row with its transfer's status, asked once per network; a row its chain said nothing about is left out. */
export async function* withStatuses<T extends TransferRef & { network: Network }>(chain: Pick<ChainPort, 'status'>, rows: readonly T[]): AsyncGenerator<[T, TransferStatus]> {
  for (const [network, group] of Map.groupBy(rows, (row) => row.network)) {
    const statuses = await chain.status(
      network,
      group.map((r) => ({ txHash: r.txHash, outputIndex: r.outputIndex })),
    );
    for (const row of group) {
      const status = statuses.get(transferKey(row));
      if (status) yield [row, status];
    }
  }
}
