import { describe, expect, it } from 'vitest';
import type pg from 'pg';
import { transferStatus } from '../../../../../../src/server/adapters/chains/utxo/reader.ts';
import { RpcError, type Rpc, type RpcCall } from '../../../../../../src/server/adapters/chains/utxo/rpc.ts';

/**
 * `status` against a node that came back with a shorter chain while its transaction index still names the lost
 * block: `getblockheader` answers "Block not found" (-5). That is a transaction off the best chain (in the mempool,
 * or gone), never an error that fails the deposit job on every pass.
 */
describe('the UTXO status of a transaction whose block the node no longer has', () => {
  const noOwnTransactions = { query: async () => ({ rows: [] }) } as unknown as pg.Pool;
  const node = (mempool: readonly string[]): Rpc => ({
    call: async () => {
      throw new Error('not asked');
    },
    batch: async <T>(calls: readonly RpcCall[]) =>
      calls.map((c) => {
        const [hash] = (c.params ?? []) as [string];
        if (c.method === 'getrawtransaction') return { txid: hash, vin: [], vout: [], blockhash: `block-of-${hash}` } as T;
        if (c.method === 'getblockheader') return new RpcError('getblockheader', -5, 'Block not found');
        if (c.method === 'getmempoolentry') return mempool.includes(hash) ? ({} as T) : new RpcError('getmempoolentry', -5, 'Transaction not in mempool');
        return new RpcError(c.method, -32601, 'Method not found');
      }),
  });

  it('answers DROPPED when the mempool lacks it too, and waiting (SEEN without a block) when it has it', async () => {
    const statuses = await transferStatus(noOwnTransactions, node(['aa']), 'LITECOIN', [
      { txHash: 'aa', outputIndex: 0 },
      { txHash: 'bb', outputIndex: 1 },
    ]);
    expect(statuses.get('aa:0')).toEqual({ state: 'SEEN', blockHeight: null, confirmations: 0 });
    expect(statuses.get('bb:1')).toEqual({ state: 'DROPPED' });
  });
});
