/**
 * Reading Ethereum: deposits by walking blocks (native ETH: transactions whose `to` is a custody address) and by
 * `Transfer` logs of the configured tokens whose recipient is one, asked in bounded block ranges; `scanBlocks`
 * keeps the cursor (height:hash) and reports reorganisations. A transfer's output index is 0 for native ETH and
 * 1 + the log's position inside its transaction for a token: unlike the block's log index, that does not change
 * when a reorganisation mines the transaction in another block, so one transfer is always one deposit.
 */
import {
  BlockNotFoundError,
  getAddress,
  parseAbiItem,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Address,
  type Hash,
  type Log,
  type TransactionReceipt,
} from 'viem';
import { scanBlocks, type BlockSource } from '../block-scan.ts';
import { BroadcastRejectedError, transferKey, type ChainPort, type ChainTransfer, type TransferStatus } from '../port.ts';
import { createEvmAddressSet, custodyAddresses, type EvmContext } from './context.ts';
import { findSigned } from './nonces.ts';
import { sendRaw } from './sender.ts';
import { unitsOf } from '../../../../lib/money.ts';

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
/** Blocks read per scan call, and per `eth_getLogs` range. */
const MAX_BLOCKS = 50;
/** Recipients per `eth_getLogs` call (their topics are OR-ed; nodes limit the request's size). */
const ADDRESSES_PER_QUERY = 200;
/**
 * Past this many custody addresses, a range's `Transfer` logs of the tokens are asked for all at once and matched here:
 * a million addresses were 5,000 filtered calls per range, a mainnet token's logs over MAX_BLOCKS are one.
 */
const FILTERED_UP_TO = 5 * ADDRESSES_PER_QUERY;

type TransferLog = Log<bigint, number, false, typeof TRANSFER, true>;

export function createEvmReader(context: EvmContext): Pick<ChainPort, 'scan' | 'status'> {
  const { client } = context;
  const deposits = createEvmAddressSet(context.pool);
  return {
    async scan(_network, cursor, limit) {
      await context.chainId();
      // The tip before the addresses: every block read was mined before this scan knew its addresses, so an address
      // handed out meanwhile is looked for in every block after it (the next scan's).
      const tip = Number(await client.getBlockNumber());
      await deposits.refresh();
      const hot = context.keys.hotAddress();
      const addresses = {
        find: (lower: string) => (lower === hot.toLowerCase() ? hot : deposits.find(lower)),
        // Few: asked by recipient (the list read again, it is short).
        recipients: deposits.size < FILTERED_UP_TO ? [...(await custodyAddresses(context)).values()] : undefined,
      };
      const rewindDepth = Math.max(2 * context.confirmations, 32);
      // A first scan starts a little below the tip: the custody's addresses are newer than that.
      const startHeight = cursor === null ? Math.max(0, tip - rewindDepth) : 0;
      return scanBlocks(blockSource(context, addresses, tip), cursor, { startHeight, limit: Math.min(limit, MAX_BLOCKS), rewindDepth });
    },

    async status(_network, refs) {
      await context.chainId();
      const statuses = new Map<string, TransferStatus>();
      if (refs.length === 0) return statuses;
      const tip = Number(await client.getBlockNumber());
      for (const hash of new Set(refs.map((r) => r.txHash))) {
        const status = await statusOf(context, hash as Hash, tip);
        for (const ref of refs.filter((r) => r.txHash === hash)) statuses.set(transferKey(ref), status);
      }
      return statuses;
    },
  };
}

/**
 * Mined: SEEN with confirmations and the fee paid (FAILED when it reverted). In the node's mempool: SEEN without a
 * block. Neither: DROPPED, except for a transaction of ours whose nonce is still unused: it can still be mined, so it
 * is handed to the node again (the same signed bytes: at most one transaction per nonce is ever mined) and reported
 * waiting, SEEN without a block. A worker that died after signing thus has it sent once, and one the node evicted
 * (underpriced) waits for its replacement by fee instead of failing while it could still be mined.
 */
async function statusOf(context: EvmContext, hash: Hash, tip: number): Promise<TransferStatus> {
  const { client } = context;
  const mined = await minedStatus(context, hash, tip);
  if (mined) return mined;
  const pending = await client.getTransaction({ hash }).catch((error: unknown) => {
    if (error instanceof TransactionNotFoundError) return undefined;
    throw error;
  });
  if (pending) return { state: 'SEEN', blockHeight: null, confirmations: 0 };
  const ours = await findSigned(context.pool, { txHash: hash });
  if (!ours) return { state: 'DROPPED' };
  // Its nonce used means one transaction of that nonce was mined: maybe this one, between the lookups above (or on a
  // backend of the node that was behind). Asked again before it is called DROPPED, which fails a withdrawal.
  const used = await client.getTransactionCount({ address: ours.fromAddress as Address, blockTag: 'latest' });
  if (BigInt(used) > ours.nonce) return (await minedStatus(context, hash, tip)) ?? { state: 'DROPPED' };
  try {
    await sendRaw(context, ours.rawTx);
  } catch (error) {
    // Its nonce was taken meanwhile: it can never be mined, unless this one took it.
    if (error instanceof BroadcastRejectedError) return (await minedStatus(context, hash, tip)) ?? { state: 'DROPPED' };
    // Refused for now (underpriced, funds short): it waits, and is replaced by fee or sent again later.
  }
  return { state: 'SEEN', blockHeight: null, confirmations: 0 };
}

/** The status of a mined transaction from its receipt (FAILED when it reverted), or undefined when none is found. */
async function minedStatus(context: EvmContext, hash: Hash, tip: number): Promise<TransferStatus | undefined> {
  const receipt = await context.client.getTransactionReceipt({ hash }).catch((error: unknown) => {
    if (error instanceof TransactionReceiptNotFoundError) return undefined;
    throw error;
  });
  if (!receipt) return undefined;
  const blockHeight = Number(receipt.blockNumber);
  const fee = unitsOf(receipt.gasUsed * receipt.effectiveGasPrice);
  if (receipt.status === 'reverted') return { state: 'FAILED', blockHeight, fee, reason: 'the transaction reverted' };
  return { state: 'SEEN', blockHeight, confirmations: Math.max(0, tip - blockHeight + 1), fee };
}

function blockSource(context: EvmContext, addresses: { find: (lower: string) => Address | undefined; recipients: Address[] | undefined }, tip: number): BlockSource {
  const { client } = context;
  const contracts = [...context.tokenContract.values()];
  const { recipients } = addresses;
  const hot = context.keys.hotAddress().toLowerCase();
  let logs: { from: number; to: number; byBlock: Map<number, TransferLog[]> } | undefined;

  const transferLogs = async (range: { fromBlock: bigint; toBlock: bigint } | { blockHash: Hash }): Promise<TransferLog[]> => {
    if (contracts.length === 0) return [];
    if (!recipients) return client.getLogs({ address: contracts, event: TRANSFER, strict: true, ...range });
    const found: TransferLog[] = [];
    for (let i = 0; i < recipients.length; i += ADDRESSES_PER_QUERY) {
      const to = recipients.slice(i, i + ADDRESSES_PER_QUERY);
      found.push(...(await client.getLogs({ address: contracts, event: TRANSFER, args: { to }, strict: true, ...range })));
    }
    return found;
  };

  const logsAt = async (height: number, blockHash: Hash): Promise<TransferLog[]> => {
    if (!logs || height < logs.from || height > logs.to) {
      const to = Math.min(height + MAX_BLOCKS - 1, tip);
      const byBlock = Map.groupBy(await transferLogs({ fromBlock: BigInt(height), toBlock: BigInt(to) }), (log) => Number(log.blockNumber));
      logs = { from: height, to, byBlock };
    }
    const inRange = logs.byBlock.get(height) ?? [];
    // The range was asked before this block was read: if the chain moved meanwhile, ask by the block's own hash.
    return inRange.every((log) => log.blockHash === blockHash) ? inRange : transferLogs({ blockHash });
  };

  return {
    tipHeight: () => Promise.resolve(tip),
    async hashAt(height) {
      try {
        return (await client.getBlock({ blockNumber: BigInt(height) })).hash;
      } catch (error) {
        if (error instanceof BlockNotFoundError) return undefined;
        throw error;
      }
    },
    async blockAt(height) {
      const block = await client.getBlock({ blockNumber: BigInt(height), includeTransactions: true });
      const transfers: ChainTransfer[] = [];
      for (const tx of block.transactions) {
        const to = tx.to && addresses.find(tx.to.toLowerCase());
        // The hot wallet's own transfers to deposit addresses (gas top-ups) are the custody's, not deposits.
        if (!to || tx.value === 0n || tx.from.toLowerCase() === hot) continue;
        transfers.push({ network: 'ETHEREUM', txHash: tx.hash, outputIndex: 0, currency: 'ETH', fromAddress: getAddress(tx.from), toAddress: to, amount: unitsOf(tx.value), blockHeight: height });
      }
      const receipts = new Map<Hash, Promise<TransactionReceipt>>();
      for (const log of await logsAt(height, block.hash)) {
        const currency = context.tokenCurrency.get(log.address.toLowerCase());
        const to = addresses.find(log.args.to.toLowerCase());
        if (!currency || !to || log.args.value === 0n || log.args.from.toLowerCase() === hot) continue;
        let receipt = receipts.get(log.transactionHash);
        if (!receipt) {
          receipt = client.getTransactionReceipt({ hash: log.transactionHash });
          receipts.set(log.transactionHash, receipt);
        }
        // Reverted transactions emit no logs: every log here belongs to a transaction that succeeded.
        const position = (await receipt).logs.findIndex((l) => l.logIndex === log.logIndex);
        if (position < 0) continue;
        transfers.push({
          network: 'ETHEREUM',
          txHash: log.transactionHash,
          outputIndex: position + 1,
          currency,
          fromAddress: getAddress(log.args.from),
          toAddress: to,
          amount: unitsOf(log.args.value),
          blockHeight: height,
        });
      }
      return { block: { height, hash: block.hash }, transfers };
    },
  };
}
