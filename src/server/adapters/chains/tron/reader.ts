/**
 * Reading TRON: blocks after the cursor (block-scan.ts), TRX transfers (TransferContract) and TRC-20 Transfer
 * events of the configured tokens from the block's transaction infos, to the custody's deposit addresses; status
 * by transaction id from its transaction info (confirmations, the fee it burnt, FAILED when the call reverted).
 */
import type pg from 'pg';
import { scanBlocks, type BlockSource } from '../block-scan.ts';
import { transferKey, type ChainPort, type ChainTransfer, type TransferStatus } from '../port.ts';
import type { TronApi, TronBlock, TronTransactionInfo } from './api.ts';
import { fromHexAddress, TRANSFER_TOPIC, word } from './codec.ts';
import type { TronStore } from './store.ts';
import { unitsOf } from '../../../../lib/money.ts';

/** A first scan (no cursor) starts this many blocks below the tip: one day of 3-second blocks. */
export const INITIAL_LOOKBACK_BLOCKS = 28_800;
/** Deeper than TRON's solidification (19 blocks) and any required confirmations. */
const REWIND_DEPTH = 40;

type Candidate = Omit<ChainTransfer, 'network'>;

/** `tokens`: hex contract address (41…, lower case) → currency; `hotWallet` the hot wallet's address. */
export function createTronReader(pool: pg.Pool, api: TronApi, context: { tokens: ReadonlyMap<string, string>; store: TronStore; hotWallet: () => Promise<string> }): Pick<ChainPort, 'scan' | 'status'> {
  const ours = async (addresses: string[]): Promise<Set<string>> => {
    if (addresses.length === 0) return new Set();
    const result = await pool.query<{ address: string }>(`SELECT address FROM deposit_addresses WHERE network = 'TRON' AND address = ANY($1::text[])`, [[...new Set(addresses)]]);
    return new Set(result.rows.map((r) => r.address));
  };

  const blockAt = async (height: number) => {
    const block = await api.blockByNum(height);
    if (!block) throw new Error(`TRON block ${height} is not on the node`);
    const found = [...trxTransfers(block)];
    if ((block.transactions ?? []).some((tx) => tx.raw_data.contract[0]?.type === 'TriggerSmartContract')) {
      found.push(...tokenTransfers(await api.transactionInfosOfBlock(height), context.tokens));
    }
    const mine = await ours(found.map((t) => t.toAddress));
    const hot = await context.hotWallet();
    // The hot wallet's own transfers to deposit addresses (gas top-ups) are the custody's, not deposits.
    const transfers = found.filter((t) => mine.has(t.toAddress) && t.fromAddress !== hot).map((t): ChainTransfer => ({ ...t, network: 'TRON', blockHeight: height }));
    return { block: { height, hash: block.blockID }, transfers };
  };

  return {
    async scan(_network, cursor, limit) {
      const tip = (await api.nowBlock()).block_header.raw_data.number;
      const source: BlockSource = {
        tipHeight: async () => tip,
        hashAt: async (height) => (height > tip ? undefined : (await api.blockByNum(height))?.blockID),
        blockAt,
      };
      return scanBlocks(source, cursor, { startHeight: Math.max(1, tip - INITIAL_LOOKBACK_BLOCKS), limit: Math.max(1, Math.min(limit, 100)), rewindDepth: REWIND_DEPTH });
    },

    async status(_network, refs) {
      const statuses = new Map<string, TransferStatus>();
      if (refs.length === 0) return statuses;
      const head = (await api.nowBlock()).block_header.raw_data;
      for (const txHash of new Set(refs.map((r) => r.txHash))) {
        const status = await statusOf(txHash, head);
        if (!status) continue;
        for (const ref of refs) if (ref.txHash === txHash) statuses.set(transferKey(ref), status);
      }
      return statuses;
    },
  };

  /**
   * Undefined: not on the chain yet, and it may still be (one of ours that has not expired): the worker sends it,
   * or waits for it. DROPPED only when it can never be: ours past its expiration by the chain's own clock, or a
   * deposit no block has any longer.
   */
  async function statusOf(txHash: string, head: { number: number; timestamp: number }): Promise<TransferStatus | undefined> {
    const info = await api.transactionInfo(txHash);
    if (info.blockNumber !== undefined) return minedStatus(info, info.blockNumber, head.number);
    if (await api.pendingTransaction(txHash)) return { state: 'SEEN', blockHeight: null, confirmations: 0 };
    const kept = await context.store.byHash(txHash);
    if (kept && head.timestamp <= kept.expiresAt) return undefined;
    // An id the node knows in a block but has no info for yet: seen, not confirmed.
    if (await api.transactionById(txHash)) return { state: 'SEEN', blockHeight: null, confirmations: 0 };
    return { state: 'DROPPED' };
  }
}

function minedStatus(info: TronTransactionInfo, blockHeight: number, tip: number): TransferStatus {
  const fee = unitsOf<'TRX'>(BigInt(info.fee ?? 0));
  const result = info.receipt?.result;
  if (info.result === 'FAILED' || (result !== undefined && result !== 'SUCCESS')) {
    const message = info.resMessage ? Buffer.from(info.resMessage, 'hex').toString('utf8') : '';
    return { state: 'FAILED', blockHeight, fee, reason: [result ?? 'FAILED', message].filter(Boolean).join(': ') };
  }
  return { state: 'SEEN', blockHeight, confirmations: Math.max(0, tip - blockHeight + 1), fee };
}

/** TRX sent by a TransferContract that succeeded; one contract per transaction, so output 0. */
function* trxTransfers(block: TronBlock): Generator<Candidate> {
  for (const tx of block.transactions ?? []) {
    const contract = tx.raw_data.contract[0];
    if (contract?.type !== 'TransferContract' || (tx.ret?.[0]?.contractRet ?? 'SUCCESS') !== 'SUCCESS') continue;
    const value = contract.parameter.value as { owner_address?: string; to_address?: string; amount?: number };
    if (!value.to_address || !value.amount) continue;
    yield { txHash: tx.txID, outputIndex: 0, currency: 'TRX', fromAddress: value.owner_address ? fromHexAddress(value.owner_address) : null, toAddress: fromHexAddress(value.to_address), amount: unitsOf(BigInt(value.amount)), blockHeight: null };
  }
}

/** Transfer events of the configured tokens in transactions that succeeded; the output is the log's index. */
function* tokenTransfers(infos: TronTransactionInfo[], tokens: ReadonlyMap<string, string>): Generator<Candidate> {
  for (const info of infos) {
    if (!info.id || info.result === 'FAILED' || (info.receipt?.result ?? 'SUCCESS') !== 'SUCCESS') continue;
    for (const [index, log] of (info.log ?? []).entries()) {
      const currency = tokens.get(`41${log.address.toLowerCase().replace(/^41(?=[0-9a-f]{40}$)/, '')}`);
      const [topic, from, to] = log.topics;
      if (!currency || log.topics.length !== 3 || topic?.toLowerCase() !== TRANSFER_TOPIC || !from || !to) continue;
      yield { txHash: info.id, outputIndex: index, currency, fromAddress: fromHexAddress(from.slice(24)), toAddress: fromHexAddress(to.slice(24)), amount: unitsOf(word(log.data)), blockHeight: null };
    }
  }
}
